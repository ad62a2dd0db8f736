/**
 * Reading what a host's HTTP request says about itself: which response form it accepts, and
 * which MCP headers the proxy must pass along to the upstream.
 */
import type { IncomingHttpHeaders } from "node:http";
import { parseMediaType } from "../../normalize/mediaType.js";

/**
 * Streamable HTTP lets the server answer a POSTed request with an SSE stream or one JSON body
 * (MCP 2025-06-18 basic/transports §"Sending Messages to the Server"). SSE is the default, since
 * it is the only form that carries progress and server→client requests; JSON is used only when
 * the client accepts JSON and not `text/event-stream`. Media ranges are parsed, not substring
 * matched (STYLE habit 2); a range with `q=0` is a refusal.
 */
export function responseForm(accept: string | undefined): "sse" | "json" {
  if (accept === undefined || accept.trim() === "") return "sse";
  let json = false;
  let sse = false;
  for (const range of accept.split(",")) {
    const mt = parseMediaType(range.trim());
    if (mt === null) continue;
    const q = mt.params.find(([name]) => name === "q")?.[1];
    if (q !== undefined && Number(q) === 0) continue;
    if (mt.essence === "*/*" || mt.essence === "text/*" || mt.essence === "text/event-stream") sse = true;
    if (mt.essence === "application/json" || mt.essence === "application/*") json = true;
  }
  return json && !sse ? "json" : "sse";
}

/**
 * The host's `mcp-*` headers (`mcp-protocol-version`, and in 2026-07-28 `mcp-method`,
 * `mcp-name`, …), which the proxy turns into `ProxySendOptions.forwardHeaders`. Only these:
 * `authorization` and cookies are the proxy's own credentials and must never reach an upstream
 * (issue 5); `mcp-session-id` names the host↔proxy session, not the proxy↔upstream one.
 */
export function forwardableMcpHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith("mcp-") || name === "mcp-session-id" || value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}
