/**
 * Reading how a server wants to be authorized from its 401 (MCP authorization spec: the
 * `WWW-Authenticate: Bearer resource_metadata=…, scope=…` header), and asking for one.
 */
import { sameOriginRedirects } from "../transports/upstream/sameOriginRedirects.js";
import { extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import type { Challenge, FetchLike } from "./types.js";

export function challengeOf(response: Response): Challenge {
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
  return {
    ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl }),
    ...(scope === undefined ? {} : { scope }),
  };
}

/**
 * A 403 that asks for more scope (`WWW-Authenticate: Bearer error="insufficient_scope",
 * scope="…"`, RFC 6750 §3.1; the MCP authorization spec's step-up): its challenge, else undefined.
 */
export function insufficientScopeOf(response: Response): Challenge | undefined {
  if (response.status !== 403) return undefined;
  const { error } = extractWWWAuthenticateParams(response);
  const challenge = challengeOf(response);
  return error === "insufficient_scope" && challenge.scope !== undefined ? challenge : undefined;
}

/** The scopes of every list given, each once, in the order first seen; undefined when none. */
export function scopeUnion(...lists: Array<string | undefined>): string | undefined {
  const all = new Set(lists.flatMap((list) => list?.split(/\s+/).filter((scope) => scope !== "") ?? []));
  return all.size === 0 ? undefined : [...all].join(" ");
}

/** Whether `wanted` names a scope `held` lacks. */
export function addsScope(wanted: string, held: string | undefined): boolean {
  const have = new Set(held?.split(/\s+/) ?? []);
  return wanted.split(/\s+/).some((scope) => scope !== "" && !have.has(scope));
}

/**
 * How a server is first asked without a token, as its transport opens a session: a streamable
 * HTTP server gets a POST, a legacy SSE server the GET of its event stream (the only method its
 * URL serves: a POST there is answered 404 or 405, never with the 401 that names where to log in).
 */
export type ProbeTransport = "streamable-http" | "sse" | "websocket";

/**
 * Asks the server without a token, as its transport would: a protected server answers 401 with
 * its challenge. Anything else yields `undefined` (no challenge: discovery then tries the
 * well-known URLs).
 */
export async function probeChallenge(
  serverUrl: string,
  fetch: FetchLike,
  headers: Readonly<Record<string, string>> = {},
  transport: ProbeTransport = "streamable-http",
): Promise<Challenge | undefined> {
  return (await probe(serverUrl, fetch, headers, transport)).challenge;
}

/** The same probe, with the status the server answered it with (a login names it when it fails). */
export async function probe(
  serverUrl: string,
  fetch: FetchLike,
  headers: Readonly<Record<string, string>> = {},
  transport: ProbeTransport = "streamable-http",
): Promise<{ status: number; challenge: Challenge | undefined }> {
  const request = new Headers(headers);
  request.delete("authorization");
  let init: RequestInit;
  if (transport === "sse") {
    // The request SseUpstreamTransport opens its stream with; a server that lets it through
    // would start streaming, so only the status and headers are read.
    request.set("accept", "text/event-stream");
    init = { method: "GET", headers: request };
  } else {
    request.set("content-type", "application/json");
    request.set("accept", "application/json, text/event-stream");
    request.set("mcp-protocol-version", LATEST_PROTOCOL_VERSION);
    init = {
      method: "POST",
      headers: request,
      body: JSON.stringify({ jsonrpc: "2.0", id: "mcp-normalizer-auth-probe", method: "ping" }),
    };
  }
  // It carries the configured headers: a redirect is followed within the server's origin only.
  const response = await sameOriginRedirects(fetch)(serverUrl, init);
  await response.body?.cancel().catch(() => {});
  return { status: response.status, challenge: response.status === 401 ? challengeOf(response) : undefined };
}

/** Two authorization server URLs name the same server (parsed; one trailing `/` either way). */
export function sameIssuer(a: string, b: string): boolean {
  const [x, y] = [new URL(a).href.replace(/\/$/, ""), new URL(b).href.replace(/\/$/, "")];
  return x === y;
}
