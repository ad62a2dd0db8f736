/** Walking JSON text (src/wire/jsonText.ts, jsonPathSpan.ts): string and value ends, paths to spans. */
import { describe, expect, it } from "vitest";
import { JsonSpans } from "../../src/wire/jsonPathSpan.js";
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

describe("JsonSpans", () => {
  it("finds a record's entry in the text as written: spaces, escapes, the last of a duplicated name", () => {
    const dup = new JsonSpans('{"id": 1, "result": {"contents": [ {"uri": "a"} ], "contents": [7]}}');
    const result = dup.at(dup.root, "result")!;
    const seven = dup.text.lastIndexOf("7");
    expect(dup.at(result, "contents[0]")).toEqual({ start: seven, end: seven + 1 });
    const spans = new JsonSpans('{"id": 1, "result": {"contents": [ {"uri": "a"} , {"uri": "b\\"}", "x": [1, 2]} ]}}');
    const entry = spans.at(spans.root, "result.contents[1]")!;
    expect(spans.text.slice(entry.start, entry.end)).toBe('{"uri": "b\\"}", "x": [1, 2]}');
    expect(spans.bytes(entry)).toBe(Buffer.byteLength('{"uri": "b\\"}", "x": [1, 2]}'));
    expect(spans.at(spans.root, "result.contents[5]")).toBeUndefined();
    expect(spans.at(spans.root, "id.x")).toBeUndefined();
  });

  it("walks a message's text once for all of its records: 20,000 entries in well under the seconds a walk per record took", () => {
    const entries = Array.from({ length: 20_000 }, (_, i) => `{"uri": "u://${i}", "text": "t${i}"}`);
    const spans = new JsonSpans(`{"result": {"contents": [${entries.join(", ")}]}}`);
    const result = spans.at(spans.root, "result")!;
    const started = performance.now();
    let total = 0;
    for (let i = 0; i < entries.length; i++) total += spans.bytes(spans.at(result, `contents[${i}]`)!);
    expect(total).toBe(entries.reduce((sum, e) => sum + e.length, 0));
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
