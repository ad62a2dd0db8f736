/**
 * UTF-7 (RFC 2152) decoded in one pass. iconv-lite's decoder calls into its base64 and UTF-16
 * decoders for every shifted run, so text of many short runs (`+AGE-` over and over) took most
 * of a second a megabyte on the proxy's one thread. What this gives is checked as every
 * algorithmic charset's decode is (charset.ts): only text that encodes back to the exact bytes
 * counts, so a difference from iconv-lite's reading can keep bytes as they came, never change them.
 */

/** Each byte's value as a digit of modified base64, or -1. */
const DIGITS = (() => {
  const table = new Int8Array(256).fill(-1);
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  return table;
})();

const PLUS = 0x2b;
const MINUS = 0x2d;
/** Code units joined into a string at a time (String.fromCharCode takes its arguments on the stack). */
const CHUNK = 8192;

/** The text of UTF-7 bytes; null when a byte cannot be in UTF-7 (above 0x7F). */
export function decodeUtf7(bytes: Uint8Array): string | null {
  const parts: string[] = [];
  const units: number[] = [];
  const flush = (): void => {
    for (let i = 0; i < units.length; i += CHUNK) parts.push(String.fromCharCode(...units.slice(i, i + CHUNK)));
    units.length = 0;
  };
  let i = 0;
  while (i < bytes.length) {
    const byte = bytes[i]!;
    if (byte > 0x7f) return null;
    if (byte !== PLUS) {
      units.push(byte);
      i++;
    } else if (bytes[i + 1] === MINUS) {
      units.push(PLUS);
      i += 2;
    } else {
      i++;
      let bits = 0;
      let count = 0;
      while (i < bytes.length && DIGITS[bytes[i]!]! >= 0) {
        bits = ((bits << 6) | DIGITS[bytes[i]!]!) & 0x3fffff;
        count += 6;
        if (count >= 16) {
          count -= 16;
          units.push((bits >> count) & 0xffff);
        }
        i++;
      }
      // The `-` that ends a run is not text; any other byte after it is.
      if (bytes[i] === MINUS) i++;
    }
    if (units.length >= CHUNK) flush();
  }
  flush();
  return parts.join("");
}
