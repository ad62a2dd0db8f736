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

  it("through the engine, entries with megabyte-long types are decided as entries of an unreadable type, quickly", () => {
    const mimeType = `text/plain${"; a=b".repeat(200_000)}`;
    const contents = Array.from({ length: 10 }, (_, i) => ({
      uri: `mem://long/${i}`,
      mimeType,
      blob: Buffer.from("hello world").toString("base64"),
    }));
    const started = performance.now();
    const { changes } = normalizeResult("resources/read", { contents }, testPolicy());
    const elapsed = performance.now() - started;
    expect(changes.map((c) => [c.action, c.mimeAfter])).toEqual(Array(10).fill(["unwrap-blob", "text/plain"]));
    expect(changes[0]!.reason).toBe("UTF-8 text (sniffed)");
    // Read as media types, the ten took seconds.
    expect(elapsed).toBeLessThan(500);
  });
});
