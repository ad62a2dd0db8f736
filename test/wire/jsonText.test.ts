/** Walking JSON text (src/wire/jsonText.ts, jsonPathSpan.ts): string and value ends, paths to spans. */
import { describe, expect, it } from "vitest";
import { rootSpan, spanAtPath } from "../../src/wire/jsonPathSpan.js";
import { stringEnd, valueEnd } from "../../src/wire/jsonText.js";

describe("stringEnd", () => {
  it("ends at the first quote not escaped by an odd run of backslashes", () => {
    for (const literal of [
      '""',
      '"a"',
      '"\\""',
      '"\\\\"',
      '"a\\\\\\"b"',
      '"\\\\\\\\"',
      '"é\\u00e9\\/"',
      '"\\"\\"\\\\"',
    ]) {
      const text = `${literal},"next"`;
      expect(stringEnd(text, 0), literal).toBe(literal.length);
      expect(JSON.parse(text.slice(0, stringEnd(text, 0)))).toBe(JSON.parse(literal));
    }
  });

  it("agrees with JSON.stringify over many generated strings", () => {
    let seed = 7;
    const pick = (): string => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return ['"', "\\", "a", "é", "\n", "/", "\u2028"][seed % 7]!;
    };
    for (let n = 0; n < 2000; n++) {
      let value = "";
      for (let i = n % 17; i > 0; i--) value += pick();
      const text = `{"k":${JSON.stringify(value)},"z":1}`;
      const start = text.indexOf(":") + 1;
      expect(text.slice(start, stringEnd(text, start))).toBe(JSON.stringify(value));
      expect(valueEnd(text, 0)).toBe(text.length);
    }
  });
});

describe("spanAtPath", () => {
  it("finds a record's entry in the text as written: spaces, escapes, the last of a duplicated name", () => {
    const dup = '{"id": 1, "result": {"contents": [ {"uri": "a"} ], "contents": [7]}}';
    const result = spanAtPath(dup, rootSpan(dup), "result")!;
    expect(spanAtPath(dup, result, "contents[0]")).toEqual({
      start: dup.lastIndexOf("7"),
      end: dup.lastIndexOf("7") + 1,
    });
    const text = '{"id": 1, "result": {"contents": [ {"uri": "a"} , {"uri": "b\\"}", "x": [1, 2]} ]}}';
    const entry = spanAtPath(text, spanAtPath(text, rootSpan(text), "result")!, "contents[1]")!;
    expect(text.slice(entry.start, entry.end)).toBe('{"uri": "b\\"}", "x": [1, 2]}');
    expect(spanAtPath(text, rootSpan(text), "result.contents[5]")).toBeUndefined();
    expect(spanAtPath(text, rootSpan(text), "id.x")).toBeUndefined();
  });
});
