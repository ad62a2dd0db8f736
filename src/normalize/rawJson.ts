/**
 * A JSON string kept as the bytes of its literal instead of a JS string (issue 6: big reads).
 *
 * A 50 MiB resource held as a JS string costs a UTF-8 decode, a UTF-16 copy (two bytes per
 * character once one character is outside Latin-1), a second copy inside `JSON.stringify`, and an
 * encode back to UTF-8 — four passes and ~4× the message in memory. The proxy's stdio upstream
 * therefore reads very long `blob`/`text`/`data` literals as `RawJsonString`s (the rest of the
 * message is parsed as usual), the engine decodes a raw base64 blob straight from its bytes, and
 * the host transports splice the literals' bytes into their output.
 *
 * Anything else that meets a `RawJsonString` still sees the right value: `JSON.stringify` (via
 * `toJSON`) and `value()` give the string it stands for.
 */
import { randomBytes } from "node:crypto";

const QUOTE = Buffer.from('"');

/** Extra JSON bytes per byte value: `\n`-style escapes add 1, `\u00XX` escapes add 5. */
export const ESCAPE_EXTRA = (() => {
  const table = new Uint8Array(256);
  for (let c = 0; c < 0x20; c++) table[c] = 5;
  for (const c of [0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x22, 0x5c]) table[c] = 1;
  return table;
})();

const SHORT_ESCAPE: Record<number, number> = { 0x08: 0x62, 0x09: 0x74, 0x0a: 0x6e, 0x0c: 0x66, 0x0d: 0x72, 0x22: 0x22, 0x5c: 0x5c };
const HEX = Buffer.from("0123456789abcdef");

/** Stand-ins that `JSON.stringify` writes for raw strings while `stringifyWithRaw` runs. */
export const RAW_MARK = `mcpn-raw-${randomBytes(12).toString("hex")}-`;

let collecting: RawJsonString[] | null = null;

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

  /** A literal read from the wire (already validated by the reader). */
  static ofLiteral(literal: Buffer, escaped: boolean): RawJsonString {
    return new RawJsonString([literal], literal.length, escaped);
  }

  /**
   * The literal `JSON.stringify` would write for the string whose valid UTF-8 is `utf8`: every
   * character JSON escapes is ASCII, so escaping runs over bytes. No escape needed: no copy.
   */
  static ofUtf8(utf8: Buffer): RawJsonString {
    let extra = 0;
    for (let i = 0; i < utf8.length; i++) extra += ESCAPE_EXTRA[utf8[i]!]!;
    if (extra === 0) return new RawJsonString([QUOTE, utf8, QUOTE], utf8.length + 2, false);
    const out = Buffer.allocUnsafe(utf8.length + extra + 2);
    out[0] = 0x22;
    let at = 1;
    let runStart = 0;
    for (let i = 0; i < utf8.length; i++) {
      const byte = utf8[i]!;
      if (ESCAPE_EXTRA[byte] === 0) continue;
      if (i > runStart) at += utf8.copy(out, at, runStart, i);
      runStart = i + 1;
      out[at++] = 0x5c;
      const short = SHORT_ESCAPE[byte];
      if (short !== undefined) {
        out[at++] = short;
      } else {
        out[at++] = 0x75;
        out[at++] = 0x30;
        out[at++] = 0x30;
        out[at++] = HEX[byte >> 4]!;
        out[at++] = HEX[byte & 15]!;
      }
    }
    if (utf8.length > runStart) at += utf8.copy(out, at, runStart, utf8.length);
    out[at] = 0x22;
    return new RawJsonString([out], out.length, true);
  }

  /** The body's bytes (quotes excluded) when the literal has no escapes: the string's UTF-8. */
  plainBody(): Buffer | null {
    if (this.escaped) return null;
    if (this.parts.length === 3) return this.parts[1]!;
    const literal = this.parts[0]!;
    return this.parts.length === 1 ? literal.subarray(1, literal.length - 1) : null;
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
