/**
 * UTF-7 (RFC 2152) decoded and encoded in one pass each. iconv-lite's decoder calls into its
 * base64 and UTF-16 decoders for every shifted run, and its encoder into its UTF-16 encoder, so
 * text of many short runs (`+AGE-` over and over) took seconds a megabyte on the proxy's one
 * thread. A decode counts only when encoding its text gives back the exact bytes (charset.ts);
 * the encoder writes what iconv-lite's does — the same characters written directly, every other
 * run in base64 closed by `-`, a lone `+` as `+-` — so a text counts exactly when it did. The
 * decoder reads as iconv-lite does but where iconv-lite also drops a byte order mark (inside a
 * last run left open, or leading the whole text after one dropped): bytes that never encode back,
 * kept as they came either way.
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

const ALPHABET = Buffer.from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");

/** Characters written as themselves (iconv-lite's set: RFC 2152's Set D, space, tab, CR, LF). */
const DIRECT = (() => {
  const table = new Uint8Array(128);
  for (const ch of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'(),-./:? \n\r\t")
    table[ch.charCodeAt(0)] = 1;
  return table;
})();

const isDirect = (code: number): boolean => code < 128 && DIRECT[code] === 1;

/** `text` in UTF-7, as iconv-lite writes it. */
export function encodeUtf7(text: string): Buffer {
  // At most five bytes a character: a lone one between direct ones is `+`, three digits, `-`.
  const out = Buffer.allocUnsafe(text.length * 5);
  let o = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (isDirect(code)) {
      out[o++] = code;
      i++;
      continue;
    }
    let end = i + 1;
    while (end < text.length && !isDirect(text.charCodeAt(end))) end++;
    out[o++] = PLUS;
    if (!(end === i + 1 && code === PLUS)) {
      let bits = 0;
      let count = 0;
      for (let k = i; k < end; k++) {
        bits = (bits << 16) | text.charCodeAt(k);
        count += 16;
        while (count >= 6) {
          count -= 6;
          out[o++] = ALPHABET[(bits >> count) & 63]!;
        }
        bits &= (1 << count) - 1;
      }
      if (count > 0) out[o++] = ALPHABET[(bits << (6 - count)) & 63]!;
    }
    out[o++] = MINUS;
    i = end;
  }
  return out.subarray(0, o);
}

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
      let first = true;
      while (i < bytes.length && DIGITS[bytes[i]!]! >= 0) {
        bits = ((bits << 6) | DIGITS[bytes[i]!]!) & 0x3fffff;
        count += 6;
        if (count >= 16) {
          count -= 16;
          const unit = (bits >> count) & 0xffff;
          // A byte order mark opening a run is not text: iconv-lite reads each run as UTF-16BE
          // and drops it there.
          if (!(first && unit === 0xfeff)) units.push(unit);
          first = false;
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
