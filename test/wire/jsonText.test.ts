/** Walking JSON text (src/wire/jsonText.ts, jsonPathSpan.ts): string and value ends, paths to spans. */
import { describe, expect, it } from "vitest";
import { containerEnds } from "../../src/wire/containerEnds.js";
import { JsonSpans } from "../../src/wire/jsonPathSpan.js";
import { itemSpans, memberSpans, stringEnd, valueEnd } from "../../src/wire/jsonText.js";

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

describe("containerEnds", () => {
  it("finds where every object and array ends, as valueEnd does, brackets and quotes in strings aside", () => {
    const value = { a: [1, { b: ']}\\"' }, [[]], "[{"], c: {}, d: { e: [{ f: "\\\\" }, "}"] }, g: '{\\"[' };
    const text = ` ${JSON.stringify(value)} `;
    const endOf = containerEnds(text);
    let opens = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '"') i = stringEnd(text, i) - 1;
      else if (c === "{" || c === "[") {
        opens++;
        expect(endOf(i), `at ${i}`).toBe(valueEnd(text, i));
      }
    }
    expect(opens).toBe(9);
    expect(memberSpans(text, 1, endOf)).toEqual(memberSpans(text, 1));
    expect(itemSpans(text, text.indexOf("["), endOf)).toEqual(itemSpans(text, text.indexOf("[")));
  });

  it("agrees with valueEnd over many generated values", () => {
    let seed = 11;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    const value = (depth: number): unknown => {
      const kind = depth > 6 ? 2 + next(2) : next(4);
      if (kind === 0) return Array.from({ length: next(4) }, () => value(depth + 1));
      if (kind === 1)
        return Object.fromEntries(Array.from({ length: next(4) }, (_, i) => [`k${i}]{`, value(depth + 1)]));
      return kind === 2 ? '\\"[{'.slice(next(5)) : next(1000);
    };
    for (let n = 0; n < 300; n++) {
      const text = JSON.stringify(value(0));
      const endOf = containerEnds(text);
      for (let i = 0; i < text.length; i++) {
        if (text[i] === '"') i = stringEnd(text, i) - 1;
        else if (text[i] === "{" || text[i] === "[") expect(endOf(i)).toBe(valueEnd(text, i));
      }
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
