/**
 * Our synchronous signature table against file-type (use a well-kept detector unless a
 * small table of our own is measured to be as right on the corpus and much faster; the speed
 * half is bench/core.mjs). Every binary of the corpus must get the same type from both, up to
 * the known, justified differences listed below as data; no text fixture may be taken for binary.
 */
import { readdirSync } from "node:fs";
import { fileTypeFromBuffer } from "file-type";
import { describe, expect, it } from "vitest";
import { corpusFile } from "../fixtures/corpus/index.js";
import { detectSignature, normalizeResourceEntry, parseMediaType } from "../../src/normalize/index.js";
import { canonicalEssence } from "../../src/normalize/mimeTables.js";
import { testPolicy } from "../helpers/policy.js";

const dir = (sub: string): string[] =>
  readdirSync(new URL(`../fixtures/corpus/files/${sub}/`, import.meta.url)).map((f) => `${sub}/${f}`);
const BINARIES = [...dir("media"), ...dir("binary")];
const TEXTS = dir("text");

/**
 * Where file-type's string differs from ours, and why ours is kept. Both name the same format;
 * the engine compares types through canonicalEssence, which folds these aliases.
 */
const KNOWN_DIFFERENCES: Readonly<Record<string, { fileType: string; ours: string; why: string }>> = {
  "media/tiny.m4a": {
    fileType: "audio/x-m4a",
    ours: "audio/mp4",
    why: "audio/mp4 is the registered type (RFC 4337); audio/x-m4a is an unregistered alias",
  },
  "media/tiny.opus": {
    fileType: "audio/ogg; codecs=opus",
    ours: "audio/ogg",
    why: "same essence; the codecs parameter is the declarer's to add, the signature only proves the Ogg container",
  },
};

/**
 * Text file-type takes for binary, and why ours does not. Its version 22 no longer does, but it
 * needs Node 22; this repository runs on Node 20 with version 21.
 */
const KNOWN_TEXT_DIFFERENCES: Readonly<Record<string, { fileType: string; why: string }>> = {
  "text/utf16le-bom.txt": {
    fileType: "audio/mpeg",
    why: "FF FE, the UTF-16LE BOM, also reads as an MPEG-1 Layer I frame sync; file-type stops at those bits, our table checks the rest of the frame header",
  },
  "text/utf32le-bom.txt": { fileType: "audio/mpeg", why: "FF FE 00 00, the UTF-32LE BOM: the same frame sync" },
};

/** Text that begins like a signature would, to prove the table checks more than a prefix. */
const LOOKALIKES = [
  "BM is a car maker\n",
  "ID3 tags are metadata\n",
  "MThd is MIDI's header\n",
  "FORM follows function\n",
  "RIFF raff\n",
  "OggS sounds\n",
  "%PDF is how PDFs start\n",
  "GIF89 is not quite\n",
  "8BPS\n",
  "fLaC is flac\n",
  "wOFF the woof\n",
  "PK is a zip prefix\n",
  "\u00ff\u00fe is a BOM not MP3\n",
];

describe("signature table vs file-type on the corpus", () => {
  it.each(BINARIES)("%s: the same type", async (path) => {
    const bytes = corpusFile(path);
    const theirs = await fileTypeFromBuffer(bytes);
    const ours = detectSignature(bytes);
    expect(theirs, "file-type must know every corpus binary").toBeDefined();
    expect(ours, "our table must know every corpus binary").not.toBeNull();
    const known = KNOWN_DIFFERENCES[path];
    if (known !== undefined) {
      expect([theirs!.mime, ours!.mime]).toEqual([known.fileType, known.ours]);
    } else {
      expect(ours!.mime).toBe(theirs!.mime);
    }
    // Whatever the strings, the engine must see one type.
    expect(canonicalEssence(parseMediaType(ours!.mime)!.essence)).toBe(
      canonicalEssence(parseMediaType(theirs!.mime)!.essence),
    );
  });

  it("lists no stale known differences", () => {
    for (const path of Object.keys(KNOWN_DIFFERENCES)) expect(BINARIES).toContain(path);
    for (const path of Object.keys(KNOWN_TEXT_DIFFERENCES)) expect(TEXTS).toContain(path);
  });

  it.each(TEXTS)("%s: text is not taken for binary, by either (up to the known differences)", async (path) => {
    const bytes = corpusFile(path);
    expect(detectSignature(bytes)).toBeNull();
    expect((await fileTypeFromBuffer(bytes))?.mime).toBe(KNOWN_TEXT_DIFFERENCES[path]?.fileType);
  });

  it.each(LOOKALIKES)("text starting like a signature is not binary: %j", (text) => {
    expect(detectSignature(Buffer.from(text, text.startsWith("\u00ff") ? "latin1" : "utf8"))).toBeNull();
  });

  it("needs only the first bytes: each binary's first 64 bytes give the same answer", () => {
    for (const path of BINARIES) {
      const bytes = corpusFile(path);
      expect(detectSignature(bytes.subarray(0, 64)), path).toEqual(detectSignature(bytes));
    }
  });

  it("is total on short and empty input", () => {
    for (let n = 0; n < 16; n++)
      expect(() => detectSignature(corpusFile("media/tiny.png").subarray(0, n))).not.toThrow();
    expect(detectSignature(new Uint8Array(0))).toBeNull();
  });
});

describe("signatures that text can spell by chance", () => {
  const ftyp = (major: string, compatible: string[]): Buffer => {
    const box = Buffer.alloc(16 + 4 * compatible.length);
    box.writeUInt32BE(box.length, 0);
    box.write(`ftyp${major}`, 4, "latin1");
    for (const [i, brand] of compatible.entries()) box.write(brand, 16 + 4 * i, "latin1");
    return Buffer.concat([box, Buffer.alloc(16)]);
  };

  it("an ftyp box is one only with a box size in front; AVIF named among the compatible brands is AVIF", () => {
    expect(detectSignature(Buffer.from("The ftyp box is the first box of an MP4 file.\n"))).toBeNull();
    expect(detectSignature(ftyp("isom", ["isom", "mp41"]))?.mime).toBe("video/mp4");
    expect(detectSignature(ftyp("mif1", ["mif1", "avif", "miaf"]))?.mime).toBe("image/avif");
    expect(detectSignature(ftyp("mif1", ["mif1", "heic"]))?.mime).toBe("image/heic");
  });

  it("a tar header is one only when its checksum holds", () => {
    const prose = Buffer.from(`${"x".repeat(255)}a ustar mucho ${"y".repeat(300)}`);
    expect(prose.toString("latin1", 257, 262)).toBe("ustar");
    expect(detectSignature(prose)).toBeNull();
    const header = Buffer.alloc(512);
    header.write("notes.txt", 0);
    header.write("0000644\0", 100);
    header.write("ustar\u000000", 257, "latin1");
    header.fill(0x20, 148, 156);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\u0000 `, 148, "latin1");
    expect(detectSignature(header)?.mime).toBe("application/x-tar");
    // A name above ASCII, summed as signed bytes (old Sun tars): a tar too.
    header.write("é.txt", 0, "latin1");
    header.fill(0x20, 148, 156);
    let signed = 0;
    for (const byte of header) signed += byte > 0x7f ? byte - 0x100 : byte;
    header.write(`${signed.toString(8).padStart(6, "0")}\u0000 `, 148, "latin1");
    expect(detectSignature(header)?.mime).toBe("application/x-tar");
  });

  it("an MPEG transport stream is at least three whole packets, each of the first eight opening with 0x47", () => {
    const stream = (count: number): Buffer => {
      const packets = Buffer.alloc(188 * count + 1);
      for (let i = 0; i < count; i++) packets[i * 188] = 0x47;
      return packets;
    };
    expect(detectSignature(stream(3))?.mime).toBe("video/mp2t");
    expect(detectSignature(stream(12))?.mime).toBe("video/mp2t");
    const broken = stream(12);
    broken[188 * 5] = 0;
    expect(detectSignature(broken)).toBeNull();
    expect(detectSignature(Buffer.from("G is for Gopher"))).toBeNull();
  });
});

describe("printable text that spells a whole signature is text", () => {
  const line = (n: number): string => `G${"x".repeat(n - 2)}\n`;
  const SPELLED = [
    line(188).repeat(3),
    line(188).repeat(10),
    "RIFF is WAVE-ish: notes on the container format\n",
    "RIFF is WEBP or AVI  at times\n",
    "GIF89a is an image format\n",
    "GIF87a, the older one, ünïcode too\n",
    "%PDF-1.7 added features to the format\n",
    "BZh91AY&SY starts a bzip2 stream\n",
    "FORM    AIFF is Apple's audio format\r\n",
    "wOFFtrue is how a WOFF font with TrueType outlines starts\f",
  ];

  it.each(SPELLED)("no signature: %j", (text) => {
    expect(detectSignature(Buffer.from(text))).toBeNull();
  });

  it("a blob of it becomes text whatever type it declares (a textual one is kept)", () => {
    const policy = testPolicy();
    for (const text of SPELLED) {
      for (const mimeType of ["text/csv", "text/plain", "application/octet-stream", undefined]) {
        const entry = { uri: "file:///notes/a.txt", blob: Buffer.from(text).toString("base64"), mimeType };
        const { entry: out, record } = normalizeResourceEntry(entry, policy, "contents[0]");
        expect(record, `${mimeType}: ${text}`).toMatchObject({ action: "unwrap-blob" });
        expect(out).toMatchObject({ text, mimeType: mimeType?.startsWith("text/") ? mimeType : "text/plain" });
      }
    }
  });

  it("the same magic followed by the binary bytes real files have is still the format", () => {
    const binary = (magic: string, after: number[]): Buffer => Buffer.concat([Buffer.from(magic), Buffer.from(after)]);
    expect(detectSignature(binary("GIF89a", [0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00]))?.mime).toBe("image/gif");
    expect(detectSignature(binary("RIFF", [0x24, 0x08, 0x00, 0x00, 0x57, 0x41, 0x56, 0x45]))?.mime).toBe("audio/wav");
    expect(detectSignature(binary("BZh91AY&SY", [0x8f, 0x01, 0x02]))?.mime).toBe("application/x-bzip2");
    expect(detectSignature(binary("%PDF-1.7\n%", [0xe2, 0xe3, 0xcf, 0xd3]))?.mime).toBe("application/pdf");
  });

  it("a whole PDF may be all ASCII: with its %%EOF it is a PDF", () => {
    const pdf = "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";
    expect(detectSignature(Buffer.from(pdf))?.mime).toBe("application/pdf");
  });
});
