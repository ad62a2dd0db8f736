/**
 * A JSON string kept as the bytes of its literal instead of a JS string (issue 6: big reads).
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
import { ESCAPE_EXTRA } from "./jsonSize.js";

const QUOTE = Buffer.from('"');

/** The letter after the backslash of each short escape (`\b \t \n \f \r \" \\`). */
const SHORT_ESCAPE = (() => {
  const table = new Uint8Array(256);
  for (const [byte, letter] of [[0x08, 0x62], [0x09, 0x74], [0x0a, 0x6e], [0x0c, 0x66], [0x0d, 0x72], [0x22, 0x22], [0x5c, 0x5c]] as const) table[byte] = letter;
  return table;
})();
const HEX = Buffer.from("0123456789abcdef");

/** Stand-ins that `JSON.stringify` writes for raw strings while `stringifyWithRaw` runs. */
export const RAW_MARK = `mcpn-raw-${randomBytes(12).toString("hex")}-`;

let collecting: RawJsonString[] | null = null;

/** Buffers from `allocWithEscapeRoom` whose room has not been used yet (by their ArrayBuffer). */
const escapeRoom = new WeakSet<ArrayBuffer>();

/**
 * `size` bytes with room around them (one byte before, an eighth more after) so `ofUtf8` can
 * escape them into a JSON literal in place. Untouched room costs no memory: pages are only
 * backed once written, and on this kind of machine first-touching 50 MB costs ~0.25 s.
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
    return new RawJsonString(parts, parts.reduce((sum, part) => sum + part.length, 0), escaped);
  }

  /**
   * The literal `JSON.stringify` would write for the string whose valid UTF-8 is `utf8`: every
   * character JSON escapes is ASCII, so escaping runs over bytes. No escape needed: no copy.
   * `utf8` from `allocWithEscapeRoom` is escaped in place: it must not be read afterwards.
   */
  static ofUtf8(utf8: Buffer): RawJsonString {
    let extra = 0;
    for (let i = 0; i < utf8.length; i++) extra += ESCAPE_EXTRA[utf8[i]!]!;
    if (extra === 0) return new RawJsonString([QUOTE, utf8, QUOTE], utf8.length + 2, false);
    const room = utf8.buffer as ArrayBuffer;
    if (escapeRoom.has(room) && utf8.byteOffset >= 1 && utf8.byteOffset + utf8.length + extra < room.byteLength) {
      escapeRoom.delete(room);
      return new RawJsonString([escapeInPlace(utf8, extra)], utf8.length + extra + 2, true);
    }
    const out = Buffer.allocUnsafe(utf8.length + extra + 2);
    out[0] = 0x22;
    let at = 1;
    // Byte by byte: runs between escapes are short in real text, and a copy() call per run costs more.
    for (let i = 0; i < utf8.length; i++) {
      const byte = utf8[i]!;
      const grow = ESCAPE_EXTRA[byte];
      if (grow === 0) {
        out[at++] = byte;
      } else if (grow === 1) {
        out[at++] = 0x5c;
        out[at++] = SHORT_ESCAPE[byte]!;
      } else {
        out[at++] = 0x5c;
        out[at++] = 0x75;
        out[at++] = 0x30;
        out[at++] = 0x30;
        out[at++] = HEX[byte >> 4]!;
        out[at++] = HEX[byte & 15]!;
      }
    }
    out[at] = 0x22;
    return new RawJsonString([out], out.length, true);
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
 * Escapes `utf8` into a literal that starts one byte before it and ends `extra + 1` bytes after
 * it, back to front, so no byte is overwritten before it is read (the write position never falls
 * behind the read position: each byte's escape is at least as long as the byte).
 */
function escapeInPlace(utf8: Buffer, extra: number): Buffer {
  const view = new Uint8Array(utf8.buffer, 0, utf8.buffer.byteLength);
  const base = utf8.byteOffset;
  let w = base + utf8.length + extra - 1;
  for (let i = base + utf8.length - 1; i >= base; i--) {
    const byte = view[i]!;
    const grow = ESCAPE_EXTRA[byte];
    if (grow === 0) {
      view[w--] = byte;
    } else if (grow === 1) {
      view[w--] = SHORT_ESCAPE[byte]!;
      view[w--] = 0x5c;
    } else {
      view[w--] = HEX[byte & 15]!;
      view[w--] = HEX[byte >> 4]!;
      view[w--] = 0x30;
      view[w--] = 0x30;
      view[w--] = 0x75;
      view[w--] = 0x5c;
    }
  }
  view[base - 1] = 0x22;
  view[base + utf8.length + extra] = 0x22;
  return Buffer.from(utf8.buffer, base - 1, utf8.length + extra + 2);
}

export function isRawJsonString(value: unknown): value is RawJsonString {
  return value instanceof RawJsonString;
}

/**
 * `JSON.stringify(value)`, with every raw string left as a stand-in and listed in `raws` in the
 * order the stand-ins appear. The caller splices `raws[i]`'s bytes over `"RAW_MARK<i>"`.
 */
export function stringifyWithRaw(value: unknown): { text: string; raws: RawJsonString[] } {
  const raws: RawJsonString[] = [];
  const outer = collecting;
  collecting = raws;
  try {
    return { text: JSON.stringify(value), raws };
  } finally {
    collecting = outer;
  }
}
