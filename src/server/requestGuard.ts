/**
 * Who may talk to the listener, checked before any routing:
 *
 * - `Host` against `allowedHosts` — a page on evil.example that rebinds its DNS name to
 *   127.0.0.1 still sends `Host: evil.example` (DNS rebinding defence, MCP 2025-06-18
 *   basic/transports §"Security Warning");
 * - `Origin` against loopback origins and `allowedOrigins` — the spec's "servers MUST validate
 *   the Origin header"; a request without `Origin` is not from a browser page and passes. A
 *   loopback origin passes this check but drives nothing unless listed (`pageRefusal`);
 * - `Authorization: Bearer` against `bearerTokens`, compared in constant time (every token is
 *   hashed to the same length and compared with `timingSafeEqual`, and every token is tried,
 *   so neither length nor position leaks). The caller exempts `/healthz` (probes need no
 *   secret) and CORS preflights (browsers never send credentials on them).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { isIPv6 } from "node:net";
import type { IncomingHttpHeaders } from "node:http";
import { LOOPBACK_HOSTS } from "../config/defaults.js";
import { JSONRPC } from "../errors/jsonRpcCodes.js";
import { headerValue } from "../transports/host/httpReplies.js";
import { normalizeOrigin, type ResolvedFrontendOptions } from "./frontendOptions.js";

export interface Refusal {
  readonly status: 401 | 403 | 415;
  readonly code: number;
  readonly message: string;
  readonly headers: Record<string, string>;
}

const LOOPBACK_NAMES = new Set(LOOPBACK_HOSTS);

export function checkRequest(
  headers: IncomingHttpHeaders,
  options: ResolvedFrontendOptions,
  needsAuth: boolean,
): Refusal | null {
  const host = headerValue(headers.host);
  if (!hostAllowed(host, options.allowedHosts)) {
    const shown = JSON.stringify((host ?? "").slice(0, 200));
    if (host !== undefined && !options.allowedHosts.includes("*") && hostName(host) === undefined)
      return forbidden(`Host header ${shown} is not a valid host[:port]`);
    return forbidden(`Host header ${shown} is not allowed; add it to allowedHosts`);
  }
  const origin = headerValue(headers.origin);
  if (origin !== undefined && !originAllowed(origin, options)) {
    return forbidden(`Origin ${JSON.stringify(origin)} is not allowed; add it to allowedOrigins`);
  }
  if (
    needsAuth &&
    options.bearerTokens.length > 0 &&
    !bearerAccepted(headerValue(headers.authorization), options.bearerTokens)
  ) {
    const given = headers.authorization !== undefined;
    return {
      status: 401,
      code: JSONRPC.SERVER_ERROR,
      message: given
        ? "Unauthorized: the bearer token is not valid"
        : "Unauthorized: send Authorization: Bearer <token> (auth.bearerTokens)",
      headers: {
        "www-authenticate": given
          ? 'Bearer realm="mcp-normalizer", error="invalid_token"'
          : 'Bearer realm="mcp-normalizer"',
      },
    };
  }
  return null;
}

/**
 * The owner a request's session is bound to: the SHA-256 digest of the bearer token it carries,
 * when the listener has tokens (the request has already been checked: the token is valid);
 * undefined without auth (sessions are then bound to nobody).
 */
export function bearerOwner(headers: IncomingHttpHeaders, options: ResolvedFrontendOptions): Buffer | undefined {
  if (options.bearerTokens.length === 0) return undefined;
  return digest(presentedToken(headerValue(headers.authorization)) ?? "");
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
function presentedToken(authorization: string | undefined): string | undefined {
  return /^bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? "")?.[1];
}

/**
 * Whether the request carries a valid bearer token — always true when no tokens are configured
 * (then every client may see everything). `/healthz` shows its details only to these.
 */
export function isAuthorized(headers: IncomingHttpHeaders, options: ResolvedFrontendOptions): boolean {
  return options.bearerTokens.length === 0 || bearerAccepted(headerValue(headers.authorization), options.bearerTokens);
}

/**
 * The host name of a `Host` header value (`name`, `name:port`, `[v6]`, `[v6]:port`), lowercased;
 * undefined for anything else (RFC 9110 §7.2 / RFC 3986 §3.2.2: a registered name of letters,
 * digits, `-` and `.`, an IPv4 address or a bracketed IPv6 address, then at most a port of 1–5
 * digits up to 65535). Nothing is trimmed or guessed: `localhost:`, `localhost:x`,
 * `[::1]junk`, `a@localhost`, `localhost ` and `localhost:8808:1` are not host names.
 */
export function hostName(host: string): string | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::(\d{1,5}))?$/.exec(host);
  if (match === null) return undefined;
  const name = match[1]!.toLowerCase();
  if (match[2] !== undefined && Number(match[2]) > 65535) return undefined;
  if (name.startsWith("[") && !isIPv6(name.slice(1, -1))) return undefined;
  return name;
}

function hostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  if (allowed.includes("*")) return true;
  if (host === undefined) return false;
  const name = hostName(host);
  if (name === undefined) return false;
  return allowed.includes(name) || allowed.includes(host.toLowerCase());
}

function originAllowed(origin: string, options: ResolvedFrontendOptions): boolean {
  const normalized = normalizeOrigin(origin);
  if (normalized === null) return false;
  if (options.allowedOrigins.has(normalized)) return true;
  if (!options.allowLoopbackOrigins) return false;
  const url = new URL(normalized);
  return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK_NAMES.has(url.hostname);
}

/**
 * A browser page whose origin is not in `allowedOrigins` (a loopback one passes the Origin check)
 * may not drive the proxy. Browsers let any page open a WebSocket or an event stream
 * (`EventSource`: a GET that opens an SSE session), and send a POST whose body is `text/plain`
 * or form data, to any address without asking the server first (no CORS preflight): such a
 * stream is refused, and such a POST unless its body is declared JSON — which a browser sends to
 * another origin only after a preflight, and only listed origins pass one. Requests without
 * `Origin` (not from a page: SDK clients, curl) are not concerned.
 */
export function pageRefusal(
  headers: IncomingHttpHeaders,
  options: ResolvedFrontendOptions,
  opens: "stream" | "post",
): Refusal | null {
  const origin = headerValue(headers.origin);
  if (origin === undefined) return null;
  const normalized = normalizeOrigin(origin);
  if (normalized !== null && options.allowedOrigins.has(normalized)) return null;
  const shown = JSON.stringify(origin.slice(0, 200));
  if (opens === "stream")
    return forbidden(
      `A stream opened by a browser page (Origin ${shown}) is refused unless its origin is in allowedOrigins: ` +
        "browsers let any page open a WebSocket or an event stream",
    );
  if (isJsonType(headerValue(headers["content-type"]))) return null;
  return {
    status: 415,
    code: JSONRPC.SERVER_ERROR,
    message: `A POST from a browser page (Origin ${shown}) must send Content-Type: application/json`,
    headers: {},
  };
}

/**
 * A POST body sent with a content coding (`Content-Encoding: gzip`): bodies are read as sent, so
 * it is refused with 415 and `Accept-Encoding: identity` (RFC 7694) — not read as JSON that is
 * broken, nor, when the header is wrong, as if it were absent.
 */
export function contentCodingRefusal(headers: IncomingHttpHeaders): Refusal | null {
  const coding = headerValue(headers["content-encoding"])?.trim().toLowerCase();
  if (coding === undefined || coding === "" || coding === "identity") return null;
  return {
    status: 415,
    code: JSONRPC.SERVER_ERROR,
    message: `Content-Encoding ${JSON.stringify(coding.slice(0, 100))} is not accepted: send the body uncompressed`,
    headers: { "accept-encoding": "identity" },
  };
}

function isJsonType(contentType: string | undefined): boolean {
  return contentType?.split(";")[0]?.trim().toLowerCase() === "application/json";
}

function bearerAccepted(authorization: string | undefined, tokens: readonly string[]): boolean {
  const presented = presentedToken(authorization);
  const given = digest(presented ?? "");
  let accepted = false;
  for (const token of tokens) {
    // No short-circuit: the time taken does not say which token matched, or whether one did.
    if (timingSafeEqual(given, digest(token)) && presented !== undefined) accepted = true;
  }
  return accepted;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

function forbidden(message: string): Refusal {
  return { status: 403, code: JSONRPC.SERVER_ERROR, message, headers: {} };
}
