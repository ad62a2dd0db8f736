/**
 * Strict standard base64 (RFC 4648 §4). Accepted leniencies, because real servers send them:
 * line breaks and spaces (MIME style, RFC 2045 §6.8) and missing `=` padding. Rejected: the
 * base64url alphabet (`-`, `_`), padding anywhere but the end, any other character.
 *
 * Node's own decoder is lenient (it skips unknown characters and accepts base64url), so it is
 * used for speed and its output length is checked against the length the input implies.
 */
import { allocWithEscapeRoom } from "../wire/rawJson.js";
import { isAsciiString } from "./textEvidence.js";

const WHITESPACE = /[\t\n\r ]/g;

/** Bytes that `dataChars` base64 characters (padding excluded) stand for. */
function decodedLength(dataChars: number): number {
  const remainder = dataChars % 4;
  return Math.floor(dataChars / 4) * 3 + (remainder === 0 ? 0 : remainder - 1);
}

/**
 * Why a length check is enough: Node skips every character outside the alphabet (whitespace,
 * `=` inside the data, anything else) and the decoded length strictly grows with the number of
 * data characters (remainder 1 is rejected), so one skipped character means a short result.
 * Only the base64url characters, which Node decodes as data, need a scan of their own.
 */
export function decodeStrictBase64(input: string): Buffer | null {
  const n = input.length;
  // Node reads a character outside ASCII as its low byte (U+0149 as "I"): such a string is no
  // base64, however well it decodes.
  if (!isAsciiString(input)) return null;
  const dataChars = compactDataChars(n, input.charCodeAt(n - 1), input.charCodeAt(n - 2));
  if (dataChars !== null) {
    // Fast path, one decode and two scans: compact base64 as nearly every server sends it.
    const bytes = Buffer.from(input, "base64");
    if (bytes.length === decodedLength(dataChars)) {
      return input.indexOf("-") === -1 && input.indexOf("_") === -1 ? bytes : null;
    }
  }
  return decodeSlow(input);
}

/**
 * The data characters of `n` base64 characters ending in `last`, `beforeLast`, when that shape
 * can be compact base64 (padding only at the end, only where a group needs it); else null.
 */
function compactDataChars(n: number, last: number | undefined, beforeLast: number | undefined): number | null {
  const padding = n > 0 && last === 0x3d ? (n > 1 && beforeLast === 0x3d ? 2 : 1) : 0;
  const dataChars = n - padding;
  return dataChars % 4 !== 1 && (padding === 0 || n % 4 === 0) ? dataChars : null;
}

/** MIME-style base64 (line breaks, spaces) or invalid input: validated after removing whitespace. */
function decodeSlow(input: string): Buffer | null {
  const s = input.replace(WHITESPACE, "");
  if (s.indexOf("-") !== -1 || s.indexOf("_") !== -1) return null;
  const firstPad = s.indexOf("=");
  let padding = 0;
  if (firstPad !== -1) {
    padding = s.length - firstPad;
    if (padding > 2 || (padding === 2 && s[s.length - 1] !== "=")) return null;
    if (s.length % 4 !== 0) return null;
  }
  const dataChars = s.length - padding;
  if (dataChars % 4 === 1) return null;
  const bytes = Buffer.from(s, "base64");
  // Node skips characters outside the alphabet; a short result means there were some.
  return bytes.length === decodedLength(dataChars) ? bytes : null;
}

/**
 * True when `input`, which decoded strictly to `byteLength` bytes, is compact: data characters
 * plus only its trailing `=` (so no whitespace that JSON would have to escape). The decoded
 * length fixes the number of data characters, so the rest must be all padding.
 */
export function isCompactBase64Length(input: string, byteLength: number): boolean {
  const dataChars = Math.ceil((byteLength * 4) / 3);
  const rest = input.length - dataChars;
  if (rest === 0) return true;
  if (rest !== 1 && rest !== 2) return false;
  const n = input.length;
  return input.charCodeAt(n - 1) === 0x3d && (rest === 1 || input.charCodeAt(n - 2) === 0x3d);
}

export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** Base64 characters decoded per step from bytes: a multiple of 4, so steps never split a group. */
const ASCII_STEP_CHARS = 64 * 1024;

/**
 * `decodeStrictBase64` of the string whose ASCII bytes are `parts` joined (a raw `blob` literal),
 * without making a string of the whole: compact base64 is decoded step by step into one buffer,
 * each step's output length checked as in the fast path (small steps, so each step's string dies
 * young). Anything else (whitespace, bad characters) goes to the string path, which decides
 * exactly as before.
 */
export function decodeStrictBase64Ascii(parts: readonly Buffer[]): Buffer | null {
  const n = parts.reduce((sum, part) => sum + part.length, 0);
  const dataChars = compactDataChars(n, fromEnd(parts, 0), fromEnd(parts, 1));
  if (dataChars !== null && parts.every((part) => part.indexOf(0x2d) === -1 && part.indexOf(0x5f) === -1)) {
    const out = decodeSteps(parts, n, decodedLength(dataChars));
    if (out !== null) return out;
  }
  return decodeStrictBase64(parts.map((part) => part.toString("ascii")).join(""));
}

function decodeSteps(parts: readonly Buffer[], n: number, size: number): Buffer | null {
  // With room to escape the bytes in place, should they be UTF-8 text bound for a raw literal.
  const out = allocWithEscapeRoom(size);
  let written = 0;
  let seen = 0;
  let carry = "";
  for (const part of parts) {
    for (let at = 0; at < part.length; at += ASCII_STEP_CHARS) {
      const end = Math.min(part.length, at + ASCII_STEP_CHARS);
      seen += end - at;
      // "ascii", not "latin1": the same string for ASCII bytes, and Node decodes its base64 faster.
      const chars = carry + part.toString("ascii", at, end);
      const final = seen === n;
      const take = final ? chars.length : chars.length - (chars.length % 4);
      carry = chars.slice(take);
      const expected = final ? size - written : (take / 4) * 3;
      const got = out.write(take === chars.length ? chars : chars.slice(0, take), written, expected, "base64");
      if (got !== expected) return null;
      written += got;
    }
  }
  return written === size ? out : null;
}

/** The byte `k` places before the end of the joined parts (undefined when there is none). */
function fromEnd(parts: readonly Buffer[], k: number): number | undefined {
  for (let p = parts.length - 1; p >= 0; p--) {
    const part = parts[p]!;
    if (k < part.length) return part[part.length - 1 - k];
    k -= part.length;
  }
  return undefined;
}
