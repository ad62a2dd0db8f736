/**
 * The text a message arrived in, kept so a message the proxy forwards untouched goes out as
 * those very bytes instead of being serialized again. Nearly all traffic — every request a host
 * sends, every answer the engine leaves as it is — is parsed once (the proxy must read its id and
 * method) and never stringified.
 *
 * Kept per parsed object (a WeakMap: it goes with the message) and only for text with no CR or
 * LF, so it fits in one stdio line or one SSE `data:` field exactly as `JSON.stringify` output
 * does; and only for text with few enough brackets that `JSON.stringify` could have written it
 * (it throws on a message nested a few thousand levels deep, and such a message must still get
 * the error answer it always got). Sound because the proxy never changes a message in place: the
 * engine and the stateless pool build new objects, which have no text here and are serialized as
 * always.
 */
const TEXT = new WeakMap<object, string>();

/** Most `[` and `{` in a text kept: nesting that deep is far inside what `JSON.stringify` handles. */
const MAX_BRACKETS = 512;

/** True when `text` has at most `max` opening brackets (so it nests no deeper). */
function fewBrackets(text: string, max: number): boolean {
  let count = 0;
  for (const bracket of ["{", "["]) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      if (++count > max) return false;
    }
  }
  return true;
}

/** Records `text` as the wire form of `value` (just parsed from it). */
export function rememberWireText(value: unknown, text: string): void {
  if (typeof value !== "object" || value === null) return;
  if (text.includes("\n") || text.includes("\r") || !fewBrackets(text, MAX_BRACKETS)) return;
  TEXT.set(value, text);
}

/** The text `message` arrived in, when it is forwarded as it was parsed. */
export function wireTextOf(message: unknown): string | undefined {
  return typeof message === "object" && message !== null ? TEXT.get(message) : undefined;
}

/** The message as JSON text: the text it arrived in, or `JSON.stringify`. */
export function messageText(message: unknown): string {
  return wireTextOf(message) ?? JSON.stringify(message);
}
