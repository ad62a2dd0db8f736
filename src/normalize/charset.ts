/**
 * Strict charset decoding (decode strictly or leave the content alone). iconv-lite never fails:
 * it substitutes U+FFFD. Its table-driven charsets (single-byte, and the double-byte ones:
 * Shift_JIS, EUC-JP, GBK, GB18030, Big5, EUC-KR…) read every byte sequence they have no
 * character for as U+FFFD, so a decode without one is exact, even where the table maps two byte
 * sequences to one character and encoding back gives the other (EUC-JP A1C1 and 8FA2B7 are both
 * U+FF5E). A decode that holds U+FFFD or a private-use character (what Shift_JIS's user-defined
 * rows read as: no character the charset defines), and every other charset (UTF-16/32, UTF-7),
 * is checked by encoding the result back: only a decode that reproduces the exact bytes counts.
 */
import { createRequire } from "node:module";
import { TextDecoder } from "node:util";
import type IconvLite from "iconv-lite";
import { decodeUtf7, encodeUtf7 } from "./utf7.js";

const require = createRequire(import.meta.url);
let iconvLite: typeof IconvLite | undefined;

/** iconv-lite, loaded (synchronously) the first time a charset is looked at: not at start-up. */
function iconv(): typeof IconvLite {
  iconvLite ??= require("iconv-lite") as typeof IconvLite;
  return iconvLite;
}

/** The names of UTF-7 (not UTF-7-IMAP, which shifts with `&`): decoded and encoded by utf7.ts. */
const UTF7_NAMES: ReadonlySet<string> = new Set(["utf-7", "utf7", "x-utf-7", "unicode-1-1-utf-7", "csunicode11utf7"]);

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

export type Bom = {
  readonly charset: "utf-8" | "utf-16le" | "utf-16be" | "utf-32le" | "utf-32be";
  readonly length: number;
};

export function detectBom(bytes: Uint8Array): Bom | null {
  const b0 = bytes[0];
  const b1 = bytes[1];
  if (b0 === 0xef && b1 === 0xbb && bytes[2] === 0xbf) return { charset: "utf-8", length: 3 };
  if (b0 === 0xff && b1 === 0xfe) {
    return bytes[2] === 0 && bytes[3] === 0 && bytes.length >= 4
      ? { charset: "utf-32le", length: 4 }
      : { charset: "utf-16le", length: 2 };
  }
  if (b0 === 0xfe && b1 === 0xff) return { charset: "utf-16be", length: 2 };
  if (b0 === 0 && b1 === 0 && bytes[2] === 0xfe && bytes[3] === 0xff) return { charset: "utf-32be", length: 4 };
  return null;
}

const UTF8_NAMES = new Set(["utf-8", "utf8", "unicode-1-1-utf-8", "unicode-2-0-utf-8", "x-unicode20utf8"]);
const ASCII_NAMES = new Set(["us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us", "us", "cp367", "iso-ir-6"]);

/** Lowercased and trimmed; UTF-8 spellings folded to "utf-8", ASCII spellings to "us-ascii". */
export function canonicalCharset(name: string): string {
  const lower = name.trim().toLowerCase();
  if (UTF8_NAMES.has(lower)) return "utf-8";
  if (ASCII_NAMES.has(lower)) return "us-ascii";
  return lower;
}

/**
 * Labels the WHATWG Encoding Standard (what browsers do) decodes as windows-1252: servers that
 * say ISO-8859-1 or US-ASCII mostly send windows-1252, whose letters and signs at 0x80–0x9F
 * (€ — “ ” ‹ œ…) ISO-8859-1 would turn into C1 control characters.
 */
const WINDOWS_1252_LABELS = new Set([
  "us-ascii",
  "ascii",
  "ansi_x3.4-1968",
  "cp819",
  "csisolatin1",
  "ibm819",
  "iso-8859-1",
  "iso-ir-100",
  "iso8859-1",
  "iso88591",
  "iso_8859-1",
  "iso_8859-1:1987",
  "l1",
  "latin1",
]);

/** Labels of 16-bit Unicode that leave the byte order open (UTF-16LE/BE name theirs). */
const OPEN_ORDER_16 = new Set(["utf-16", "utf16", "ucs-2", "ucs2", "iso-10646-ucs-2", "csunicode", "unicode"]);

/** Bytes looked at for the byte order of unmarked 16-bit text. */
const ORDER_SAMPLE_BYTES = 4096;

/**
 * The charset bytes declared as `charset` (canonical) and without a BOM are decoded in. 16-bit
 * text whose label leaves the byte order open is read little-endian when its bytes show it
 * (`looksLittleEndian`; Windows writes UTF-16LE and labels it "utf-16" or "unicode"). Without
 * that evidence it is big-endian, as is UTF-32 without a BOM (RFC 2781 §4.3, Unicode §3.10).
 */
export function decodingCharset(charset: string, bytes?: Uint8Array): string {
  if (OPEN_ORDER_16.has(charset)) return bytes !== undefined && looksLittleEndian(bytes) ? "utf-16le" : "utf-16be";
  if (charset === "utf-32" || charset === "utf32") return "utf-32be";
  return WINDOWS_1252_LABELS.has(charset) ? "windows-1252" : charset;
}

/** Fewest units whose second byte is zero that can say "little-endian" on their own. */
const MIN_ZERO_EVIDENCE = 4;

/**
 * Evidence that the second byte of each pair is the high byte of its unit. Either of two kinds:
 * that byte is zero in nearly every unit (Latin letters, digits, spaces, a run of one of them —
 * in big-endian text a zero low byte is one character in 256, U+4E00 or an emoji's DE00); or it
 * takes at most half as many values as the first (the high byte names the script's block and
 * repeats — 0x04 Cyrillic, 0x05 Hebrew — the low byte varies), or fewer and is zero more often
 * (Latin among CJK; three zeros at least). Short big-endian CJK, whose two bytes vary alike,
 * meets none.
 */
function looksLittleEndian(bytes: Uint8Array): boolean {
  const seen = [new Set<number>(), new Set<number>()];
  const zeros = [0, 0];
  const end = Math.min(bytes.length, ORDER_SAMPLE_BYTES) & ~1;
  for (let i = 0; i < end; i++) {
    seen[i & 1]!.add(bytes[i]!);
    if (bytes[i] === 0) zeros[i & 1]!++;
  }
  const units = end / 2;
  const [first, second] = zeros as [number, number];
  if (second >= MIN_ZERO_EVIDENCE && 4 * second >= 3 * units && 4 * first <= second) return true;
  const [firstValues, secondValues] = [seen[0]!.size, seen[1]!.size];
  return 2 * secondValues <= firstValues || (secondValues < firstValues && second >= 3 && second > 2 * first);
}

/** UTF-8 and its subset ASCII: bytes in these need no transcoding. */
export function isUtf8Family(charset: string): boolean {
  return charset === "utf-8" || charset === "us-ascii";
}

/** UTF-16/32 are not ASCII-compatible: their text is full of NUL bytes. */
export function isWideCharset(charset: string): boolean {
  return OPEN_ORDER_16.has(charset) || /^(utf-?16|utf-?32|ucs-?2|ucs-?4)/.test(charset);
}

/**
 * Encodings of 7-bit bytes that switch character sets with escape or shift sequences (ISO-2022,
 * UTF-7, HZ): their bytes are ASCII, so "valid UTF-8" says nothing about them.
 */
export function isSevenBitCharset(charset: string): boolean {
  return /^(iso-?2022|csiso2022|utf-?7|x-utf-?7|unicode-1-1-utf-7|hz-gb-2312)/.test(charset);
}

/**
 * Names iconv-lite answers to that are Node's ways of spelling bytes as text, not charsets: a
 * "decode" in them gives the bytes' base64 or hex spelling (which encodes back exactly), and
 * `binary` is Node's ISO-8859-1 (C1 controls, not the windows-1252 the label means on the web).
 * Told by the codec a name resolves to, not by the name: iconv-lite reads `Base-64`, `base64:1987`
 * and aliases as the same codec.
 */
const BYTE_SPELLINGS = new Set(["base64", "hex", "binary"]);

export function charsetKnown(charset: string): boolean {
  if (!iconv().encodingExists(charset)) return false;
  // Node's own encodings are iconv-lite's internal codecs, which name the encoding in `enc`.
  const codec = iconv().getCodec(charset) as { enc?: unknown };
  return !(typeof codec.enc === "string" && BYTE_SPELLINGS.has(codec.enc));
}

/**
 * What each of the 256 byte values reads as in the single-byte `charset` (U+FFFD where it has
 * none), or null when `charset` is unknown or not single-byte.
 */
export function singleByteTable(charset: string): string | null {
  const cached = singleByteTables.get(charset);
  if (cached !== undefined) return cached;
  let table: string | null = null;
  if (charsetKnown(charset)) {
    const decoded = iconv().decode(ALL_BYTES, charset, { stripBOM: false });
    table = decoded.length === 256 ? decoded : null;
  }
  singleByteTables.set(charset, table);
  return table;
}
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, b) => b));
const singleByteTables = new Map<string, string | null>();

/** Each of the 256 byte values: 1 where it occurs in `bytes`, else 0. One pass, no strings. */
export function bytesPresent(bytes: Uint8Array): Uint8Array {
  const present = new Uint8Array(256);
  for (let i = 0; i < bytes.length; i++) present[bytes[i]!] = 1;
  return present;
}

/** A test of one character: a RegExp, or any predicate shaped like one. */
export interface CharacterTest {
  test(character: string): boolean;
}

/**
 * Whether a character `characters` matches is among what the present bytes read as in the
 * single-byte `table`: the same answer as testing the decoded text, which is those characters
 * one per byte, without scanning it.
 */
export function tableReadsAnyAs(table: string, present: Uint8Array, characters: CharacterTest): boolean {
  for (let byte = 0; byte < 256; byte++) if (present[byte] === 1 && characters.test(table[byte]!)) return true;
  return false;
}

/** A surrogate code unit: a table that reads a byte as one could give text that is not well formed. */
const SURROGATE = /[\ud800-\udfff]/;

/** Node's (ICU's) TextDecoder for a label, or null where it has none. */
function nativeDecoder(charset: string): TextDecoder | null {
  let decoder = nativeDecoders.get(charset);
  if (decoder === undefined) {
    try {
      decoder = new TextDecoder(charset);
    } catch {
      decoder = null;
    }
    nativeDecoders.set(charset, decoder);
  }
  return decoder;
}
const nativeDecoders = new Map<string, TextDecoder | null>();

/**
 * `decodeStrict` of bytes in a single-byte charset, decided from its 256-character table and the
 * byte values present instead of from the decoded text, and decoded natively: as ISO-8859-1
 * (Node's "latin1") where every byte present reads as itself, else with ICU's decoder where
 * that reads every byte present as the table does, else from the table's code units in one
 * buffer. A single-byte decode is the table's characters one per byte, so the text is the same
 * as iconv-lite's. Undefined where this cannot decide exactly (a byte read as U+FFFD, a
 * private-use character or a surrogate, which the slow path checks by round trip): the caller
 * takes the slow path.
 */
function decodeSingleByteFast(input: Buffer, charset: string, present: Uint8Array): string | undefined {
  const table = singleByteTable(charset);
  if (table === null || tableReadsAnyAs(table, present, NOT_DEFINED) || tableReadsAnyAs(table, present, SURROGATE))
    return undefined;
  let identity = true;
  for (let byte = 0; byte < 256 && identity; byte++)
    if (present[byte] === 1 && table.charCodeAt(byte) !== byte) identity = false;
  if (identity) return input.toString("latin1");
  const decoder = nativeDecoder(charset);
  if (decoder !== null && readsAsTable(decoder, table, present)) return decoder.decode(input);
  // No native decoder reads these bytes as the table does (Node 20's windows-1252 is ISO-8859-1
  // at 0x80–0x9F, and it has no cp437): the table's code units, written into one buffer.
  const units = new Uint16Array(input.length);
  const codes = tableCodeUnits(table);
  for (let i = 0; i < input.length; i++) units[i] = codes[input[i]!]!;
  return Buffer.from(units.buffer, units.byteOffset, units.byteLength).toString("utf16le");
}

/** Whether `decoder` reads every byte present as one character, the one `table` has for it. */
function readsAsTable(decoder: TextDecoder, table: string, present: Uint8Array): boolean {
  const native = decoder.decode(ALL_BYTES);
  if (native.length !== 256) return false;
  for (let byte = 0; byte < 256; byte++) if (present[byte] === 1 && native[byte] !== table[byte]) return false;
  return true;
}

function tableCodeUnits(table: string): Uint16Array {
  return Uint16Array.from({ length: 256 }, (_, byte) => table.charCodeAt(byte));
}

/**
 * Decodes `bytes` in `charset`, or returns null when that is not exact and lossless. `present`
 * (`bytesPresent(bytes)`, when the caller has it) lets a single-byte charset be decided and
 * decoded without iconv-lite's per-byte loop or scans of the text (decodeSingleByteFast).
 */
export function decodeStrict(bytes: Uint8Array, charset: string, present?: Uint8Array): string | null {
  if (!charsetKnown(charset)) return null;
  const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!UTF7_NAMES.has(charset) && tableKind(charset) === "single") {
    const fast = decodeSingleByteFast(input, charset, present ?? bytesPresent(bytes));
    if (fast !== undefined) return fast;
  }
  let text: string;
  try {
    const fast = UTF7_NAMES.has(charset) ? decodeUtf7(input) : undefined;
    if (fast === null) return null;
    text = fast ?? iconv().decode(input, charset, { stripBOM: false });
  } catch {
    return null;
  }
  // UTF-16/32 round-trip lone surrogates, which UTF-8 (and so a JSON text for a host) cannot
  // carry: such bytes are not text (found by test/normalize/properties.test.ts).
  if (!isWellFormed(text)) return null;
  const table = tableKind(charset);
  if (table !== undefined && !NOT_DEFINED.test(text)) return text;
  // A single-byte table decodes to U+FFFD only a byte it has no character for, and may encode
  // U+FFFD back to that byte: the round trip below would take it for text. (A multi-byte
  // charset such as GB18030 can encode a real U+FFFD: there the round trip decides.)
  if (table === "single" && text.includes("\ufffd")) return null;
  let back: Buffer;
  try {
    back = UTF7_NAMES.has(charset) ? encodeUtf7(text) : iconv().encode(text, charset, { addBOM: false });
  } catch {
    return null;
  }
  return back.equals(input) ? text : null;
}

/**
 * The 256-character table of a charset iconv-lite decodes one byte per character from a table,
 * or null: text decoded in it is exactly the table's characters, one per byte.
 */
export function singleByteCharsetTable(charset: string): string | null {
  return charsetKnown(charset) && !UTF7_NAMES.has(charset) && tableKind(charset) === "single"
    ? singleByteTable(charset)
    : null;
}

/** U+FFFD, where a table has no character, and the Private Use Area, where it has no defined one. */
const NOT_DEFINED = /[\ufffd\ue000-\uf8ff]/;

/** How iconv-lite decodes a charset: from a single- or a double-byte table, or with an algorithm (undefined). */
function tableKind(charset: string): "single" | "double" | undefined {
  const codec = iconv().getCodec(charset) as { decodeBuf?: unknown; decodeTables?: unknown };
  return codec.decodeBuf !== undefined ? "single" : codec.decodeTables !== undefined ? "double" : undefined;
}
