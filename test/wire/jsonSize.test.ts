/**
 * `jsonBytes` is the byte length of `JSON.stringify(value)`, also for a value nested deeper than
 * `JSON.stringify` recurses (measured in what `deepStringify` writes): what an entry with such an
 * unknown field weighs, so the engine measures it rather than failing the message.
 */
import { describe, expect, it } from "vitest";
import { jsonBytes } from "../../src/wire/jsonSize.js";
import { testPolicy } from "../helpers/policy.js";
import { normalizeMessage } from "../../src/normalize/message.js";

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
