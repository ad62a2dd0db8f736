/**
 * The little a host transport must know about a message to route it: is it a request (it gets
 * an answer on the stream it came from), a response (it answers one), or neither. Messages are
 * read as plain JSON values and never trusted to have the right shape.
 */
import type { JSONRPCMessage } from "../types.js";

export type RequestId = string | number;

function field(message: unknown, name: string): unknown {
  return typeof message === "object" && message !== null ? (message as Record<string, unknown>)[name] : undefined;
}

function isId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

/** The id of a request (a `method` and an `id`), else undefined. */
export function requestIdOf(message: JSONRPCMessage): RequestId | undefined {
  const id = field(message, "id");
  return typeof field(message, "method") === "string" && isId(id) ? id : undefined;
}

/** The id a response answers (no `method`, an `id`), else undefined. */
export function responseIdOf(message: JSONRPCMessage): RequestId | undefined {
  const id = field(message, "id");
  return typeof field(message, "method") !== "string" && isId(id) ? id : undefined;
}

export function methodOf(message: JSONRPCMessage): string | undefined {
  const method = field(message, "method");
  return typeof method === "string" ? method : undefined;
}

/** `1` and `"1"` are different JSON-RPC ids; map keys must keep them apart. */
export function idKey(id: RequestId): string {
  return typeof id === "number" ? `n:${id}` : `s:${id}`;
}
