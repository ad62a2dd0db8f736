/**
 * Reading what a host's HTTP request says about itself: which response form it accepts. (Which
 * client it comes from: clientAddress.ts; which of its headers go upstream: ../mcpHeaders.ts.)
 */
import { parseMediaType } from "../../normalize/mediaType.js";

/**
 * Which forms of answer a host's `Accept` allows for a POSTed request: streamable HTTP lets the
 * server answer with an SSE stream or one JSON body (MCP 2025-06-18 basic/transports §"Sending
 * Messages to the Server"), and the client MUST support both. "either" lets the session choose
 * (it answers JSON when nothing else is sent first, see streamableHttpHost.ts); "sse" and "json"
 * are what a host accepting only one of them gets. No `Accept` at all accepts any media type
 * (RFC 9110 §12.5.1), as does the range of all types. Media ranges are parsed, not substring
 * matched; a range with `q=0` is a refusal. A header allowing neither gets SSE.
 */
export function responseForm(accept: string | undefined): "sse" | "json" | "either" {
  if (accept === undefined || accept.trim() === "") return "either";
  const { json, sse } = acceptedForms(accept);
  if (json && sse) return "either";
  return json ? "json" : "sse";
}

/**
 * Whether a host's `Accept` lets a GET be answered with an SSE stream: the spec's client MUST
 * list `text/event-stream`, and a header that rules it out is answered 406 rather than with a
 * stream the host said it cannot read. No `Accept` at all accepts any media type.
 */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === "") return true;
  return acceptedForms(accept).sse;
}

function acceptedForms(accept: string): { json: boolean; sse: boolean } {
  let json = false;
  let sse = false;
  for (const range of accept.split(",")) {
    const mt = parseMediaType(range.trim());
    if (mt === null) continue;
    const q = mt.params.find(([name]) => name === "q")?.[1];
    if (q !== undefined && Number(q) === 0) continue;
    if (mt.essence === "*/*" || mt.essence === "text/*" || mt.essence === "text/event-stream") sse = true;
    if (mt.essence === "*/*" || mt.essence === "application/json" || mt.essence === "application/*") json = true;
  }
  return { json, sse };
}
