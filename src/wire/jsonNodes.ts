/**
 * How much work a JSON text is for `JSON.parse`, counted without parsing it. The parse spends
 * its time, and its memory, on values far more than on bytes: a message of millions of tiny
 * containers (`[[[…]]]`, `[{},{},…]`), of objects whose members are named or ordered differently
 * each time (V8 builds a hidden class for every new shape, at a cost that grows faster than their
 * number), or of millions of short strings or numbers in an array, takes seconds to parse and
 * many times its size in memory, while the loop waits. Counting its nodes first lets a listener
 * refuse such a message for the price of one pass over its bytes. Nodes are the `{`, `[` and `,`
 * outside strings: every object and array, and every member or element after the first in one.
 * The text is not validated (the parse that follows does that).
 */

/**
 * Whether a text holds more than `limit` nodes: one buffer, or the pieces it was read in (a
 * string may run across them). A text of at most `limit` bytes cannot (each node is a byte of its
 * own) and is not read.
 */
export function holdsMoreNodes(text: Uint8Array | readonly Uint8Array[], limit: number): boolean {
  // Every message passes here: one that is too short costs a comparison, nothing more.
  if (text instanceof Uint8Array) return text.length > limit && countsMore([text], limit);
  let total = 0;
  for (const piece of text) total += piece.length;
  return total > limit && countsMore(text, limit);
}

function countsMore(pieces: readonly Uint8Array[], limit: number): boolean {
  let count = 0;
  let inString = false;
  // Backslashes in a row at the end of the last piece, inside a string.
  let carried = 0;
  for (const piece of pieces) {
    let i = 0;
    const end = piece.length;
    while (i < end) {
      if (inString) {
        const quote = piece.indexOf(0x22, i);
        if (quote === -1) {
          const run = backslashesBefore(piece, end, i);
          carried = run === end - i ? carried + run : run;
          break;
        }
        let run = backslashesBefore(piece, quote, i);
        if (run === quote - i) run += carried;
        carried = 0;
        i = quote + 1;
        // Escaped when an odd run of backslashes stands before it.
        if ((run & 1) === 0) inString = false;
        continue;
      }
      const byte = piece[i]!;
      if (byte === 0x22) inString = true;
      else if ((byte === 0x7b || byte === 0x5b || byte === 0x2c) && ++count > limit) return true;
      i++;
    }
  }
  return false;
}

/** How many backslashes stand right before `at`, not looking before `from`. */
function backslashesBefore(bytes: Uint8Array, at: number, from: number): number {
  let k = at - 1;
  while (k >= from && bytes[k] === 0x5c) k--;
  return at - 1 - k;
}

/** What the top level of a message refused unparsed says of it, so it can still be answered. */
export interface TopLevel {
  /** It is an object whose `method` member is a string: a request or a notification. */
  readonly method: boolean;
  /** Its `id` member's value as written, when that is a string or a number of at most `ID_MAX_BYTES`. */
  readonly idText: string | undefined;
  /** It has a `result` or an `error` member: a response. */
  readonly answers: boolean;
}

/** Longest id taken from a refused message's top level (a longer one is answered under `null`). */
const ID_MAX_BYTES = 256;

const METHOD = Buffer.from('"method"');
const ID = Buffer.from('"id"');
const RESULT = Buffer.from('"result"');
const ERROR = Buffer.from('"error"');

/**
 * The `method`, `id`, `result` and `error` members of a JSON object text, found in one pass that
 * steps over nested values (and over brackets inside strings); nothing for an array (a batch) or
 * anything else. A text cut short (the start of a message too large to keep) gives what its
 * bytes show.
 */
export function topLevelOf(bytes: Uint8Array): TopLevel {
  let i = skipSpace(bytes, startsWithBom(bytes) ? 3 : 0);
  if (bytes[i] !== 0x7b) return { method: false, idText: undefined, answers: false };
  let method = false;
  let answers = false;
  let idText: string | undefined;
  let depth = 0;
  let key: [number, number] | undefined;
  while (i < bytes.length) {
    const byte = bytes[i]!;
    if (byte === 0x22) {
      const after = afterString(bytes, i + 1);
      if (depth === 1) key = [i, after];
      i = after;
      continue;
    }
    if (byte === 0x7b || byte === 0x5b) depth++;
    else if (byte === 0x7d || byte === 0x5d) {
      if (--depth === 0) break;
    } else if (byte === 0x3a && depth === 1 && key !== undefined) {
      const name = bytes.subarray(key[0], key[1]);
      if (Buffer.compare(name, METHOD) === 0) method = bytes[skipSpace(bytes, i + 1)] === 0x22;
      else if (Buffer.compare(name, ID) === 0) idText = scalarAt(bytes, i + 1);
      else if (Buffer.compare(name, RESULT) === 0 || Buffer.compare(name, ERROR) === 0) answers = true;
    } else if (byte === 0x2c) key = undefined;
    i++;
  }
  return { method, idText, answers };
}

/**
 * The string or number starting at `from` (after spaces), as written; undefined for anything
 * else, or for one longer than `ID_MAX_BYTES`.
 */
function scalarAt(bytes: Uint8Array, from: number): string | undefined {
  const start = skipSpace(bytes, from);
  const stop = Math.min(bytes.length, start + ID_MAX_BYTES + 1);
  let end = start;
  if (bytes[start] === 0x22) end = afterString(bytes.subarray(0, stop), start + 1);
  else while (end < stop && isNumberByte(bytes[end]!)) end++;
  if (end === start || end - start > ID_MAX_BYTES) return undefined;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString("utf8");
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "string" || typeof value === "number" ? text : undefined;
  } catch {
    return undefined;
  }
}

/** A byte a JSON number may hold: digits, sign, point, exponent. */
function isNumberByte(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || byte === 0x2d || byte === 0x2b || byte === 0x2e || (byte | 0x20) === 0x65;
}

function skipSpace(bytes: Uint8Array, from: number): number {
  let i = from;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i++;
  return i;
}

/**
 * A UTF-8 byte order mark first: RFC 8259 §8.1 lets a parser ignore it, and a host on Windows
 * may write one before its first message.
 */
export function startsWithBom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/** Just past the quote that closes the string whose content starts at `from` (the end if none). */
function afterString(bytes: Uint8Array, from: number): number {
  for (let quote = bytes.indexOf(0x22, from); quote !== -1; quote = bytes.indexOf(0x22, quote + 1)) {
    // Escaped when an odd run of backslashes stands before it.
    if ((backslashesBefore(bytes, quote, from) & 1) === 0) return quote + 1;
  }
  return bytes.length;
}
