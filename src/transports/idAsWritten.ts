/**
 * A request id `JSON.parse` could not keep — an integer past 2^53, as an int64 host may send —
 * as the text it arrived in, so an answer the proxy builds for it (a pooled request's, given back
 * its host's id) carries the very id the host sent, not one rounded to another number.
 */
import { memberSpans, skipSpace } from "../wire/jsonText.js";
import { RawJsonValue } from "../wire/rawJson.js";
import type { RequestId } from "./jsonrpc.js";
import { originTextOf } from "./wireOrigin.js";
import { wireSkeletonOf, wireTextOf } from "./wireText.js";

/** The id of `message` as written, when its number is not exact; the id itself otherwise. */
export function idAsWritten(message: { readonly id: RequestId }): RequestId {
  const id = message.id;
  if (exact(id)) return id;
  const written = writtenId(wireTextOf(message));
  // Written as the host wrote it; read back (where the proxy routes it) as the number it parses to.
  return written === undefined ? id : (new RawJsonValue(written) as unknown as RequestId);
}

/** What a request is known by in the proxy's tables: its id, or its exact value (`idKeyOf`). */
export type RequestKey = RequestId | bigint;

/**
 * The key `message`'s id is known by: the id itself, unless it is an integer `JSON.parse` rounded
 * and the text the message came in (or the one it was rebuilt from) writes it as an integer —
 * then its exact value, a bigint: two int64 ids that round to one number stay two requests, and
 * an answer reaches the request whose id it names.
 */
export function idKeyOf(message: { readonly id: RequestId }): RequestKey {
  const id = message.id;
  if (exact(id)) return id;
  const written = writtenId(textOf(message));
  return written !== undefined && INTEGER.test(written) ? BigInt(written) : id;
}

const INTEGER = /^-?\d+$/;

/** An id `JSON.parse` read exactly: a string, a safe integer, or not an integer at all. */
function exact(id: RequestId): boolean {
  return typeof id !== "number" || Number.isSafeInteger(id) || !Number.isInteger(id);
}

/** The text a message came in: its own, its skeleton's (long literals aside), or its origin's. */
function textOf(message: object): string | undefined {
  return wireTextOf(message) ?? wireSkeletonOf(message)?.text ?? originTextOf(message);
}

/** The `id` member's text in a message's `text`, when there is one. */
function writtenId(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const open = skipSpace(text, 0);
  if (text.charCodeAt(open) !== 0x7b) return undefined;
  const span = memberSpans(text, open).get("id");
  return span === undefined ? undefined : text.slice(span.start, span.end);
}
