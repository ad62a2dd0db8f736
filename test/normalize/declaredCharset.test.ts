/**
 * Blobs that declare their charset: decoded exactly, including the characters a charset's table
 * maps one way only, and left as they are (saying why) when the bytes are not in that charset.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { normalizeResourceEntry } from "../../src/normalize/index.js";
import { testPolicy } from "../helpers/policy.js";

const iconv = createRequire(import.meta.url)("iconv-lite") as typeof import("iconv-lite");
const policy = testPolicy();

function declared(bytes: Buffer, charset: string) {
  const entry = { uri: "file:///d/a.txt", mimeType: `text/plain; charset=${charset}`, blob: bytes.toString("base64") };
  const { entry: out, record } = normalizeResourceEntry(entry, policy, "contents[0]");
  return { entry, out: out as Record<string, unknown>, record: record! };
}

/** Two-byte codes that decode to a defined character which encodes back to other bytes. */
function oneWayCodes(charset: string): Buffer[] {
  const found: Buffer[] = [];
  for (let lead = 0x81; lead <= 0xfe; lead++) {
    for (let trail = 0x40; trail <= 0xfe; trail++) {
      const code = Buffer.from([lead, trail]);
      const text = iconv.decode(code, charset);
      const defined = text.length === 1 && !/[\ufffd\ue000-\uf8ff]/.test(text);
      if (defined && !iconv.encode(text, charset).equals(code)) found.push(code);
    }
  }
  return found;
}

describe("declared double-byte charsets", () => {
  it("EUC-JP 〜 (A1C1), whose character encodes back as 8FA2B7, is transcoded", () => {
    const bytes = Buffer.from([0xa4, 0xa2, 0xa4, 0xa4, 0xa4, 0xa6, 0xa1, 0xc1]);
    const { out, record } = declared(bytes, "EUC-JP");
    expect(record).toMatchObject({ action: "transcode", reason: "declared charset euc-jp" });
    expect(out.text).toBe(iconv.decode(bytes, "euc-jp"));
  });

  it.each(["euc-jp", "shift_jis", "gbk", "big5", "euc-kr"])(
    "%s: every code its table maps one way only is transcoded, inside text",
    (charset) => {
      const codes = oneWayCodes(charset);
      if (charset === "euc-jp") expect(codes.length).toBeGreaterThan(200);
      for (const code of codes) {
        const bytes = Buffer.concat([Buffer.from("abc "), code, Buffer.from(" def")]);
        const { out, record } = declared(bytes, charset);
        expect(record.action, `${charset} ${code.toString("hex")}`).toBe("transcode");
        expect(out.text).toBe(`abc ${iconv.decode(code, charset)} def`);
      }
    },
  );

  it("bytes that are not in the declared charset stay as they came, and the reason says so", () => {
    for (const [charset, bytes] of [
      ["EUC-JP", Buffer.from([0xa4, 0xa2, 0xa4])], // a lead byte with nothing after it
      ["Shift_JIS", Buffer.from([0x82, 0xa0, 0x81, 0x20])], // a lead byte before a space
      ["GBK", Buffer.from([0xff, 0xff, 0x41])],
      ["Shift_JIS", Buffer.from([0xf0, 0x40])], // a user-defined code: no character of the charset
    ] as const) {
      const { entry, out, record } = declared(bytes, charset);
      expect(out).toBe(entry);
      expect(record).toMatchObject({
        action: "none",
        reason: `declared charset ${charset.toLowerCase()}, but the bytes are not valid in it`,
      });
    }
  });

  // iconv-lite decodes these to U+FFFD and encodes U+FFFD back to them: a round trip alone let them through.
  it.each([
    ["windows-1250", 0x98],
    ["windows-1251", 0x98],
    ["windows-1252", 0x9d],
    ["ISO-8859-1", 0x9d],
    ["windows-1253", 0xff],
    ["windows-1254", 0x9e],
    ["windows-1255", 0xff],
    ["windows-1257", 0xa5],
    ["windows-874", 0xff],
    ["ISO-8859-3", 0xf0],
    ["ISO-8859-7", 0xff],
  ] as const)("%s: byte %i, which has no character, stays bytes, never U+FFFD", (charset, byte) => {
    const bytes = Buffer.concat([Buffer.from("Total: 100 "), Buffer.from([byte]), Buffer.from(" 10")]);
    const { entry, out, record } = declared(bytes, charset);
    expect(out).toBe(entry);
    expect(record).toMatchObject({ action: "none", reason: expect.stringMatching(/the bytes are not valid in it$/) });
  });

  it("a charset the proxy does not know is named in the reason", () => {
    const { entry, out, record } = declared(Buffer.from([0xe9, 0x41]), "x-klingon");
    expect(out).toBe(entry);
    expect(record.reason).toBe("declared charset x-klingon is not one the proxy knows");
  });

  it("U+FFFD that the bytes really encode (GB18030 84 31 A4 37) is kept", () => {
    const text = "替换字符 \ufffd 在这里";
    const { out, record } = declared(iconv.encode(text, "gb18030"), "GB18030");
    expect(record.action).toBe("transcode");
    expect(out.text).toBe(text);
  });
});

describe("ISO-8859-1 and US-ASCII labels are read as windows-1252, as WHATWG does", () => {
  const bytes = iconv.encode("Prix: 5€ — «cher»", "windows-1252");

  it.each(["ISO-8859-1", "latin1", "l1", "iso_8859-1", "us-ascii"])("charset=%s", (label) => {
    const { out, record } = declared(bytes, label);
    expect(out).toMatchObject({ text: "Prix: 5€ — «cher»", mimeType: "text/plain" });
    expect(record).toMatchObject({
      action: "transcode",
      reason: `declared charset ${label.toLowerCase()}, decoded as windows-1252 (WHATWG)`,
    });
  });

  it("ISO-8859-15 and other labels keep their own table", () => {
    const { out } = declared(iconv.encode("12 € œuvre", "iso-8859-15"), "ISO-8859-15");
    expect(out.text).toBe("12 € œuvre");
  });
});

describe("a US-ASCII label stays only on text that is ASCII", () => {
  it("UTF-8 bytes labelled us-ascii become text without the label; ASCII keeps it", () => {
    expect(declared(Buffer.from("naïve"), "us-ascii").out).toMatchObject({ text: "naïve", mimeType: "text/plain" });
    expect(declared(Buffer.from("naive"), "us-ascii").out).toMatchObject({
      text: "naive",
      mimeType: "text/plain; charset=us-ascii",
    });
  });
});

describe("UTF-16 and UTF-32 declared without a BOM are big-endian", () => {
  it.each([
    ["utf-16", "utf-16be"],
    ["UTF-32", "utf-32be"],
  ])("charset=%s", (label, bigEndian) => {
    const { out, record } = declared(iconv.encode("naïve 日本", bigEndian), label);
    expect(record.action).toBe("transcode");
    expect(out.text).toBe("naïve 日本");
  });
});

describe("the reason a blob that is not text stays one", () => {
  it("Latin-1 bytes labelled UTF-8 stay as they came, and the reason names the label, not 'not text'", () => {
    const { entry, out, record } = declared(Buffer.from("caf\xe9 cr\xe8me", "latin1"), "UTF-8");
    expect(out).toBe(entry);
    expect(record).toMatchObject({
      action: "none",
      reason: "declared charset utf-8, but the bytes are not valid in it",
    });
  });

  it("UTF-8 labelled UTF-8 that holds NUL stays as it came, and the reason says NUL", () => {
    const { entry, out, record } = declared(Buffer.from("name\u0000value caf\u00e9"), "utf-8");
    expect(out).toBe(entry);
    expect(record).toMatchObject({ action: "none", reason: "declared charset utf-8 decodes to text holding NUL" });
  });

  it.each(["utf-8", "us-ascii", "windows-1252"])(
    "valid %s of binary control characters, with no textual type, is said to be binary, not invalid",
    (charset) => {
      const bytes = Buffer.from([0x01, 0x02, 0x03, 0x41, 0x42, 0x1b, 0x10, 0x7f, 0x43, 0x44, 0x05, 0x06]);
      const entry = {
        uri: "mem://x",
        mimeType: `application/octet-stream; charset=${charset}`,
        blob: bytes.toString("base64"),
      };
      const { entry: out, record } = normalizeResourceEntry(entry, policy, "contents[0]");
      expect(out).toBe(entry);
      expect(record).toMatchObject({
        action: "none",
        reason: `declared charset ${charset} decodes to what reads as binary (control characters, a binary format's start), not text`,
      });
    },
  );

  it("a declared charset that decodes to a binary format's start is said to read as binary", () => {
    // cp850 98 9D 98 85 reads as "ÿØÿà", a JPEG's first bytes one per character.
    const bytes = Buffer.concat([Buffer.from([0x98, 0x9d, 0x98, 0x85]), Buffer.from("hello world, more text")]);
    const entry = {
      uri: "mem://x",
      mimeType: "application/octet-stream; charset=cp850",
      blob: bytes.toString("base64"),
    };
    const { entry: out, record } = normalizeResourceEntry(entry, policy, "contents[0]");
    expect(out).toBe(entry);
    expect(record?.reason).toMatch(/^declared charset (cp850|ibm850) decodes to what reads as binary/);
  });

  it("undeclared UTF-8 holding NUL is not called 'not UTF-8'", () => {
    const entry = { uri: "file:///d/a.txt", mimeType: "text/plain", blob: Buffer.from("a\u0000b").toString("base64") };
    const { entry: out, record } = normalizeResourceEntry(entry, policy, "contents[0]");
    expect(out).toBe(entry);
    expect(record).toMatchObject({ action: "none", reason: "UTF-8, but holds NUL" });
  });
});
