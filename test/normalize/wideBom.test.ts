/**
 * A blob that starts with a UTF-16 or UTF-32 byte order mark and whose type does not say it is
 * text: a binary file can start with those bytes too (FF FE is also the start of an MPEG frame
 * or of any little-endian -2), and nearly any even run of bytes decodes as UTF-16. Such a blob is
 * transcoded only when what it decodes to reads as text; under a textual type, or a declared
 * wide charset, the mark is believed.
 */
import { describe, expect, it } from "vitest";
import { normalizeResourceEntry } from "../../src/normalize/index.js";
import { testPolicy } from "../helpers/policy.js";

const policy = testPolicy();
const LE = Buffer.from([0xff, 0xfe]);

function decide(bytes: Buffer, mimeType = "application/octet-stream") {
  const entry = { uri: "file:///d/b.bin", mimeType, blob: bytes.toString("base64") };
  const { entry: out, record } = normalizeResourceEntry(entry, policy, "contents[0]");
  return { entry, out: out as Record<string, unknown>, record: record! };
}

/** Seeded bytes, as a binary file's would be. */
function randomBytes(n: number, seed: number): Buffer {
  const out = Buffer.alloc(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    out[i] = s >>> 24;
  }
  return out;
}

describe("a UTF-16/32 byte order mark on a blob of no textual type", () => {
  it("a short binary after FF FE stays a blob (it read as 戀湩)", () => {
    const { entry, out, record } = decide(Buffer.from([0xff, 0xfe, 0x00, 0x62, 0x69, 0x6e]));
    expect(out).toBe(entry);
    expect(record.action).toBe("none");
    expect(record.reason).toMatch(/UTF-16LE BOM, but what it decodes to does not read as text/i);
  });

  it("binary bytes after the mark stay a blob, whatever they happen to decode to", () => {
    let transcoded = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const { out, record } = decide(Buffer.concat([LE, randomBytes(64 + (seed % 64) * 2, seed)]));
      if (typeof out.text === "string") transcoded++;
      else expect(record.action, `seed ${seed}`).toBe("none");
    }
    expect(transcoded).toBe(0);
  });

  it("text after the mark is transcoded: Latin, CJK, with newlines and tabs", () => {
    for (const text of [
      "Hello, world.\r\nA UTF-16 file.",
      "日本語のテキスト、改行あり。\n二行目",
      "a\tb\tc\n1\t2\t3\n",
    ]) {
      const { out, record } = decide(Buffer.concat([LE, Buffer.from(text, "utf16le")]));
      expect(out.text, text).toBe(text);
      expect(record.action).toBe("transcode");
    }
  });

  it("under a textual type the mark is believed, as before", () => {
    const { out } = decide(Buffer.from([0xff, 0xfe, 0x00, 0x62, 0x69, 0x6e]), "text/plain");
    expect(out.text).toBe("戀湩");
  });

  it("under a declared UTF-16 or UTF-32 charset the mark is believed: short text, private-use glyphs", () => {
    for (const [charset, text] of [
      ["utf-16le", "Hi!"],
      ["utf-16", "build \ue0b0 passed ok"],
      ["utf-16", "ok"],
    ] as const) {
      const { out, record } = decide(
        Buffer.concat([LE, Buffer.from(text, "utf16le")]),
        `application/octet-stream; charset=${charset}`,
      );
      expect(out.text, `${charset} ${text}`).toBe(text);
      expect(record.action).toBe("transcode");
    }
    const utf32 = Buffer.from([0xff, 0xfe, 0, 0, 0x48, 0, 0, 0, 0x69, 0, 0, 0]);
    expect(decide(utf32, "application/octet-stream; charset=utf-32").out.text).toBe("Hi");
  });
});
