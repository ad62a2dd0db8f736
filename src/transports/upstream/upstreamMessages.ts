/**
 * Small pieces every upstream transport shares: reading request ids from what goes out,
 * building the JSON-RPC error that answers a host when its request cannot reach the upstream
 * (issue 5: "every pending request … gets a JSON-RPC error naming the cause"), and naming an
 * upstream URL in messages without leaking credentials.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Framed } from "../lineFraming.js";
import type { FramingProblem } from "../types.js";

export type RequestId = string | number;

/** Ids of the requests in a message or a batch (responses and notifications have none to answer). */
export function requestIdsOf(message: unknown): RequestId[] {
  const items: unknown[] = Array.isArray(message) ? message : [message];
  const ids: RequestId[] = [];
  for (const item of items) {
    if (typeof item !== "object" || item === null) continue;
    const { id, method } = item as { id?: unknown; method?: unknown };
    if (typeof method === "string" && (typeof id === "string" || typeof id === "number")) ids.push(id);
  }
  return ids;
}

/** The method of a single request or notification, for error messages. */
export function methodOf(message: unknown): string | undefined {
  const method = typeof message === "object" && message !== null ? (message as { method?: unknown }).method : undefined;
  return typeof method === "string" ? method : undefined;
}

/** The id of a response (result or error), if the message is one. */
export function responseIdOf(message: unknown): RequestId | undefined {
  if (typeof message !== "object" || message === null || "method" in message) return undefined;
  const id = (message as { id?: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/** A JSON-RPC error response to deliver to the host in place of the upstream's answer. */
export function errorResponse(id: RequestId, code: number, message: string, data?: Record<string, unknown>): JSONRPCMessage {
  return { jsonrpc: "2.0", id, error: { code, message, ...(data ? { data } : {}) } } as JSONRPCMessage;
}

/**
 * An upstream URL as it may appear in logs and errors: scheme, host and path. Userinfo and the
 * query string are dropped (both commonly carry API keys); header values never appear at all.
 */
export function describeUrl(url: URL | string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return "<invalid URL>";
  }
}

/** The message of an error from `fetch`/sockets, with the cause's code (ECONNREFUSED, …). */
export function networkErrorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const code = typeof cause === "object" && cause !== null ? (cause as { code?: unknown }).code : (error as { code?: unknown }).code;
  const causeMessage = cause instanceof Error ? cause.message : undefined;
  return [error.message, typeof code === "string" ? code : undefined, causeMessage && causeMessage !== error.message ? causeMessage : undefined].filter(Boolean).join(": ");
}

/** Callbacks a transport delivers framing results to. */
export interface FramedTarget {
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  onproblem?: ((problem: FramingProblem) => void) | undefined;
}

export function deliverFramed(target: FramedTarget, framed: Framed): void {
  if (framed.problem) target.onproblem?.(framed.problem);
  else target.onmessage?.(framed.message as JSONRPCMessage);
}

/**
 * The host's headers an HTTP upstream should see (`ProxySendOptions.forwardHeaders`): the
 * `mcp-*` ones (`mcp-protocol-version`, `mcp-method`, `mcp-name`, …), lowercased, verbatim —
 * except `mcp-session-id`: the host's session is with the proxy, not with the upstream. Other
 * host headers (its `Authorization` for the proxy above all) never go upstream.
 */
export function forwardableHeaders(forward: Readonly<Record<string, string>> | undefined): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(forward ?? {})) {
    const lower = name.toLowerCase();
    if (lower.startsWith("mcp-") && lower !== "mcp-session-id") out.push([lower, value]);
  }
  return out;
}
