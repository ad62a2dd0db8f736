/**
 * Where what a server declares is believed over what a few bytes suggest: text in a legacy or
 * UTF-16 charset that starts like an MPEG or AAC frame sync, an ASCII string with a NUL labelled
 * UTF-16 (whose bytes are its UTF-8 either way), and the parameters a contradicted type drops.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { normalizeResult } from "../../src/normalize/index.js";
import { testPolicy } from "../helpers/policy.js";

const iconv = createRequire(import.meta.url)("iconv-lite") as typeof import("iconv-lite");
const policy = testPolicy();

function first(entry: Record<string, unknown>, using = policy): Record<string, unknown> {
  const out = normalizeResult("resources/read", { contents: [entry] }, using);
  return (out.value as { contents: Array<Record<string, unknown>> }).contents[0]!;
}

describe("a signature of a few bits against a declared charset", () => {
  it.each([
    ["является ли это ошибкой?", "windows-1251"],
    ["ясно, спасибо за ответ", "windows-1251"],
    ["￥1,000 の商品です。送料無料", "utf-16be"],
    ["\ufffd log line continues here", "utf-16be"],
    ["＊ a fullwidth star first", "utf-16be"],
  ])("%j in %s, labelled so, is transcoded, not taken for audio or JPEG XL", (text, charset) => {
    const blob = iconv.encode(text, charset).toString("base64");
    expect(first({ uri: "file:///n.txt", mimeType: `text/plain; charset=${charset}`, blob })).toEqual({
      uri: "file:///n.txt",
      mimeType: "text/plain",
      text,
    });
  });

  it("a real MPEG frame stays audio under a textual label, with or without a charset", () => {
    const mp3 = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x44]), Buffer.alloc(400, 0x55), Buffer.from([0, 1, 2])]);
    for (const mimeType of ["text/plain", "text/plain; charset=windows-1251"])
      expect(first({ uri: "file:///a.bin", mimeType, blob: mp3.toString("base64") })).toMatchObject({
        mimeType: "audio/mpeg",
        blob: mp3.toString("base64"),
      });
  });
});

describe("an ASCII string with a NUL labelled UTF-16", () => {
  it.each([
    ["hello\u0000", "utf-16be"],
    ["\u0000aaaaaaaaaaaaaaa", "utf-16"],
  ])("%j (%s) goes back to a blob of its bytes, as without the label, not to other characters", (text, charset) => {
    const out = first({ uri: "a.txt", mimeType: `text/plain; charset=${charset}`, text });
    expect(out).toEqual({ uri: "a.txt", mimeType: "text/plain", blob: Buffer.from(text).toString("base64") });
    expect(first(out)).toEqual(out);
  });

  it("UTF-16 of ASCII text carried one byte per character still reads as that text", () => {
    const out = first({ uri: "a.txt", mimeType: "text/plain; charset=utf-16le", text: "h\u0000i\u0000!\u0000" });
    expect(out).toEqual({ uri: "a.txt", mimeType: "text/plain", text: "hi!" });
  });

  it("with reencodeBinaryText off it is left as it came", () => {
    const entry = { uri: "a.txt", mimeType: "text/plain; charset=utf-16be", text: "hello\u0000" };
    expect(first(entry, testPolicy({ reencodeBinaryText: false }))).toEqual(entry);
  });
});

describe("a type a signature contradicts", () => {
  it("goes with none of its parameters", () => {
    const pdf = Buffer.from("%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n1 0 obj\n", "latin1");
    const entry = {
      uri: "file:///doc",
      mimeType: "text/markdown; format=flowed; variant=GFM; charset=windows-1251",
      blob: pdf.toString("base64"),
    };
    expect(first(entry)).toEqual({ ...entry, mimeType: "application/pdf" });
  });
});
