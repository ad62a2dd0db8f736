/**
 * Counting a JSON text's nodes — objects, arrays and object members — without parsing it: the
 * count agrees with the parsed value's on any JSON (brackets and colons in strings, escaped
 * quotes, backslash runs), the limit is exact, and text too short to exceed it is not read. And
 * reading a refused message's top level: its `method` and its `id` as written, stepping over
 * nested values.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nodesOf } from "../helpers/jsonNodes.js";
import { holdsMoreNodes, topLevelOf } from "../../src/wire/jsonNodes.js";

const bytes = (text: string): Buffer => Buffer.from(text, "utf8");

describe("holdsMoreNodes", () => {
  it("is exact at the limit: nested arrays, objects side by side, members of one object", () => {
    const nested = (n: number): string => "[".repeat(n) + "]".repeat(n);
    expect(holdsMoreNodes(bytes(nested(1000)), 1000)).toBe(false);
    expect(holdsMoreNodes(bytes(nested(1001)), 1000)).toBe(true);
    const flat = (n: number): string =>
      `[${Array(n - 1)
        .fill("{}")
        .join(",")}]`;
    expect(holdsMoreNodes(bytes(flat(1000)), 1000)).toBe(false);
    expect(holdsMoreNodes(bytes(flat(1001)), 1000)).toBe(true);
    // An object and its members: 1 + n nodes.
    const members = (n: number): string =>
      JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, k) => [`k${k}`, 0])));
    expect(holdsMoreNodes(bytes(members(999)), 1000)).toBe(false);
    expect(holdsMoreNodes(bytes(members(1000)), 1000)).toBe(true);
  });

  it("counts nothing inside a string, escaped quotes and backslash runs included", () => {
    // The message, its members params and a, and params: four nodes outside the string.
    const text = (inner: string): string => JSON.stringify({ params: { a: inner } });
    expect(holdsMoreNodes(bytes(text("[{:".repeat(2500))), 4)).toBe(false);
    expect(holdsMoreNodes(bytes(text(`${'\\"[:'.repeat(2000)}\\`)), 4)).toBe(false);
    expect(holdsMoreNodes(bytes(text(`${"\\".repeat(999)}"[`.repeat(500))), 4)).toBe(false);
    // A fifth, after the string: counted.
    expect(holdsMoreNodes(bytes(`${text("[".repeat(5000)).slice(0, -2)}},"c":0}`), 4)).toBe(true);
  });

  it("agrees with the parsed value's count on any JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 40 }), (value, limit) => {
        const text = JSON.stringify(value);
        expect(holdsMoreNodes(bytes(text), limit)).toBe(nodesOf(value) > limit);
      }),
      { numRuns: 2000 },
    );
  });

  it("reads no text shorter than twice the limit (it cannot hold more), and stops at an unclosed string", () => {
    expect(holdsMoreNodes(bytes("[[[[[[[[[[[["), 10)).toBe(false);
    expect(holdsMoreNodes(bytes(`["${"[".repeat(100)}`), 3)).toBe(false);
  });
});

describe("topLevelOf", () => {
  it.each([
    ['{"jsonrpc":"2.0","id":12,"params":{"id":1,"method":"x"},"method":"ping"}', true, "12"],
    ['\uFEFF { "method" : "ping" , "id" : "a\\"b" }', true, '"a\\"b"'],
    ['{"id":9007199254740993,"method":"tools/call","params":[[{"id":2}]]}', true, "9007199254740993"],
    ['{"jsonrpc":"2.0","id":3,"result":{"method":"x"}}', false, "3"],
    ['{"method":"notifications/x","params":{"id":4}}', true, undefined],
    ['{"id":{"nested":1},"method":"x"}', true, undefined],
    ['{"note":"\\"id\\":5","method":"x"}', true, undefined],
    ['[{"id":1,"method":"x"}]', false, undefined],
  ])("%s: method %s, id %s", (text, method, idText) => {
    expect(topLevelOf(bytes(text))).toEqual({ method, idText });
  });
});
