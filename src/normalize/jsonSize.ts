/**
 * UTF-8 byte length of JSON text, computed without serializing multi-megabyte strings when the
 * answer can be had more cheaply (change records carry these lengths for every entry).
 */

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
 * loop instead of a regex over a multi-megabyte string (bench/core.mjs: about 3× cheaper).
 * Valid UTF-8 never holds a lone surrogate, the only non-ASCII JSON.stringify escapes.
 */
export function jsonUtf8Bytes(utf8: Uint8Array): number {
  let extra = 0;
  for (let i = 0; i < utf8.length; i++) extra += ESCAPE_EXTRA[utf8[i]!]!;
  return utf8.length + extra + 2;
}

/**
 * Bytes of `JSON.stringify(entry)` where `entry[key]` is a (possibly huge) string: the rest of
 * the entry is serialized with that value emptied, then the string's own length is added.
 */
export function entryJsonBytes(entry: Record<string, unknown>, key: string, valueBytes: number): number {
  const rest = Buffer.byteLength(JSON.stringify({ ...entry, [key]: "" }), "utf8");
  return rest - 2 + valueBytes;
}

export function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, "utf8");
}
