/**
 * Single-byte charsets that a detected one cannot be told apart from. chardet knows one or two
 * charsets per script and reports the nearest of those for text in any other: ISO-8859-15 comes
 * out as ISO-8859-1, Mac Roman and CP850 as windows-1252, Mac Cyrillic as windows-1251, with high
 * confidence. A guess is therefore only used when no sibling of its family reads the same bytes
 * as other text that looks as natural: where they would disagree, the bytes are ambiguous and a
 * proxy must not choose. A sibling reading that holds bytes it has no character for, control
 * characters, or the marks of a wrong charset (mojibake.ts) is not a rival.
 */
import { bytesPresent, singleByteTable, tableReadsAnyAs } from "./charset.js";
import { byteClasses, bytesLookMisdecoded } from "./mojibake.js";

const WESTERN = ["windows-1252", "iso-8859-1", "iso-8859-15", "macintosh", "cp850", "cp437"];
const CENTRAL_EUROPEAN = ["windows-1250", "iso-8859-2", "iso-8859-16", "maccenteuro", "cp852"];
const CYRILLIC = ["windows-1251", "koi8-r", "koi8-u", "iso-8859-5", "maccyrillic", "cp866"];
const GREEK = ["windows-1253", "iso-8859-7", "macgreek", "cp737", "cp869"];
const TURKISH = ["windows-1254", "iso-8859-9", "macturkish", "cp857"];
const HEBREW = ["windows-1255", "iso-8859-8", "cp862"];
const ARABIC = ["windows-1256", "iso-8859-6", "cp720", "cp864"];
const BALTIC = ["windows-1257", "iso-8859-13", "iso-8859-4", "cp775"];
const VIETNAMESE = ["windows-1258", "viscii", "tcvn"];
const THAI = ["windows-874", "tis-620", "macthai"];

/** Each single-byte charset chardet reports, with the family it stands for. */
const FAMILIES: ReadonlyMap<string, readonly string[]> = new Map(
  [WESTERN, CENTRAL_EUROPEAN, CYRILLIC, GREEK, TURKISH, HEBREW, ARABIC, BALTIC, VIETNAMESE, THAI].flatMap((family) =>
    family.map((charset) => [charset, family] as const),
  ),
);

/** C1 controls, U+FFFD (a byte the charset has no character for) and C0 controls other than text's. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const NOT_TEXT = /[\x00-\x08\x0e-\x1a\x1c-\x1f\u0080-\u009f\ufffd]/;

/** What each byte reads as in a single-byte charset, and the classes of those characters. */
interface Reading {
  readonly table: string;
  readonly classes: Uint8Array;
}
const readings = new Map<string, Reading | null>();

function readingOf(charset: string): Reading | null {
  let reading = readings.get(charset);
  if (reading === undefined) {
    const table = singleByteTable(charset);
    reading = table === null ? null : { table, classes: byteClasses(table) };
    readings.set(charset, reading);
  }
  return reading;
}

/**
 * Why the bytes, detected as the single-byte `charset`, are not safe to transcode in it: what
 * they read as there looks misdecoded, or a sibling reads them as different plausible text.
 * Null when neither: every sibling agrees on the bytes present or gives no plausible text.
 */
export function siblingAmbiguity(
  bytes: Uint8Array,
  charset: string,
  present: Uint8Array = bytesPresent(bytes),
): string | null {
  const family = FAMILIES.get(charset);
  const own = readingOf(charset);
  if (family === undefined || own === null) return null;
  if (bytesLookMisdecoded(bytes, own.classes))
    return "the text it gives looks misdecoded (a symbol, another script or a change of case inside a word)";
  for (const sibling of family) {
    const other = sibling === charset ? null : readingOf(sibling);
    if (other === null || !differsOn(own.table, other.table, present)) continue;
    if (!tableReadsAnyAs(other.table, present, NOT_TEXT) && !bytesLookMisdecoded(bytes, other.classes))
      return `${sibling} (which chardet cannot tell apart) reads the bytes as other text`;
  }
  return null;
}

function differsOn(a: string, b: string, present: Uint8Array): boolean {
  for (let byte = 0; byte < 256; byte++) if (present[byte] === 1 && a[byte] !== b[byte]) return true;
  return false;
}
