/**
 * UTF-7 decoded in one pass (src/normalize/utf7.ts): the text iconv-lite reads, for texts of every
 * kind encoded by iconv-lite, and bytes declared UTF-7 decoded at the cost of reading them — a
 * megabyte of `+AGE-` took most of a second.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { decodeStrict } from "../../src/normalize/charset.js";
import { decodeUtf7, encodeUtf7 } from "../../src/normalize/utf7.js";

const iconv = createRequire(import.meta.url)("iconv-lite") as typeof import("iconv-lite");

describe("decodeUtf7", () => {
  it("reads what iconv-lite writes and reads, for ASCII, accents, CJK, emoji, + and - around runs", () => {
    const texts = [
      "",
      "plain ASCII, with a + and a - and +- and -+",
      "café été naïve Ærø",
      "日本語のテキスト、改行あり。\n二行目",
      "emoji 😀👍🏽 and 𝄞 music",
      "A≢Α.",
      "Hi Mom -☺-!",
      "~\\ backslash and tilde",
      "x".repeat(20_000) + "é".repeat(20_000),
    ];
    let seed = 3;
    for (let n = 0; n < 200; n++) {
      let text = "";
      for (let i = 0; i < 30; i++) {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        const pick = seed >>> 16;
        text += pick % 3 === 0 ? String.fromCharCode(0x20 + (pick % 95)) : String.fromCodePoint(0xa0 + (pick % 0x2f00));
      }
      texts.push(text);
    }
    for (const text of texts) {
      const bytes = iconv.encode(text, "utf-7");
      expect(decodeUtf7(bytes), JSON.stringify(text.slice(0, 40))).toBe(iconv.decode(bytes, "utf-7"));
      expect(encodeUtf7(text).equals(bytes), JSON.stringify(text.slice(0, 40))).toBe(true);
      expect(decodeStrict(bytes, "utf-7")).toBe(text);
    }
    expect(decodeUtf7(Buffer.from([0x41, 0xc3, 0xa9]))).toBeNull();
    // A byte order mark is dropped, as iconv-lite drops it; the text then does not give the bytes back.
    expect(decodeUtf7(Buffer.from("+/v8-Hi"))).toBe(iconv.decode(Buffer.from("+/v8-Hi"), "utf-7"));
    expect(decodeStrict(Buffer.from("+/v8-Hello, world."), "utf-7")).toBeNull();
    // …at the start of every shifted run, not only the text's.
    for (const bytes of ["a+/v8-", "Hi +/v8-there", " -+/v8AIQ-"].map((t) => Buffer.from(t))) {
      expect(decodeUtf7(bytes)).toBe(iconv.decode(bytes, "utf-7"));
      expect(decodeStrict(bytes, "utf-7")).toBeNull();
    }
  });

  it("megabytes of shifted runs are read and checked in a pass (iconv-lite took seconds), exact or not", () => {
    // Not how UTF-7 writes "a" (an encoder writes it directly): read, and kept as bytes.
    const notExact = Buffer.from("+AGE-".repeat(2_400_000));
    const text = "日本語のテキスト、改行あり。\n".repeat(100_000);
    const long = iconv.encode(text, "utf-7");
    // Short runs that are exact UTF-7 (12 MB): decoded, and encoded back to check.
    const short = Buffer.from("a+AKM-".repeat(2_000_000));
    const started = performance.now();
    expect(decodeStrict(notExact, "utf-7")).toBeNull();
    expect(decodeStrict(long, "utf-7")).toBe(text);
    expect(decodeStrict(short, "utf-7")).toBe("a£".repeat(2_000_000));
    expect(performance.now() - started).toBeLessThan(1500);
  });
});
