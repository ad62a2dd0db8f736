/**
 * A message the proxy rebuilt (the engine rewrote an entry of it, the stateless pool gave it the
 * host's id) is written with every part it did not touch as the text that part arrived in: a
 * tool's `structuredContent`, `_meta`, unknown fields, the entries left as they were. Serializing
 * them again would change what `JSON.parse` cannot carry — integers past 2^53, `-0`, `1.10`,
 * `1e400`, the order of integer-like keys — and the proxy promises to forward what it does not
 * own unchanged.
 *
 * The rebuilt message remembers the one it was built from (`rememberOrigin`); when that one
 * arrived as text (wireText.ts), `withOriginText` walks both together: a member or item that is
 * the very same value in both becomes the original's text (`RawJsonValue`); one that changed is
 * walked into, or written anew. Only the path down to what changed is scanned.
 */
import { RawJsonValue } from "../wire/rawJson.js";
import { wireTextOf } from "./wireText.js";

const ORIGIN = new WeakMap<object, object>();

/** Records that `rebuilt` was built from `original` (sharing what it did not change). */
export function rememberOrigin(rebuilt: unknown, original: unknown): void {
  if (rebuilt === original || typeof rebuilt !== "object" || rebuilt === null) return;
  if (typeof original !== "object" || original === null) return;
  ORIGIN.set(rebuilt, ORIGIN.get(original) ?? original);
}

/**
 * `message` with its untouched parts as `RawJsonValue`s of the text they arrived in, ready for
 * `stringifyWithRaw`; undefined when it was not rebuilt from a message that came as text.
 */
export function withOriginText(message: unknown): unknown {
  if (typeof message !== "object" || message === null) return undefined;
  const origin = ORIGIN.get(message);
  const text = origin === undefined ? undefined : wireTextOf(origin);
  if (origin === undefined || text === undefined) return undefined;
  return substitute(message, origin, text, skipSpace(text, 0));
}

function isContainer(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

/** `next` (a changed value) with what it shares with `prev` — the value at `start` in `text` — as text. */
function substitute(next: unknown, prev: unknown, text: string, start: number): unknown {
  const open = text.charCodeAt(start);
  if (Array.isArray(next) && Array.isArray(prev) && open === 0x5b) {
    const spans = itemSpans(text, start);
    return next.map((item, i) => member(item, prev[i], i < prev.length ? spans[i] : undefined, text));
  }
  if (isContainer(next) && !Array.isArray(next) && isContainer(prev) && !Array.isArray(prev) && open === 0x7b) {
    const spans = memberSpans(text, start);
    // No prototype: a member named `__proto__` stays a member.
    const out: Record<string, unknown> = Object.create(null);
    for (const [key, value] of Object.entries(next)) {
      const span = Object.hasOwn(prev, key) ? spans.get(key) : undefined;
      out[key] = member(value, (prev as Record<string, unknown>)[key], span, text);
    }
    return out;
  }
  return next;
}

function member(value: unknown, prev: unknown, span: Span | undefined, text: string): unknown {
  if (span === undefined || value === undefined) return value;
  if (value === prev) {
    // Strings, booleans and null are written the same again (a string's escapes aside); a number
    // only when its text is JavaScript's own.
    if (typeof value === "number") {
      const written = text.slice(span.start, span.end);
      return written === String(value) ? value : new RawJsonValue(written);
    }
    return isContainer(value) ? new RawJsonValue(text.slice(span.start, span.end)) : value;
  }
  return isContainer(value) && isContainer(prev) ? substitute(value, prev, text, span.start) : value;
}

interface Span {
  readonly start: number;
  readonly end: number;
}

/** Spans of an object's member values, by name (the last of a name, as `JSON.parse` keeps). */
function memberSpans(text: string, open: number): Map<string, Span> {
  const spans = new Map<string, Span>();
  let at = skipSpace(text, open + 1);
  if (text.charCodeAt(at) === 0x7d) return spans;
  for (;;) {
    const keyEnd = stringEnd(text, at);
    const key = JSON.parse(text.slice(at, keyEnd)) as string;
    const start = skipSpace(text, skipSpace(text, keyEnd) + 1); // past the colon
    const end = valueEnd(text, start);
    spans.set(key, { start, end });
    at = skipSpace(text, end);
    if (text.charCodeAt(at) !== 0x2c) return spans;
    at = skipSpace(text, at + 1);
  }
}

/** Spans of an array's items, in order. */
function itemSpans(text: string, open: number): Span[] {
  const spans: Span[] = [];
  let at = skipSpace(text, open + 1);
  if (text.charCodeAt(at) === 0x5d) return spans;
  for (;;) {
    const end = valueEnd(text, at);
    spans.push({ start: at, end });
    at = skipSpace(text, end);
    if (text.charCodeAt(at) !== 0x2c) return spans;
    at = skipSpace(text, at + 1);
  }
}

function skipSpace(text: string, at: number): number {
  let i = at;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return i;
    i++;
  }
}

/** Just past the string literal whose opening quote is at `at`. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i + 1;
  }
  return text.length;
}

/** Just past the JSON value that starts at `at` (valid JSON: it was parsed). */
function valueEnd(text: string, at: number): number {
  const c = text.charCodeAt(at);
  if (c === 0x22) return stringEnd(text, at);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      const d = text.charCodeAt(i);
      if (d === 0x22) i = stringEnd(text, i) - 1;
      else if (d === 0x7b || d === 0x5b) depth++;
      else if ((d === 0x7d || d === 0x5d) && --depth === 0) return i + 1;
    }
    return text.length;
  }
  // A number, true, false or null: up to the next delimiter.
  let i = at;
  for (; i < text.length; i++) {
    const d = text.charCodeAt(i);
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x09 || d === 0x0a || d === 0x0d) break;
  }
  return i;
}
