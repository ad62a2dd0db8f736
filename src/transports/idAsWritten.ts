/**
 * A request id `JSON.parse` could not keep — an integer past 2^53, as an int64 host may send —
 * as the text it arrived in, so an answer the proxy builds for it (a pooled request's, given back
 * its host's id) carries the very id the host sent, not one rounded to another number.
 */
import { memberSpans, skipSpace } from "../wire/jsonText.js";
import { RawJsonValue } from "../wire/rawJson.js";
import type { RequestId } from "./jsonrpc.js";
import { wireTextOf } from "./wireText.js";

/** The id of `message` as written, when its number is not exact; the id itself otherwise. */
export function idAsWritten(message: { readonly id: RequestId }): RequestId {
  const id = message.id;
  if (typeof id !== "number" || Number.isSafeInteger(id) || !Number.isInteger(id)) return id;
  const text = wireTextOf(message);
  if (text === undefined) return id;
  const open = skipSpace(text, 0);
  if (text.charCodeAt(open) !== 0x7b) return id;
  const span = memberSpans(text, open).get("id");
  if (span === undefined) return id;
  // Written as the host wrote it; read back (where the proxy routes it) as the number it parses to.
  return new RawJsonValue(text.slice(span.start, span.end)) as unknown as RequestId;
}

/**
 * The id an answer built for a message read only in part (a framing problem) carries: as the
 * peer wrote it (`1e3`, or an integer past 2^53, which parse to other text), else as it parses.
 */
export function problemIdAsWritten(id: RequestId, idText: string | undefined): RequestId {
  if (typeof id !== "number" || idText === undefined || String(id) === idText) return id;
  return new RawJsonValue(idText) as unknown as RequestId;
}

/** The id of `message` as JSON text, as it was written: for a message that names it. */
export function idTextOf(message: { readonly id: RequestId }): string {
  const written: unknown = idAsWritten(message);
  return written instanceof RawJsonValue ? written.text : JSON.stringify(message.id);
}
