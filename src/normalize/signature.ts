/**
 * Binary signatures ("magic numbers") read from the first bytes of a content. A small table of
 * our own rather than `file-type`: the engine must stay synchronous and pure, and only a
 * verdict "this is binary, of this type" is needed. test/normalize/signature.test.ts checks the
 * table agrees with file-type on the whole corpus; bench/core.mjs measures both.
 */
import { isUtf8 } from "node:buffer";
import { canonicalEssence } from "./mimeTables.js";

export interface Signature {
  /** The media type the bytes announce. */
  readonly mime: string;
  /** Types that share the container (ZIP-based office files, ISO-BMFF audio/video…). */
  readonly family?: string;
  /**
   * A magic of a dozen bits or so (an MPEG audio or ADTS frame sync, JPEG XL's bare codestream):
   * text in a legacy or UTF-16 charset can start with it (windows-1251 "яв", UTF-16BE U+FFE3), so
   * it yields to a declared textual type whose charset reads the bytes as text.
   */
  readonly weak?: true;
}

function ascii(bytes: Uint8Array, offset: number, text: string): boolean {
  if (bytes.length < offset + text.length) return false;
  for (let i = 0; i < text.length; i++) {
    if (bytes[offset + i] !== text.charCodeAt(i)) return false;
  }
  return true;
}

function at(bytes: Uint8Array, offset: number, values: readonly number[]): boolean {
  if (bytes.length < offset + values.length) return false;
  for (let i = 0; i < values.length; i++) {
    if (bytes[offset + i] !== values[i]) return false;
  }
  return true;
}

function u32le(bytes: Uint8Array, offset: number): number {
  return (bytes[offset]! | (bytes[offset + 1]! << 8) | (bytes[offset + 2]! << 16) | (bytes[offset + 3]! << 24)) >>> 0;
}

const HEIF_BRANDS = new Set(["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"]);

/** Longest `ftyp` box taken for one: real ones hold a handful of brands (tens of bytes). */
const MAX_FTYP_BOX = 1024;

function isoBmff(bytes: Uint8Array): Signature | null {
  if (!ascii(bytes, 4, "ftyp") || bytes.length < 12) return null;
  // The box's size comes first, big-endian: text that merely says "ftyp" ("The ftyp box…") has
  // letters there, a size of a gigabyte.
  const size = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
  if (size < 12 || size > MAX_FTYP_BOX || size % 4 !== 0) return null;
  const brand = String.fromCharCode(bytes[8]!, bytes[9]!, bytes[10]!, bytes[11]!);
  if (brand === "avif" || brand === "avis") return { mime: "image/avif" };
  if (HEIF_BRANDS.has(brand)) {
    // AVIF files may name the generic HEIF brand first and `avif` among the compatible ones.
    for (let at = 16; at + 4 <= Math.min(size, bytes.length); at += 4)
      if (ascii(bytes, at, "avif") || ascii(bytes, at, "avis")) return { mime: "image/avif" };
    return { mime: "image/heic" };
  }
  if (brand === "M4A " || brand === "M4B " || brand === "M4P ") return { mime: "audio/mp4", family: "isobmff" };
  if (brand === "qt  ") return { mime: "video/quicktime", family: "isobmff" };
  if (brand.startsWith("3g")) return { mime: "video/3gpp", family: "isobmff" };
  return { mime: "video/mp4", family: "isobmff" };
}

/** MPEG audio frame header: sync, a defined version and layer, a usable bitrate and rate. */
function mpegAudio(bytes: Uint8Array): Signature | null {
  if (bytes.length < 4 || bytes[0] !== 0xff || (bytes[1]! & 0xe0) !== 0xe0) return null;
  const version = (bytes[1]! >> 3) & 0x03;
  const layer = (bytes[1]! >> 1) & 0x03;
  if (version === 0x01) return null;
  if (layer === 0x00) {
    // ADTS: layer bits 00 with MPEG-4/2 AAC.
    return (bytes[1]! & 0xf6) === 0xf0 ? { mime: "audio/aac", weak: true } : null;
  }
  // Layer I (bits 11) is practically unused and would take the UTF-16/32 LE BOM (FF FE) for a frame.
  if (layer === 0x03) return null;
  const bitrate = bytes[2]! >> 4;
  const rate = (bytes[2]! >> 2) & 0x03;
  if (bitrate === 0x0f || rate === 0x03) return null;
  return { mime: "audio/mpeg", weak: true };
}

function matroska(bytes: Uint8Array): Signature | null {
  if (!at(bytes, 0, [0x1a, 0x45, 0xdf, 0xa3])) return null;
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 64));
  return head.includes("webm")
    ? { mime: "video/webm", family: "matroska" }
    : { mime: "video/x-matroska", family: "matroska" };
}

function riff(bytes: Uint8Array): Signature | null {
  if (!ascii(bytes, 0, "RIFF")) return null;
  if (ascii(bytes, 8, "WEBP")) return { mime: "image/webp" };
  if (ascii(bytes, 8, "WAVE")) return { mime: "audio/wav" };
  if (ascii(bytes, 8, "AVI ")) return { mime: "video/x-msvideo" };
  return null;
}

function bmp(bytes: Uint8Array): Signature | null {
  if (!ascii(bytes, 0, "BM") || bytes.length < 18) return null;
  if (!at(bytes, 6, [0, 0, 0, 0])) return null;
  const dib = u32le(bytes, 14);
  return [12, 40, 52, 56, 64, 108, 124].includes(dib) ? { mime: "image/bmp" } : null;
}

function ico(bytes: Uint8Array): Signature | null {
  if (bytes.length < 22 || bytes[0] !== 0 || bytes[1] !== 0 || bytes[3] !== 0) return null;
  if (bytes[2] !== 1 && bytes[2] !== 2) return null;
  const count = bytes[4]! | (bytes[5]! << 8);
  if (count === 0 || bytes[9] !== 0) return null; // reserved byte of the first directory entry
  return { mime: bytes[2] === 1 ? "image/x-icon" : "image/x-win-bitmap" };
}

function ogg(bytes: Uint8Array): Signature | null {
  if (!ascii(bytes, 0, "OggS") || bytes[4] !== 0) return null;
  if (at(bytes, 28, [0x80]) && ascii(bytes, 29, "theora")) return { mime: "video/ogg", family: "ogg" };
  return { mime: "audio/ogg", family: "ogg" };
}

/** ID3v2 tag header: version 2–4, then four sync-safe size bytes (each below 0x80). */
function id3(b: Uint8Array): boolean {
  if (!ascii(b, 0, "ID3") || b.length < 10) return false;
  if (b[3]! < 2 || b[3]! > 4 || b[4] === 0xff) return false;
  return b[6]! < 0x80 && b[7]! < 0x80 && b[8]! < 0x80 && b[9]! < 0x80;
}

function sfntFlavor(b: Uint8Array, offset: number): boolean {
  return (
    at(b, offset, [0x00, 0x01, 0x00, 0x00]) ||
    ascii(b, offset, "OTTO") ||
    ascii(b, offset, "true") ||
    ascii(b, offset, "typ1")
  );
}

type Probe = (bytes: Uint8Array) => Signature | null;

const fixed =
  (mime: string, test: (b: Uint8Array) => boolean, family?: string): Probe =>
  (b) =>
    test(b) ? (family === undefined ? { mime } : { mime, family }) : null;

const PROBES: readonly Probe[] = [
  fixed("image/png", (b) => at(b, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  fixed("image/jpeg", (b) => at(b, 0, [0xff, 0xd8, 0xff])),
  fixed("image/gif", (b) => ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a")),
  riff,
  fixed("application/pdf", (b) => ascii(b, 0, "%PDF-") && b.length > 5 && b[5]! >= 0x30 && b[5]! <= 0x39),
  fixed(
    "application/zip",
    (b) =>
      at(b, 0, [0x50, 0x4b, 0x03, 0x04]) || at(b, 0, [0x50, 0x4b, 0x05, 0x06]) || at(b, 0, [0x50, 0x4b, 0x07, 0x08]),
    "zip",
  ),
  fixed("application/gzip", (b) => at(b, 0, [0x1f, 0x8b, 0x08]), "gzip"),
  fixed("application/wasm", (b) => at(b, 0, [0x00, 0x61, 0x73, 0x6d])),
  fixed("image/tiff", (b) => at(b, 0, [0x49, 0x49, 0x2a, 0x00]) || at(b, 0, [0x4d, 0x4d, 0x00, 0x2a])),
  bmp,
  ico,
  isoBmff,
  fixed("audio/mpeg", id3),
  mpegAudio,
  ogg,
  fixed("audio/flac", (b) => ascii(b, 0, "fLaC") && b.length > 4 && (b[4]! & 0x7f) === 0),
  matroska,
  fixed("audio/aiff", (b) => ascii(b, 0, "FORM") && (ascii(b, 8, "AIFF") || ascii(b, 8, "AIFC"))),
  fixed("audio/midi", (b) => ascii(b, 0, "MThd") && at(b, 4, [0, 0, 0, 6])),
  fixed("image/vnd.adobe.photoshop", (b) => ascii(b, 0, "8BPS") && (at(b, 4, [0, 1]) || at(b, 4, [0, 2]))),
  fixed("image/jxl", (b) => at(b, 0, [0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a])),
  (b) => (at(b, 0, [0xff, 0x0a]) ? { mime: "image/jxl", weak: true } : null),
  fixed("image/jp2", (b) => at(b, 0, [0, 0, 0, 0x0c, 0x6a, 0x50, 0x20, 0x20, 0x0d, 0x0a, 0x87, 0x0a])),
  fixed(
    "application/x-bzip2",
    (b) =>
      ascii(b, 0, "BZh") &&
      b.length > 3 &&
      b[3]! >= 0x31 &&
      b[3]! <= 0x39 &&
      at(b, 4, [0x31, 0x41, 0x59, 0x26, 0x53, 0x59]),
    "bzip2",
  ),
  fixed("application/x-xz", (b) => at(b, 0, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), "xz"),
  fixed("application/zstd", (b) => at(b, 0, [0x28, 0xb5, 0x2f, 0xfd]), "zstd"),
  fixed("application/x-7z-compressed", (b) => at(b, 0, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])),
  fixed("application/vnd.rar", (b) => at(b, 0, [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07])),
  fixed("application/x-tar", (b) => ascii(b, 257, "ustar") && (b[262] === 0x00 || b[262] === 0x20) && tarChecksum(b)),
  fixed("application/x-elf", (b) => at(b, 0, [0x7f, 0x45, 0x4c, 0x46])),
  // MPEG transport stream (its `.ts` files are no TypeScript).
  fixed("video/mp2t", transportStream),
  fixed("application/vnd.sqlite3", (b) => ascii(b, 0, "SQLite format 3\u0000")),
  fixed("application/x-cfb", (b) => at(b, 0, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), "cfb"),
  fixed("font/woff", (b) => ascii(b, 0, "wOFF") && sfntFlavor(b, 4)),
  fixed("font/woff2", (b) => ascii(b, 0, "wOF2") && sfntFlavor(b, 4)),
  fixed("font/otf", (b) => ascii(b, 0, "OTTO") && b[4] === 0),
  fixed("font/ttf", (b) => at(b, 0, [0x00, 0x01, 0x00, 0x00, 0x00])),
];

/** Bytes in one MPEG transport stream packet; each opens with the sync byte 0x47 ("G"). */
const TS_PACKET = 188;
/** Whole packets whose sync byte is checked: every one of the first eight, and at least three. */
const TS_PACKETS_CHECKED = 8;
const TS_PACKETS_NEEDED = 3;

function transportStream(bytes: Uint8Array): boolean {
  const packets = Math.min(TS_PACKETS_CHECKED, Math.floor(bytes.length / TS_PACKET));
  if (packets < TS_PACKETS_NEEDED) return false;
  for (let packet = 0; packet < packets; packet++) if (bytes[packet * TS_PACKET] !== 0x47) return false;
  return true;
}

/**
 * A tar header's checksum holds: the octal number at 148–155 is the sum of the header's 512
 * bytes with that field counted as spaces. Text with "ustar" at byte 257 ("…gustar mucho") fails it.
 */
function tarChecksum(bytes: Uint8Array): boolean {
  if (bytes.length < 512) return false;
  const field = String.fromCharCode(...bytes.subarray(148, 156))
    .replace(/[\0 ]+$/, "")
    .trim();
  if (!/^[0-7]{1,7}$/.test(field)) return false;
  // Old tars (Sun's) summed the bytes as signed: either sum is a tar's.
  let sum = 0;
  let signed = 0;
  for (let i = 0; i < 512; i++) {
    const byte = i >= 148 && i < 156 ? 0x20 : bytes[i]!;
    sum += byte;
    signed += byte > 0x7f ? byte - 0x100 : byte;
  }
  const written = Number.parseInt(field, 8);
  return sum === written || signed === written;
}

export function detectSignature(bytes: Uint8Array): Signature | null {
  if (bytes.length < 2) return null;
  for (const probe of PROBES) {
    const found = probe(bytes);
    if (found !== null) return isPrintableText(bytes) && !isWholeAsciiPdf(found, bytes) ? null : found;
  }
  return null;
}

/**
 * Whether the bytes are entirely printable text: valid UTF-8 with no control character but tab,
 * line feed, form feed and carriage return. Only a signature spelt in printable characters can
 * match such bytes ("GIF89a is an image format", "RIFF is WAVE-ish", 188-byte lines opening
 * with "G"), and a file of those formats always has binary bytes right after its magic: the
 * bytes are text that starts like one.
 */
function isPrintableText(bytes: Uint8Array): boolean {
  // Binary is told from text at its first control byte, mostly within a few bytes of the start.
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if ((byte < 0x20 && !TEXT_CONTROLS.has(byte)) || byte === 0x7f) return false;
  }
  return isUtf8(bytes);
}
const TEXT_CONTROLS = new Set([0x09, 0x0a, 0x0c, 0x0d]);

/** A PDF may be all ASCII (uncompressed, no binary comment): it is one when it is whole. */
function isWholeAsciiPdf(found: Signature, bytes: Uint8Array): boolean {
  return (
    found.mime === "application/pdf" && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes("%%EOF")
  );
}

/** Declared types that a container signature does not contradict. */
const FAMILY_MEMBERS: Readonly<Record<string, ReadonlySet<string>>> = {
  zip: new Set([
    "application/zip",
    "application/java-archive",
    "application/vnd.android.package-archive",
    "application/x-xpinstall",
    "application/vnd.ms-xpsdocument",
    "application/oxps",
    "application/vnd.apple.keynote",
    "application/vnd.apple.pages",
    "application/vnd.apple.numbers",
    "application/x-chrome-extension",
    "application/vnd.visio",
  ]),
  gzip: new Set([
    "application/gzip",
    "application/x-gtar",
    "application/x-tgz",
    "application/x-compressed-tar",
    "image/svg+xml",
  ]),
  bzip2: new Set(["application/x-bzip2", "application/x-bzip"]),
  xz: new Set(["application/x-xz"]),
  zstd: new Set(["application/zstd"]),
  isobmff: new Set([
    "video/mp4",
    "audio/mp4",
    "application/mp4",
    "video/quicktime",
    "video/3gpp",
    "audio/3gpp",
    "video/3gpp2",
    "audio/3gpp2",
    "video/x-m4v",
  ]),
  ogg: new Set(["audio/ogg", "video/ogg", "application/ogg"]),
  matroska: new Set(["video/webm", "audio/webm", "video/x-matroska", "audio/x-matroska"]),
  cfb: new Set([
    "application/x-cfb",
    "application/msword",
    "application/vnd.ms-excel",
    "application/vnd.ms-powerpoint",
    "application/vnd.ms-outlook",
    "application/vnd.visio",
  ]),
};

const FAMILY_PREFIXES: Readonly<Record<string, readonly string[]>> = {
  zip: ["application/vnd.openxmlformats-officedocument.", "application/vnd.oasis.opendocument."],
};

/** True when a declared essence agrees with the signature (same type, alias, or family). */
export function agreesWithSignature(declaredEssence: string, declaredSuffix: string, sig: Signature): boolean {
  const declared = canonicalEssence(declaredEssence);
  if (declared === canonicalEssence(sig.mime)) return true;
  if (sig.family === undefined) return false;
  if (declaredSuffix === sig.family) return true;
  if (FAMILY_MEMBERS[sig.family]?.has(declared)) return true;
  return (FAMILY_PREFIXES[sig.family] ?? []).some((prefix) => declared.startsWith(prefix));
}
