/** Parsing a `mimeType` (src/normalize/mediaType.ts): parameters, quotes, and hostile lengths. */
import { describe, expect, it } from "vitest";
import { normalizeResult } from "../../src/normalize/index.js";
import { MAX_MEDIA_TYPE_CHARS, getParam, parseMediaType } from "../../src/normalize/mediaType.js";
import { testPolicy } from "../helpers/policy.js";

describe("parseMediaType", () => {
  it("splits parameters at semicolons outside quotes and unquotes their values", () => {
    const mt = parseMediaType('Text/Plain; charset="utf\\"-8"; x="a;b"; y=c\\')!;
    expect(mt.essence).toBe("text/plain");
    expect(getParam(mt, "charset")).toBe('utf"-8');
    expect(getParam(mt, "x")).toBe("a;b");
    expect(getParam(mt, "y")).toBe("c\\");
  });

  it("a string longer than MAX_MEDIA_TYPE_CHARS is not a media type: a server's megabyte of parameters is not read", () => {
    const longest = `text/plain; a="${"x".repeat(MAX_MEDIA_TYPE_CHARS - 16)}"`;
    expect(longest.length).toBe(MAX_MEDIA_TYPE_CHARS);
    expect(getParam(parseMediaType(longest)!, "a")).toBe("x".repeat(MAX_MEDIA_TYPE_CHARS - 16));
    expect(parseMediaType(`${longest} `)).toBeNull();
    expect(parseMediaType(`text/plain; a="${"\\\\".repeat(16_000_000)}"`)).toBeNull();
  });

  it("through the engine, entries with megabyte-long types pass as they are, quickly, and say why", () => {
    const mimeType = `text/plain${"; a=b".repeat(200_000)}`;
    const contents = Array.from({ length: 10 }, (_, i) => ({
      uri: `mem://long/${i}`,
      mimeType,
      blob: Buffer.from("hello world").toString("base64"),
    }));
    const started = performance.now();
    const { value, changes } = normalizeResult("resources/read", { contents }, testPolicy({ recordUnchanged: true }));
    const elapsed = performance.now() - started;
    expect((value as { contents: unknown[] }).contents).toEqual(contents);
    expect(changes.map((c) => c.action)).toEqual(Array(10).fill("skip-too-large"));
    expect(changes[0]!.reason).toBe(
      `mimeType of ${mimeType.length} characters is over ${MAX_MEDIA_TYPE_CHARS}: not read`,
    );
    // Read as media types, the ten took seconds.
    expect(elapsed).toBeLessThan(500);
  });

  it("a type too long to read is never rewritten: text, a charset's bytes, media and listed entries keep it", () => {
    const pad = "x".repeat(1100);
    const text = { uri: "file:///a.txt", mimeType: `text/plain; profile="${pad}"`, text: "hello" };
    const latin1 = {
      uri: "file:///a.bin",
      mimeType: `text/plain; charset=windows-1252; p="${pad}"`,
      blob: Buffer.from("caf\xe9 cr\xe8me", "latin1").toString("base64"),
    };
    const read = normalizeResult("resources/read", { contents: [text, latin1] }, testPolicy());
    expect(read.value).toEqual({ contents: [text, latin1] });
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489", "hex");
    const image = { type: "image", mimeType: `image/jpeg; q="${pad}"`, data: png.toString("base64") };
    const call = normalizeResult("tools/call", { content: [image] }, testPolicy());
    expect(call.value).toEqual({ content: [image] });
    const listed = { uri: "file:///a.md", name: "a", mimeType: `application/octet-stream; p="${pad}"` };
    const list = normalizeResult("resources/list", { resources: [listed] }, testPolicy());
    expect(list.value).toEqual({ resources: [listed] });
  });
});
