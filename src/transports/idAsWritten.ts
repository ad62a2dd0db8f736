/**
 * A request id `JSON.parse` could not keep — an integer past 2^53, as an int64 host may send —
 * as the text it arrived in, so an answer the proxy builds for it (a pooled request's, given back
 * its host's id) carries the very id the host sent, not one rounded to another number. The same
 * for a request's progress token, which the stateless pool gives back to its host.
 */
import { memberSpans, skipSpace, type Span } from "../wire/jsonText.js";
import { RawJsonValue } from "../wire/rawJson.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { wireTextOf } from "./wireText.js";

/** The id of `message` as written, when its number is not exact; the id itself otherwise. */
export function idAsWritten(message: { readonly id: RequestId }): RequestId {
  return inexactAsWritten(message, message.id, ["id"]);
}

/** The progress token of a request (`params._meta.progressToken`) as written, when its number is not exact. */
export function progressTokenAsWritten(message: object, token: RequestId): RequestId {
  return inexactAsWritten(message, token, ["params", "_meta", "progressToken"]);
}

/** `value`, the member of `message` at `path`, as written when it is an integer `JSON.parse` rounded. */
function inexactAsWritten(message: object, value: RequestId, path: readonly string[]): RequestId {
  if (typeof value !== "number" || Number.isSafeInteger(value) || !Number.isInteger(value)) return value;
  const text = wireTextOf(message);
  if (text === undefined) return value;
  let open = skipSpace(text, 0);
  let span: Span | undefined;
  for (const name of path) {
    if (text.charCodeAt(open) !== 0x7b) return value;
    span = memberSpans(text, open).get(name);
    if (span === undefined) return value;
    open = span.start;
  }
  if (span === undefined) return value;
  // Written as the peer wrote it; read back (where the proxy routes it) as the number it parses to.
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
