/**
 * Evidence about strings and bytes: control characters, binary strings (bytes smuggled into a
 * JSON string one per code unit), and surrogate-escaped bytes (U+DC80–U+DCFF, as Python's
 * `surrogateescape` produces).
 */
import { detectSignature } from "./signature.js";

/** C0 controls that do not occur in text: all but TAB, LF, VT, FF, CR and ESC. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const BINARY_CONTROL = /[\x00-\x08\x0e-\x1a\x1c-\x1f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is "anything above Latin-1", from U+0000 on.
const ABOVE_LATIN1 = /[^\x00-\xff]/;

/** Every character ASCII: its UTF-8 length is its length only then (a native scan). */
export function isAsciiString(text: string): boolean {
  return Buffer.byteLength(text, "utf8") === text.length;
}

export function hasBinaryControls(text: string): boolean {
  return BINARY_CONTROL.test(text);
}

/**
 * Characters binary bytes decode to and text holds none of: controls but TAB, LF, VT, FF, CR, ESC
 * (C0, DEL, C1), private-use and unassigned code points, U+FFFD and the noncharacters.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const NOT_IN_TEXT = /[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f\p{Co}\p{Cn}\ufffd]/u;
/** Fewer characters than this cannot show that a wide-charset decode is text rather than chance. */
export const WIDE_TEXT_MIN_CHARS = 8;

/**
 * Whether text decoded from UTF-16 or UTF-32 on the word of a byte order mark alone reads as
 * text. Nearly any even run of bytes decodes as UTF-16; binary bytes give a spread over the
 * whole plane, private-use and unassigned code points and controls among them, where text gives
 * none.
 */
export function readsAsWideText(text: string): boolean {
  return text.length >= WIDE_TEXT_MIN_CHARS && !NOT_IN_TEXT.test(text);
}

const BINARY_CONTROL_BYTE = (() => {
  const table = new Uint8Array(256);
  for (let c = 0; c < 0x20; c++) table[c] = BINARY_CONTROL.test(String.fromCharCode(c)) ? 1 : 0;
  return table;
})();

/**
 * `hasBinaryControls` of the text whose UTF-8 is `utf8`: the controls are ASCII, and no byte of a
 * multi-byte UTF-8 sequence is below 0x80, so the bytes can be searched without decoding them.
 */
export function hasBinaryControlBytes(utf8: Uint8Array): boolean {
  for (let i = 0; i < utf8.length; i++) if (BINARY_CONTROL_BYTE[utf8[i]!] === 1) return true;
  return false;
}

/**
 * A string whose every code unit is ≤ U+00FF and that carries binary evidence: a NUL anywhere,
 * or — when its declared type does not already say it is text — other binary controls or a
 * binary signature. In text declared textual with letters past ASCII ("café\0"), a NUL counts
 * only with a binary signature: read as bytes one per character such text would not be the
 * UTF-8 it is, and a stray NUL in text is as likely as bytes smuggled, so it stays as it is.
 * Outputs the engine produces as text never satisfy this (they contain no NUL and carry a
 * textual type), which keeps the transform idempotent.
 */
export function isBinaryString(text: string, declaredTextual: boolean): boolean {
  if (text.length === 0 || ABOVE_LATIN1.test(text)) return false;
  const hasNul = text.indexOf("\u0000") !== -1;
  if (hasNul && (!declaredTextual || isAsciiString(text))) return true;
  if (declaredTextual) return hasNul && hasBinarySignature(text);
  return hasBinaryControls(text) || hasBinarySignature(text);
}

/** A binary format's start, read from a string of bytes one per character. */
function hasBinarySignature(text: string): boolean {
  // Bytes of a binary format carried one per character have some above ASCII; plain ASCII text
  // that starts like one ("GIF89a is…", "%PDF-1.7 added…") is text.
  // A PDF may be all ASCII (uncompressed, no binary comment): taken as one when it is whole.
  if (isAsciiString(text)) return text.startsWith("%PDF-") && text.includes("%%EOF");
  return detectSignature(Buffer.from(text.slice(0, 512), "latin1")) !== null;
}

export type SurrogateShape = "well-formed" | "escaped-bytes" | "unrepresentable";

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

export function surrogateShape(text: string): SurrogateShape {
  if (isWellFormed(text)) return "well-formed";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return "unrepresentable";
    }
    if (c >= 0xdc00 && c <= 0xdfff && (c < 0xdc80 || c > 0xdcff)) return "unrepresentable";
  }
  return "escaped-bytes";
}

/** The bytes a surrogate-escaped string stands for: UTF-8 for characters, raw for U+DCxx. */
export function recoverEscapedBytes(text: string): Buffer {
  // One buffer, written in place: its UTF-8 length is an upper bound (an escaped byte, a lone
  // surrogate, counts 3 there and is 1 here). Two small buffers per escaped byte, joined after,
  // cost seconds and gigabytes on text that alternates them.
  const out = Buffer.allocUnsafe(Buffer.byteLength(text, "utf8"));
  let at = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      continue;
    }
    if (c >= 0xdc80 && c <= 0xdcff) {
      if (i > start) at += out.write(text.slice(start, i), at, "utf8");
      out[at++] = c - 0xdc00;
      start = i + 1;
    }
  }
  if (start < text.length) at += out.write(text.slice(start), at, "utf8");
  return out.subarray(0, at);
}
