/**
 * Reading JSON-RPC 2.0 messages as they come off the wire, without trusting their shape:
 * every helper accepts any value and answers false/undefined for anything malformed. The one
 * place transports and the proxy learn what a message is.
 */
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";
import { JSONRPC } from "../errors/jsonRpcCodes.js";
import { RawJsonValue } from "../wire/rawJson.js";
import { idTextOf } from "./idAsWritten.js";

export type RequestId = string | number;

type Obj = Record<string, unknown>;

export function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

/** A request: a method and an id. */
export function isRequest(msg: unknown): msg is Obj & { method: string; id: RequestId } {
  return isObj(msg) && typeof msg.method === "string" && isRequestId(msg.id);
}

export function isNotification(msg: unknown): msg is Obj & { method: string } {
  return isObj(msg) && typeof msg.method === "string" && !("id" in msg);
}

/** A response: an id, no method, and a result or an error. */
export function isResponse(msg: unknown): msg is Obj & { id: RequestId } {
  return isObj(msg) && typeof msg.method !== "string" && isRequestId(msg.id) && ("result" in msg || "error" in msg);
}

/** The id of a request (a `method` and an `id`), else undefined. */
export function requestIdOf(msg: unknown): RequestId | undefined {
  return isRequest(msg) ? msg.id : undefined;
}

/** The id a message without a method carries (a response, however malformed), else undefined. */
export function responseIdOf(msg: unknown): RequestId | undefined {
  if (!isObj(msg) || typeof msg.method === "string") return undefined;
  if (isRequestId(msg.id)) return msg.id;
  // An id kept as the text it arrived in (idAsWritten.ts): the number it reads as.
  return msg.id instanceof RawJsonValue ? (JSON.parse(msg.id.text) as number) : undefined;
}

/** Ids of the requests in a message or a batch. */
export function requestIdsOf(message: unknown): RequestId[] {
  const items: unknown[] = Array.isArray(message) ? message : [message];
  const ids: RequestId[] = [];
  for (const item of items) if (isRequest(item)) ids.push(item.id);
  return ids;
}

/** The request a `notifications/cancelled` names, if `msg` is one (a single message, not a batch). */
export function cancelledRequestOf(msg: unknown): RequestId | undefined {
  if (!isNotification(msg) || msg.method !== "notifications/cancelled" || !isObj(msg.params)) return undefined;
  const id = msg.params.requestId;
  if (isRequestId(id)) return id;
  // An id kept as the text it was written in (a cancel the proxy sends on a timeout): the number it reads as.
  return id instanceof RawJsonValue ? (JSON.parse(id.text) as number) : undefined;
}

/** The method of a single request or notification. */
export function methodOf(msg: unknown): string | undefined {
  return isObj(msg) && typeof msg.method === "string" ? msg.method : undefined;
}

/** Ids of the two directions are separate spaces, and `1` and `"1"` are different ids. */
export function idKey(id: RequestId): string {
  return typeof id === "number" ? `n:${id}` : `s:${id}`;
}

/** The id an `idKey` was made from. */
export function keyId(key: string): RequestId {
  return key.startsWith("n:") ? Number(key.slice(2)) : key.slice(2);
}

export function errorResponse(id: RequestId, code: number, message: string, data?: unknown): JSONRPCMessage {
  const error: Obj = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: "2.0", id, error } as JSONRPCMessage;
}

export function progressToken(msg: Obj): RequestId | undefined {
  const params = msg.params;
  if (!isObj(params) || !isObj(params._meta)) return undefined;
  const token = params._meta.progressToken;
  return isRequestId(token) ? token : undefined;
}

/** What an upstream transport passes with an error answer it built itself (`UpstreamMessageExtra`). */
export const FAILED_REQUEST: MessageExtraInfo & { failedRequest: true } = Object.freeze({ failedRequest: true });

/** The message is an error answer the upstream transport built itself: the server gave none. */
export function isFailedRequest(extra: MessageExtraInfo | undefined): boolean {
  return (extra as { failedRequest?: unknown } | undefined)?.failedRequest === true;
}

/** The request an upstream transport said a message belongs to (`UpstreamMessageExtra`), if it said. */
export function relatedRequestOf(extra: MessageExtraInfo | undefined): RequestId | undefined {
  const id = (extra as { relatedRequestId?: unknown } | undefined)?.relatedRequestId;
  return isRequestId(id) ? id : undefined;
}

/**
 * A request a server cannot take, as the error its host gets at once: one that is not JSON-RPC 2.0
 * as MCP reads it (another `jsonrpc`, an id with a fraction: MCP's ids are strings and integers;
 * `params` that is not an object or an array, a member besides the four of §4 — the TypeScript
 * SDK reads a request strictly, `__proto__` included: Invalid Request), or whose `params` is an
 * array (MCP names its params) or whose `params._meta` is not an object or carries a
 * `progressToken` that is not a string or an integer (MCP's `ProgressToken`: Invalid params). A
 * server drops such a request without an answer (the TypeScript SDK's reader does), and the host
 * would wait for `limits.requestTimeoutMs` to learn nothing.
 */
export function malformedRequest(
  msg: Record<string, unknown> & { id: RequestId },
): Record<string, unknown> | undefined {
  const why =
    msg.jsonrpc !== "2.0"
      ? `"jsonrpc" must be "2.0", not ${given(msg.jsonrpc)}`
      : typeof msg.id === "number" && !integerAsWritten(msg as { id: number })
        ? `"id" must be a string or an integer, not ${idTextOf(msg as { id: number })}`
        : "params" in msg && typeof msg.params !== "object"
          ? `"params" must be an object or an array, not ${given(msg.params)}`
          : msg.params === null
            ? `"params" must be an object or an array, not null`
            : otherMember(msg);
  if (why !== undefined) return errorResponse(msg.id, JSONRPC.INVALID_REQUEST, `Invalid Request: ${why}`);
  // JSON-RPC allows params by position; MCP's are named, and the official servers drop an array
  // unanswered (an `initialize` so dropped would read as a server hung at start).
  if (Array.isArray(msg.params))
    return errorResponse(msg.id, JSONRPC.INVALID_PARAMS, 'Invalid params: MCP\'s "params" is an object, not an array');
  // `null` is let through: Python's SDK reads it as absent, and a server of it takes the request.
  const meta = isObj(msg.params) ? msg.params._meta : undefined;
  if (meta === undefined || meta === null) return undefined;
  const token = isObj(meta) ? meta.progressToken : undefined;
  const metaWhy = !isObj(meta)
    ? `"params._meta" must be an object, not ${given(meta)}`
    : token !== undefined && token !== null && !isProgressToken(token)
      ? `"params._meta.progressToken" must be a string or an integer, not ${given(token)}`
      : undefined;
  return metaWhy === undefined
    ? undefined
    : errorResponse(msg.id, JSONRPC.INVALID_PARAMS, `Invalid params: ${metaWhy}`);
}

/** Why a request has a member JSON-RPC 2.0 §4 does not name, if it has one (most have four: a short walk). */
function otherMember(msg: Record<string, unknown>): string | undefined {
  for (const key in msg)
    if (key !== "jsonrpc" && key !== "id" && key !== "method" && key !== "params")
      return `a request has only "jsonrpc", "id", "method" and "params", not ${given(key)}`;
  return undefined;
}

/**
 * Whether a numeric id is an integer as its sender wrote it: past 2^53 `JSON.parse` rounds
 * `9007199254740993.5` to an integer, so such an id is judged by its text (digits after the point,
 * shifted by its exponent, all zero).
 */
function integerAsWritten(msg: { id: number }): boolean {
  if (!Number.isInteger(msg.id)) return false;
  if (Number.isSafeInteger(msg.id)) return true;
  const parts = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(idTextOf(msg));
  if (parts === null) return true;
  const digits = parts[1]! + (parts[2] ?? "");
  const point = parts[1]!.length + Number(parts[3] ?? 0);
  return /^0*$/.test(digits.slice(Math.max(0, point)));
}

function isProgressToken(value: unknown): boolean {
  return typeof value === "string" || Number.isInteger(value);
}

/**
 * What a member holds, for an error: a short string or a scalar as written, else its kind — never
 * the whole of a long string or a nested value (written out, one nested deep enough would
 * overflow the stack, and the error would never be sent).
 */
function given(value: unknown): string {
  if (value === undefined) return "missing";
  if (typeof value === "string")
    return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length} characters`;
  if (Array.isArray(value)) return "an array";
  if (value !== null && typeof value === "object") return "an object";
  return String(value);
}
