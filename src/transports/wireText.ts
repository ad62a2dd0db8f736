/**
 * The text a message arrived in, kept so a message the proxy forwards untouched goes out as
 * those very bytes instead of being serialized again. Nearly all traffic — every request a host
 * sends, every answer the engine leaves as it is — is parsed once (the proxy must read its id and
 * method) and never stringified.
 *
 * Kept per parsed object (a WeakMap: it goes with the message). A line break between tokens (a
 * pretty-printed WebSocket frame or HTTP body) is JSON whitespace — JSON text has no raw CR or LF
 * anywhere else — so it is kept as a space: the text then fits one stdio line or one SSE `data:`
 * field, every value still written as it came. Not kept for nesting deeper than `JSON.stringify`
 * could have written (it throws on a message nested a few thousand levels deep, and such a
 * message must still get the error answer it always got). Sound because the proxy never changes
 * a message in place: the engine and the stateless pool build new objects, which have no text
 * here (what they share with the message they came from keeps its text: wireOrigin.ts).
 */
import { nestsAtMost } from "../wire/jsonText.js";
import type { RawJsonString } from "../wire/rawJson.js";

const TEXT = new WeakMap<object, string>();

const LINE_BREAK = /[\r\n]/;
const LINE_BREAKS = /[\r\n]/g;

/** Deepest nesting kept: far inside what `JSON.stringify` handles. */
const MAX_DEPTH = 512;

/** Valid JSON text on one line: its line breaks, all between tokens, as spaces. */
function oneLine(text: string): string {
  return LINE_BREAK.test(text) ? text.replace(LINE_BREAKS, " ") : text;
}

/** Records `text` as the wire form of `value` (just parsed from it: valid JSON). */
export function rememberWireText(value: unknown, text: string): void {
  if (typeof value !== "object" || value === null) return;
  if (!nestsAtMost(text, MAX_DEPTH)) return;
  TEXT.set(value, oneLine(text));
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
  if (!nestsAtMost(text, MAX_DEPTH)) return;
  SKELETON.set(value, { text: oneLine(text), raws });
}

/** The skeleton `message` was read from, when it is forwarded as it was parsed. */
export function wireSkeletonOf(message: unknown): WireSkeleton | undefined {
  return typeof message === "object" && message !== null ? SKELETON.get(message) : undefined;
}

/** The text `message` arrived in, when it is forwarded as it was parsed. */
export function wireTextOf(message: unknown): string | undefined {
  return typeof message === "object" && message !== null ? TEXT.get(message) : undefined;
}
