/**
 * Strict base64 (decode strictly or leave the content alone): line breaks and missing padding are fine, the base64url
 * alphabet and anything else are not. The fast path (one decode, a length check) must agree with
 * the careful one on every input.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeStrictBase64, isCompactBase64Length } from "../../src/normalize/base64.js";

describe("decodeStrictBase64", () => {
  it.each([
    ["", ""],
    ["YQ==", "61"],
    ["YQ", "61"],
    ["YWI=", "6162"],
    ["YWI", "6162"],
    ["YWJj", "616263"],
    ["YW\r\nJj", "616263"],
    [" YWJj\n", "616263"],
    ["YQ=\n=", "61"],
    ["+/8=", "fbff"],
  ])("accepts %j", (input, hex) => {
    expect(decodeStrictBase64(input)?.toString("hex")).toBe(hex);
  });

  it.each([
    "-_8=",
    "YWJj_",
    "YQ=",
    "YQ===",
    "Y===",
    "YQ==YQ==",
    "Y",
    "YWJjZ",
    "YW$j",
    "YWJj\u00e9",
    "=YWJ",
    "YW=j",
    "YWJj\u0000",
  ])("rejects %j", (input) => {
    expect(decodeStrictBase64(input)).toBeNull();
  });

  it("decodes exactly what Buffer encodes, in every layout, and rejects base64url whenever it differs", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.integer({ min: 1, max: 20 }), (raw, width) => {
        const bytes = Buffer.from(raw);
        const b64 = bytes.toString("base64");
        for (const layout of [
          b64,
          b64.replace(/=+$/, ""),
          (b64.match(new RegExp(`.{1,${width}}`, "g")) ?? []).join("\n"),
        ]) {
          expect(decodeStrictBase64(layout)?.equals(bytes)).toBe(true);
        }
        const url = bytes.toString("base64url");
        if (/[-_]/.test(url)) expect(decodeStrictBase64(url)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it("accepts nothing that does not re-encode to itself (modulo whitespace, padding and unused trailing bits)", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(..."AQgw+/=-_ \n$é".split("")), maxLength: 12 }), (input) => {
        const bytes = decodeStrictBase64(input);
        if (bytes === null) return;
        const compact = input.replace(/[\s]/g, "").replace(/=+$/, "");
        expect(compact).toMatch(/^[A-Za-z0-9+/]*$/);
        expect(bytes.toString("base64").replace(/=+$/, "").length).toBe(compact.length);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("decodeStrictBase64 and characters outside ASCII", () => {
  it("refuses a string holding one, even where its low byte is a base64 character", () => {
    // U+0149's low byte is "I": Node would decode "SGVsbG8sIHdvcmxkIQ==" ("Hello, world!").
    expect(decodeStrictBase64("SGVsbG8s\u0149HdvcmxkIQ==")).toBeNull();
    expect(decodeStrictBase64("SGVs bG8s\u00c9Hdv\ncmxkIQ==")).toBeNull();
    expect(decodeStrictBase64("SGVsbG8sIHdvcmxkIQ==")?.toString()).toBe("Hello, world!");
  });
});

describe("isCompactBase64Length", () => {
  it("is true for padded and unpadded compact strings only", () => {
    expect(isCompactBase64Length("YQ==", 1)).toBe(true);
    expect(isCompactBase64Length("YQ", 1)).toBe(true);
    expect(isCompactBase64Length("YQ\n\n", 1)).toBe(false);
    expect(isCompactBase64Length("YQ=\n", 1)).toBe(false);
    expect(isCompactBase64Length("YWJj", 3)).toBe(true);
    expect(isCompactBase64Length("YWJj\n", 3)).toBe(false);
  });
});
