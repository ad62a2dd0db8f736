/**
 * A JSON string kept as the bytes of its literal instead of a JS string (big reads).
 *
 * A 50 MiB resource held as a JS string costs a UTF-8 decode, a UTF-16 copy (two bytes per
 * character once one character is outside Latin-1), a second copy inside `JSON.stringify`, and an
 * encode back to UTF-8 — four passes and ~4× the message in memory. The proxy's upstream
 * transports (stdio, streamable HTTP JSON bodies, WebSocket) therefore read very long
 * `blob`/`text`/`data` literals as `RawJsonString`s (the rest of the message is parsed as usual),
 * the engine decodes a raw base64 blob straight from its bytes, and the host transports splice the
 * literals' bytes into their output.
 *
 * Anything else that meets a `RawJsonString` still sees the right value: `JSON.stringify` (via
 * `toJSON`) and `value()` give the string it stands for.
 */
import { isAscii } from "node:buffer";
import { randomBytes } from "node:crypto";
import { ESCAPE_EXTRA, WORDS_FROM_BYTES, jsonUtf8Bytes, wordBoundary, wordHasJsonSpecial } from "./jsonSize.js";
import { stringifyAnyDepth } from "./deepStringify.js";

const QUOTE = Buffer.from('"');

/** The letter after the backslash of each short escape (`\b \t \n \f \r \" \\`). */
const SHORT_ESCAPE = (() => {
  const table = new Uint8Array(256);
  for (const [byte, letter] of [
    [0x08, 0x62],
    [0x09, 0x74],
    [0x0a, 0x6e],
    [0x0c, 0x66],
    [0x0d, 0x72],
    [0x22, 0x22],
    [0x5c, 0x5c],
  ] as const)
    table[byte] = letter;
  return table;
})();
const HEX = Buffer.from("0123456789abcdef");
/** Runs up to this long between escaped bytes move four bytes at a time (a `copyWithin` call costs more). */
const SHORT_RUN = 64;

/** Stand-ins that `JSON.stringify` writes for raw strings while `stringifyWithRaw` runs. */
export const RAW_MARK = `mcpn-raw-${randomBytes(12).toString("hex")}-`;

/** What `stringifyWithRaw` splices in: the bytes of one JSON value, in order. */
export interface RawJsonPieces {
  readonly parts: readonly Buffer[];
}

let collecting: RawJsonPieces[] | null = null;

/** Buffers from `allocWithEscapeRoom` whose room has not been used yet (by their ArrayBuffer). */
const escapeRoom = new WeakSet<ArrayBuffer>();

/**
 * `size` bytes with room around them (one byte before, an eighth more after) so `ofUtf8` can
 * escape them into a JSON literal in place. Untouched room costs no memory: pages are only
 * backed once written, and writing fresh pages for the first time is what costs.
 */
export function allocWithEscapeRoom(size: number): Buffer {
  const whole = Buffer.allocUnsafeSlow(1 + size + Math.ceil(size / 8) + 1);
  escapeRoom.add(whole.buffer);
  return whole.subarray(1, 1 + size);
}

export class RawJsonString {
  /**
   * `parts` are the bytes of one valid JSON string literal, quotes included, in order.
   * `escaped` is false when the literal has no backslash: its body is then the string's UTF-8.
   */
  private constructor(
    readonly parts: readonly Buffer[],
    readonly byteLength: number,
    readonly escaped: boolean,
  ) {}

  /** A literal read from the wire, in the pieces it arrived in (already validated by the reader). */
  static ofLiteral(parts: readonly Buffer[], escaped: boolean): RawJsonString {
    return new RawJsonString(
      parts,
      parts.reduce((sum, part) => sum + part.length, 0),
      escaped,
    );
  }

  /**
   * The literal `JSON.stringify` would write for the string whose valid UTF-8 is `utf8`: every
   * character JSON escapes is ASCII, so escaping runs over bytes. No escape needed: no copy.
   * `utf8` from `allocWithEscapeRoom` is escaped in place: it must not be read afterwards.
   */
  static ofUtf8(utf8: Buffer): RawJsonString {
    const length = jsonUtf8Bytes(utf8);
    const extra = length - utf8.length - 2;
    if (extra === 0) return new RawJsonString([QUOTE, utf8, QUOTE], length, false);
    const room = utf8.buffer as ArrayBuffer;
    if (escapeRoom.has(room) && utf8.byteOffset >= 1 && utf8.byteOffset + utf8.length + extra < room.byteLength) {
      escapeRoom.delete(room);
      return new RawJsonString(
        [escapeInPlace(new Uint8Array(room), utf8.byteOffset, utf8.length, extra)],
        length,
        true,
      );
    }
    // No room around the bytes: a copy into a buffer of the literal's size, escaped there.
    const out = Buffer.allocUnsafe(length);
    utf8.copy(out, 1);
    return new RawJsonString([escapeInPlace(out, 1, utf8.length, extra)], length, true);
  }

  /**
   * Bytes of the literal as it crosses the wire: as the server wrote it (a literal kept goes out
   * as those very bytes, `\u00e9` and `\/` included), or as `JSON.stringify` writes it for one
   * built here.
   */
  jsonBytes(): number {
    return this.byteLength;
  }

  /** The literal's bytes without its two quotes, as pieces. */
  bodyParts(): Buffer[] {
    const parts = this.parts.map((part, i) => {
      const from = i === 0 ? 1 : 0;
      const to = i === this.parts.length - 1 ? part.length - 1 : part.length;
      return part.subarray(from, Math.max(from, to));
    });
    return parts.filter((part) => part.length > 0);
  }

  /**
   * The body when it is ASCII without escapes — then its bytes are the string's characters one
   * for one (plain base64, as servers send blobs and media data). Null otherwise.
   */
  plainAscii(): Buffer[] | null {
    if (this.escaped) return null;
    const body = this.bodyParts();
    return body.every((part) => isAscii(part)) ? body : null;
  }

  /** The string itself (a full decode: only for the rare paths that need it). */
  value(): string {
    const literal = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts as Buffer[], this.byteLength);
    return JSON.parse(literal.toString("utf8")) as string;
  }

  toJSON(): string {
    if (collecting === null) return this.value();
    collecting.push(this);
    return `${RAW_MARK}${collecting.length - 1}`;
  }
}

/**
 * Escapes the `length` bytes at `view[base]` into a literal that starts one byte before them and
 * ends `extra + 1` bytes after them, back to front, so no byte is overwritten before it is read
 * (the write position never falls behind the read position: an escape is never shorter than its
 * byte). Escaped bytes are found four at a time, a long run between two of them moves with one
 * `copyWithin`, and the bytes before the first one stay where they are (a 50 MiB read).
 * Returns the literal.
 */
function escapeInPlace(view: Uint8Array, base: number, length: number, extra: number): Buffer {
  const data = new DataView(view.buffer, view.byteOffset, view.byteLength);
  let end = base + length; // view[base, end) is still unread
  let w = end + extra; // view[w, …) is written
  let wordsAt = base;
  let words: Uint32Array | null = null;
  if (length >= WORDS_FROM_BYTES) {
    wordsAt = wordBoundary(view, base);
    words = new Uint32Array(view.buffer, view.byteOffset + wordsAt, (base + length - wordsAt) >>> 2);
  }
  // While the literal still has to grow, an escaped byte lies below `end`.
  while (w > end) {
    const at = lastJsonSpecial(view, base, end, words, wordsAt);
    const run = end - at - 1;
    if (run > SHORT_RUN) {
      view.copyWithin(w - run, at + 1, end);
      w -= run;
    } else {
      // Four bytes at a time, top down: each word is read whole before the write, and the next
      // one read lies below everything written (the write position stays above the read one).
      let i = end;
      for (; i - 4 > at; i -= 4) {
        w -= 4;
        data.setUint32(w, data.getUint32(i - 4, true), true);
      }
      while (i - 1 > at) view[--w] = view[--i]!;
    }
    const byte = view[at]!;
    if (ESCAPE_EXTRA[byte] === 1) {
      view[--w] = SHORT_ESCAPE[byte]!;
      view[--w] = 0x5c;
    } else {
      view[--w] = HEX[byte & 15]!;
      view[--w] = HEX[byte >> 4]!;
      view[--w] = 0x30;
      view[--w] = 0x30;
      view[--w] = 0x75;
      view[--w] = 0x5c;
    }
    end = at;
  }
  view[base - 1] = 0x22;
  view[base + length + extra] = 0x22;
  return Buffer.from(view.buffer, view.byteOffset + base - 1, length + extra + 2);
}

/**
 * The index of the last byte in `view[lo, end)` that JSON escapes; `lo - 1` if none. `words`
 * (when not null) views `view` from `wordsAt`, a 4-byte boundary of the memory, in whole words.
 */
function lastJsonSpecial(
  view: Uint8Array,
  lo: number,
  end: number,
  words: Uint32Array | null,
  wordsAt: number,
): number {
  let i = end;
  if (words !== null && i > wordsAt) {
    const wordsEnd = wordsAt + 4 * words.length;
    // The bytes above the last whole word below `end`, one by one.
    const boundary = i >= wordsEnd ? wordsEnd : i - ((i - wordsAt) % 4);
    while (i > boundary) if (ESCAPE_EXTRA[view[--i]!] !== 0) return i;
    for (let k = (i - wordsAt) / 4 - 1; k >= 0; k--) {
      if (!wordHasJsonSpecial(words[k]!)) continue;
      for (let at = wordsAt + 4 * k + 3; ; at--) if (ESCAPE_EXTRA[view[at]!] !== 0) return at;
    }
    i = wordsAt;
  }
  while (i > lo) if (ESCAPE_EXTRA[view[--i]!] !== 0) return i;
  return lo - 1;
}

export function isRawJsonString(value: unknown): value is RawJsonString {
  return value instanceof RawJsonString;
}

/**
 * `JSON.stringify(value)`, with every raw string left as a stand-in and listed in `raws` in the
 * order the stand-ins appear. The caller splices `raws[i]`'s bytes over `"RAW_MARK<i>"`.
 */
export function stringifyWithRaw(value: unknown): { text: string; raws: RawJsonPieces[] } {
  const raws: RawJsonPieces[] = [];
  const outer = collecting;
  collecting = raws;
  try {
    // Nested deeper than JSON.stringify recurses (a value no text was kept for): written again
    // with a stack of its own, its stand-ins listed anew.
    return { text: stringifyAnyDepth(value, () => (raws.length = 0)) as string, raws };
  } finally {
    collecting = outer;
  }
}

/**
 * Any JSON value kept as the text it arrived in (a member of a message the proxy rebuilt around
 * it), written as that very text by `stringifyWithRaw`: numbers keep their digits (`1.10`,
 * `12345678901234567890`, `-0`), objects their key order and strings their escapes.
 */
export class RawJsonValue implements RawJsonPieces {
  constructor(readonly text: string) {}

  /** Its bytes: only when spliced among raw strings' bytes (a small message stays a string). */
  get parts(): readonly Buffer[] {
    return [Buffer.from(this.text, "utf8")];
  }

  toJSON(): unknown {
    if (collecting === null) return JSON.parse(this.text);
    collecting.push(this);
    return `${RAW_MARK}${collecting.length - 1}`;
  }
}
