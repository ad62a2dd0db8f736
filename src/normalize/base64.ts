/**
 * Strict standard base64 (RFC 4648 §4). Accepted leniencies, because real servers send them:
 * line breaks and spaces (MIME style, RFC 2045 §6.8) and missing `=` padding. Rejected: the
 * base64url alphabet (`-`, `_`), padding anywhere but the end, any other character.
 *
 * Node's own decoder is lenient (it skips unknown characters and accepts base64url), so it is
 * used for speed and its output length is checked against the length the input implies.
 */

const WHITESPACE = /[\t\n\r ]/g;

export function decodeStrictBase64(input: string): Buffer | null {
  let s = input;
  if (s.indexOf("\n") !== -1 || s.indexOf("\r") !== -1 || s.indexOf(" ") !== -1 || s.indexOf("\t") !== -1) {
    s = s.replace(WHITESPACE, "");
  }
  if (s.indexOf("-") !== -1 || s.indexOf("_") !== -1) return null;
  const firstPad = s.indexOf("=");
  let padding = 0;
  if (firstPad !== -1) {
    padding = s.length - firstPad;
    if (padding > 2 || (padding === 2 && s[s.length - 1] !== "=")) return null;
    if (s.length % 4 !== 0) return null;
  }
  const dataChars = s.length - padding;
  const remainder = dataChars % 4;
  if (remainder === 1) return null;
  const expected = Math.floor(dataChars / 4) * 3 + (remainder === 0 ? 0 : remainder - 1);
  const bytes = Buffer.from(s, "base64");
  // Node skips characters outside the alphabet; a short result means there were some.
  return bytes.length === expected ? bytes : null;
}

export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}
