/**
 * `jsonBytes` is the byte length of `JSON.stringify(value)`, also for a value nested deeper than
 * `JSON.stringify` recurses (counted by `deepJsonBytes`, its own stack): what an entry with such an
 * unknown field weighs, so the engine measures it rather than failing the message.
 */
import { describe, expect, it } from "vitest";
import { deepJsonBytes, jsonBytes } from "../../src/wire/jsonSize.js";
import { testPolicy } from "../helpers/policy.js";
import { normalizeMessage } from "../../src/normalize/message.js";

/** A random value of the kinds `JSON.stringify` treats apart (omitted members, `toJSON`, escapes). */
function randomValue(random: () => number, depth: number): unknown {
  const pick = Math.floor(random() * (depth > 4 ? 8 : 11));
  const strings = ["", "a", 'q"\\', "line\nbreak\t\u0001", "é€😀", "\ud800 lone", "x".repeat(40)];
  switch (pick) {
    case 0:
      return strings[Math.floor(random() * strings.length)];
    case 1:
      return [0, -0, 1.5, -1e300, 123456789, Number.NaN, Number.POSITIVE_INFINITY][Math.floor(random() * 7)];
    case 2:
      return random() < 0.5;
    case 3:
      return null;
    case 4:
      return undefined;
    case 5:
      return () => 1;
    case 6:
      return { toJSON: (key: string) => `key:${key}` };
    case 7:
      return new Date(0);
    case 8:
    case 9: {
      const length = Math.floor(random() * 5);
      return Array.from({ length }, () => randomValue(random, depth + 1));
    }
    default: {
      const out: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 5); i > 0; i--) out[strings[i]! + i] = randomValue(random, depth + 1);
      return out;
    }
  }
}

describe("deepJsonBytes", () => {
  it("counts what JSON.stringify writes, on 5,000 random values", () => {
    let seed = 7;
    const random = (): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 2 ** 32;
    };
    for (let i = 0; i < 5000; i++) {
      const value = randomValue(random, 0);
      const text = JSON.stringify(value);
      expect(deepJsonBytes(value), text).toBe(text === undefined ? 0 : Buffer.byteLength(text));
    }
  });
});

describe("jsonBytes of a value nested deeper than JSON.stringify goes", () => {
  it("is counted, not thrown: 100,000 nested arrays, and objects inside them", () => {
    let deep: unknown = { k: "é", gone: undefined };
    for (let i = 0; i < 100_000; i++) deep = i % 2 === 0 ? [deep] : { a: deep };
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    // 50,000 levels of `[` `]` and 50,000 of `{"a":` `}`, around {"k":"é"} (10 bytes).
    expect(jsonBytes(deep)).toBe(50_000 * 2 + 50_000 * 6 + 10);
  });

  it("an entry holding one is still normalized: its blob unwrapped, its bytes counted", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const blob = Buffer.from("hello world text").toString("base64");
    const entry = { uri: "file:///a.txt", mimeType: "text/plain", blob, x: deep };
    const out = normalizeMessage(
      { jsonrpc: "2.0", id: 1, result: { contents: [entry] } },
      testPolicy(),
      "resources/read",
    );
    const written = (out.value as { result: { contents: Array<Record<string, unknown>> } }).result.contents[0]!;
    expect(written.text).toBe("hello world text");
    expect(written.x).toBe(deep);
    const rest = `{"uri":"file:///a.txt","mimeType":"text/plain","blob":"${blob}","x":`.length + 1 + 40_001;
    expect(out.changes).toMatchObject([{ action: "unwrap-blob", bytesBefore: rest }]);
  });
});
