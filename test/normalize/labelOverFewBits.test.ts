/**
 * Where what a server declares is believed over what a few bytes suggest: text in a legacy or
 * UTF-16 charset that starts like an MPEG or AAC frame sync, bytes carried one per character in
 * a `text` labelled with their charset, and the parameters a contradicted type drops.
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

describe("bytes carried one per character, labelled with their charset", () => {
  it.each([
    ["Привет, мир", "utf-16le"],
    ["hi!", "utf-16le"],
  ])("%j in %s reads as the text it is (its bytes may all be below 0x80)", (text, charset) => {
    const carried = iconv.encode(text, charset).toString("latin1");
    const out = first({ uri: "a.txt", mimeType: `text/plain; charset=${charset}`, text: carried });
    expect(out).toEqual({ uri: "a.txt", mimeType: "text/plain", text });
  });

  it("with transcode off it is left as it came", () => {
    const entry = { uri: "a.txt", mimeType: "text/plain; charset=utf-16le", text: "h\u0000i\u0000!\u0000" };
    expect(first(entry, testPolicy({ transcode: false }))).toEqual(entry);
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
