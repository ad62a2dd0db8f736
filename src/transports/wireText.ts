/**
 * The text a message arrived in, kept so a message the proxy forwards untouched goes out as
 * those very bytes instead of being serialized again. Nearly all traffic — every request a host
 * sends, every answer the engine leaves as it is — is parsed once (the proxy must read its id and
 * method) and never stringified.
 *
 * Kept per parsed object (a WeakMap: it goes with the message). A line break between tokens (a
 * pretty-printed WebSocket frame or HTTP body) is JSON whitespace — JSON text has no raw CR or LF
 * anywhere else — so it is kept as a space: the text then fits one stdio line or one SSE `data:`
 * field, every value still written as it came. Kept however deep the message nests: written
 * again, a message nested past a few hundred levels would lose what `JSON.parse` cannot carry,
 * and past a few thousand `JSON.stringify` refuses it (what the proxy does not change it
 * forwards). The items of a batch keep theirs too: a batch is split into its messages, or
 * forwarded without the ones refused, and each goes out as written. Sound because the proxy never changes
 * a message in place: the engine and the stateless pool build new objects, which have no text
 * here (what they share with the message they came from keeps its text: wireOrigin.ts).
 */
import { itemSpans, skipSpace } from "../wire/jsonText.js";
import { RAW_MARK, type RawJsonString } from "../wire/rawJson.js";

const TEXT = new WeakMap<object, string>();

const LINE_BREAK = /[\r\n]/;
const LINE_BREAKS = /[\r\n]/g;

/** Valid JSON text on one line: its line breaks, all between tokens, as spaces. */
function oneLine(text: string): string {
  return LINE_BREAK.test(text) ? text.replace(LINE_BREAKS, " ") : text;
}

/** Records `text` as the wire form of `value` (just parsed from it: valid JSON). */
export function rememberWireText(value: unknown, text: string): void {
  if (typeof value !== "object" || value === null) return;
  const line = oneLine(text);
  TEXT.set(value, line);
  if (Array.isArray(value)) rememberItems(value, line, []);
}

/**
 * A big message read with its long payload literals left as bytes (rawStringParse.ts): the text
 * around them, with a stand-in where each was (`"<RAW_MARK><i>"`, as `stringifyWithRaw` writes
 * them), and the literals in order. Kept on the same terms as `rememberWireText`.
 */
export interface WireSkeleton {
  readonly text: string;
  readonly raws: readonly RawJsonString[];
}

const SKELETON = new WeakMap<object, WireSkeleton>();

/** Records the skeleton `value` was parsed from (the stand-ins already swapped for `raws`). */
export function rememberWireSkeleton(value: unknown, text: string, raws: readonly RawJsonString[]): void {
  if (typeof value !== "object" || value === null) return;
  const line = oneLine(text);
  SKELETON.set(value, { text: line, raws });
  if (Array.isArray(value)) rememberItems(value, line, raws);
}

/**
 * Each item of a batch with its own text; in a big batch read with raw strings, an item holding
 * some gets its own skeleton instead, its stand-ins numbered from 0.
 */
function rememberItems(batch: readonly unknown[], text: string, raws: readonly RawJsonString[]): void {
  const spans = itemSpans(text, skipSpace(text, 0));
  let next = 0;
  batch.forEach((item, i) => {
    const span = spans[i];
    if (span === undefined || typeof item !== "object" || item === null) return;
    const written = text.slice(span.start, span.end);
    const first = next;
    let own = "";
    let from = 0;
    // Stand-ins are numbered in the order they stand in the text: this item's come next.
    while (next < raws.length) {
      const standIn = `"${RAW_MARK}${next}"`;
      const at = written.indexOf(standIn, from);
      if (at === -1) break;
      own += `${written.slice(from, at)}"${RAW_MARK}${next - first}"`;
      from = at + standIn.length;
      next++;
    }
    if (next === first) TEXT.set(item, written);
    else SKELETON.set(item, { text: own + written.slice(from), raws: raws.slice(first, next) });
  });
}

/** The skeleton `message` was read from, when it is forwarded as it was parsed. */
export function wireSkeletonOf(message: unknown): WireSkeleton | undefined {
  return typeof message === "object" && message !== null ? SKELETON.get(message) : undefined;
}

/** The text `message` arrived in, when it is forwarded as it was parsed. */
export function wireTextOf(message: unknown): string | undefined {
  return typeof message === "object" && message !== null ? TEXT.get(message) : undefined;
}
