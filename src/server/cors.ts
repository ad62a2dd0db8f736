/**
 * CORS, only as configured: a browser page may read the listener's answers only when
 * its origin is listed in `allowedOrigins`. Loopback origins pass the Origin check (so local
 * non-browser tools that send one work) but get no CORS grant unless listed; with what a browser
 * sends without asking first — a WebSocket, a `text/plain` POST — refused to them
 * (`pageRefusal`), no page on localhost can drive the proxy from a browser without being named.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { headerValue } from "../transports/host/httpReplies.js";
import { discardBody } from "../transports/host/refuse.js";
import { normalizeOrigin, type ResolvedFrontendOptions } from "./frontendOptions.js";

/** How long a browser may cache a preflight answer, in seconds. */
export const CORS_MAX_AGE_SECONDS = 600;

/** Request headers an MCP host's browser client sends (MCP basic/transports; 2026-07-28 headers). */
const MCP_REQUEST_HEADERS: readonly string[] = [
  "authorization",
  "content-type",
  "accept",
  "last-event-id",
  "mcp-session-id",
  "mcp-protocol-version",
  "mcp-method",
  "mcp-name",
];
const ALLOWED_REQUEST_HEADERS = MCP_REQUEST_HEADERS.join(", ");

/** Response headers a listed page may read (the session id it must send back, where to resume, the version). */
const EXPOSED_HEADERS = "mcp-session-id, mcp-protocol-version, last-event-id, www-authenticate";

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The headers a listed page may send: MCP's, and whatever else its preflight asks for (a page's
 * own, such as an API key header). A page granted CORS is trusted; what it sends beyond MCP's
 * headers is not passed on to an upstream.
 */
function allowedRequestHeaders(asked: string | undefined): string {
  const own = (asked ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => HEADER_NAME.test(name) && !MCP_REQUEST_HEADERS.includes(name));
  return own.length === 0 ? ALLOWED_REQUEST_HEADERS : `${ALLOWED_REQUEST_HEADERS}, ${[...new Set(own)].join(", ")}`;
}

/**
 * Adds the CORS grant to `res` when the request's origin is listed; answers a preflight
 * (`OPTIONS` with `Access-Control-Request-Method`) itself. Returns true when it answered.
 */
export function applyCors(req: IncomingMessage, res: ServerResponse, options: ResolvedFrontendOptions): boolean {
  const origin = headerValue(req.headers.origin);
  const normalized = origin === undefined ? null : normalizeOrigin(origin);
  const granted = normalized !== null && options.allowedOrigins.has(normalized);
  res.setHeader("vary", "Origin");
  if (granted) {
    // The origin as the allow-list holds it (`HTTPS://App.Example:443` → `https://app.example`).
    res.setHeader("access-control-allow-origin", normalized);
    res.setHeader("access-control-expose-headers", EXPOSED_HEADERS);
  }
  if (req.method !== "OPTIONS" || req.headers["access-control-request-method"] === undefined) return false;
  if (granted) {
    res.setHeader("access-control-allow-methods", "GET, POST, DELETE");
    res.setHeader(
      "access-control-allow-headers",
      allowedRequestHeaders(headerValue(req.headers["access-control-request-headers"])),
    );
    res.setHeader("access-control-max-age", String(CORS_MAX_AGE_SECONDS));
  }
  // Without the grant headers the browser refuses the real request; nothing else to say. A
  // preflight has no body: one sent anyway is not read for long (no token is needed to send it).
  discardBody(req, options.closeTimeoutMs);
  res.writeHead(204).end();
  return true;
}
