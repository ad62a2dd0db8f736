/**
 * How many objects and arrays a JSON text holds, counted without parsing it. `JSON.parse` spends
 * most of its time, and most of its memory, on containers: a message made of millions of tiny
 * ones (`[[[[…]]]]`, `[{},{},…]`) takes seconds to parse and many times its size in memory, while
 * the loop waits. Counting them first lets a listener refuse such a message for the price of one
 * pass over its bytes. Brackets inside strings are not counted; the text is not validated (the
 * parse that follows does that).
 */

/**
 * Whether `bytes` holds more than `limit` objects and arrays. A text shorter than
 * `2 × limit + 2` bytes cannot (each takes two bytes at least) and is not read.
 */
export function holdsMoreContainers(bytes: Uint8Array, limit: number): boolean {
  if (bytes.length < 2 * limit + 2) return false;
  let count = 0;
  let i = 0;
  const end = bytes.length;
  while (i < end) {
    const byte = bytes[i]!;
    if (byte === 0x22) {
      i = afterString(bytes, i + 1);
      continue;
    }
    if ((byte === 0x7b || byte === 0x5b) && ++count > limit) return true;
    i++;
  }
  return false;
}

/** Just past the quote that closes the string whose content starts at `from` (the end if none). */
function afterString(bytes: Uint8Array, from: number): number {
  let quote = from;
  for (;;) {
    quote = bytes.indexOf(0x22, quote);
    if (quote === -1) return bytes.length;
    // Escaped when an odd run of backslashes stands before it (each run is read once).
    let backslashes = 0;
    for (let k = quote - 1; k >= from && bytes[k] === 0x5c; k--) backslashes++;
    if ((backslashes & 1) === 0) return quote + 1;
    quote++;
  }
}
