/**
 * UTF-8 byte length of JSON text, computed without serializing multi-megabyte strings when the
 * answer can be had more cheaply (change records carry these lengths for every entry).
 */

import { stringifyAnyDepth } from "./deepStringify.js";

/** Extra JSON bytes per byte value: `\n`-style escapes add 1, `\u00XX` escapes add 5. */
export const ESCAPE_EXTRA = (() => {
  const table = new Uint8Array(256);
  for (let c = 0; c < 0x20; c++) table[c] = 5;
  for (const c of [0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x22, 0x5c]) table[c] = 1;
  return table;
})();

/** Bytes of `JSON.stringify(value)` for a string, quotes included. */
export function jsonStringBytes(value: string): number {
  // One pass over the code units counts what JSON escapes; a lone surrogate (which
  // JSON.stringify writes as a `\uXXXX` escape) sends the string to the exact, slow measure.
  let extra = 0;
  let ascii = true;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20) extra += ESCAPE_EXTRA[c]!;
    else if (c === 0x22 || c === 0x5c) extra += 1;
    else if (c >= 0x80) {
      ascii = false;
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = value.charCodeAt(i + 1);
        if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return Buffer.byteLength(JSON.stringify(value), "utf8");
        i++;
      }
    }
  }
  return (ascii ? value.length : Buffer.byteLength(value, "utf8")) + extra + 2;
}

/**
 * Bytes of `JSON.stringify(text)` where `utf8` is the valid UTF-8 encoding of `text`. Every
 * character JSON escapes is ASCII, so the count can run over the bytes with a table — one tight
 * loop instead of a regex over a multi-megabyte string (bench/core.mjs compares the two).
 * Valid UTF-8 never holds a lone surrogate, the only non-ASCII JSON.stringify escapes.
 */
export function jsonUtf8Bytes(utf8: Uint8Array): number {
  const n = utf8.length;
  let extra = 0;
  let i = 0;
  if (n >= WORDS_FROM_BYTES) {
    // Four bytes at a time over the aligned middle: most words of text hold nothing to escape.
    const head = wordBoundary(utf8, 0);
    for (; i < head; i++) extra += ESCAPE_EXTRA[utf8[i]!]!;
    const count = (n - i) >>> 2;
    const words = new Uint32Array(utf8.buffer, utf8.byteOffset + i, count);
    for (let k = 0; k < count; k++) {
      if (!wordHasJsonSpecial(words[k]!)) continue;
      const at = i + 4 * k;
      extra +=
        ESCAPE_EXTRA[utf8[at]!]! +
        ESCAPE_EXTRA[utf8[at + 1]!]! +
        ESCAPE_EXTRA[utf8[at + 2]!]! +
        ESCAPE_EXTRA[utf8[at + 3]!]!;
    }
    i += 4 * count;
  }
  for (; i < n; i++) extra += ESCAPE_EXTRA[utf8[i]!]!;
  return n + extra + 2;
}

/** Below this many bytes a scan goes byte by byte: a word view costs more than it saves. */
export const WORDS_FROM_BYTES = 256;

/** The first index from `i` on whose byte starts a 4-byte word of the memory under `bytes`. */
export function wordBoundary(bytes: Uint8Array, i: number): number {
  return i + ((4 - ((bytes.byteOffset + i) % 4)) % 4);
}

/**
 * Whether any of the four bytes of `word` is one JSON escapes inside a string (below 0x20, `"`
 * or a backslash: what `ESCAPE_EXTRA` counts). The usual any-byte tests — a byte below n:
 * `(w - n·0x01010101) & ~w & 0x80808080`; a byte equal to c: the same with n = 1 after XOR with
 * c in every byte — are exact as a yes/no, so a word that says no needs no byte looked at.
 */
export function wordHasJsonSpecial(word: number): boolean {
  const quote = word ^ 0x22222222;
  const backslash = word ^ 0x5c5c5c5c;
  const high =
    ((word - 0x20202020) & ~word) | ((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash);
  return (high & 0x80808080) !== 0;
}

/** The index of the first byte in `bytes[from, to)` that JSON escapes inside a string; `to` if none. */
export function nextJsonSpecial(bytes: Uint8Array, from: number, to: number): number {
  let i = from;
  // Byte by byte first: strings are mostly short, and a special byte usually comes soon.
  let bytewise = to;
  if (to - i >= WORDS_FROM_BYTES) {
    bytewise = wordBoundary(bytes, i + 64);
  }
  for (; i < bytewise; i++) if (ESCAPE_EXTRA[bytes[i]!] !== 0) return i;
  if (i >= to) return to;
  const count = (to - i) >>> 2;
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset + i, count);
  for (let k = 0; k < count; k++) {
    if (!wordHasJsonSpecial(words[k]!)) continue;
    for (let at = i + 4 * k; ; at++) if (ESCAPE_EXTRA[bytes[at]!] !== 0) return at;
  }
  for (i += 4 * count; i < to; i++) if (ESCAPE_EXTRA[bytes[i]!] !== 0) return i;
  return to;
}

/**
 * Bytes of `JSON.stringify(entry)` where `entry[key]` is a (possibly huge) string: the rest of
 * the entry is serialized with that value emptied, then the string's own length is added.
 */
export function entryJsonBytes(entry: Record<string, unknown>, key: string, valueBytes: number): number {
  return jsonBytes({ ...entry, [key]: "" }) - 2 + valueBytes;
}

/**
 * Bytes of `JSON.stringify(value)` (0 for what it writes nothing for). A value nested deeper than
 * `JSON.stringify` recurses (an unknown field of thousands of nested arrays, which `JSON.parse`
 * reads) is measured in the text `deepStringify` writes instead of failing the entry it is in.
 */
export function jsonBytes(value: unknown): number {
  const text = stringifyAnyDepth(value);
  return text === undefined ? 0 : Buffer.byteLength(text, "utf8");
}
