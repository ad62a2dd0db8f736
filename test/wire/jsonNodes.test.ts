/**
 * Counting a JSON text's nodes — every object and array, and every member or element after the
 * first in one (the commas) — without parsing it: the count agrees with the parsed value's on any
 * JSON (brackets and commas in strings, escaped quotes, backslash runs), the limit is exact, and
 * text too short to exceed it is not read. And reading a refused message's top level: its string
 * `method` and its `id` as written, stepping over nested values.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nodesOf } from "../helpers/jsonNodes.js";
import { holdsMoreNodes, topLevelOf } from "../../src/wire/jsonNodes.js";

const bytes = (text: string): Buffer => Buffer.from(text, "utf8");

describe("holdsMoreNodes", () => {
  it("is exact at the limit: nested arrays, elements, objects side by side, members of one object", () => {
    const nested = (n: number): string => "[".repeat(n) + "]".repeat(n);
    expect(holdsMoreNodes(bytes(nested(1000)), 1000)).toBe(false);
    expect(holdsMoreNodes(bytes(nested(1001)), 1000)).toBe(true);
    // An array of n short strings: 1 + (n - 1) nodes.
    const strings = (n: number): string => JSON.stringify(Array.from({ length: n }, (_, k) => k.toString(36)));
    expect(holdsMoreNodes(bytes(strings(1000)), 1000)).toBe(false);
    expect(holdsMoreNodes(bytes(strings(1001)), 1000)).toBe(true);
    // An array of m empty objects: 1 + m + (m - 1) nodes.
    const objects = (m: number): string => `[${Array(m).fill("{}").join(",")}]`;
    expect(holdsMoreNodes(bytes(objects(500)), 1000)).toBe(false);
    expect(holdsMoreNodes(bytes(objects(501)), 1000)).toBe(true);
    // An object of n members: 1 + (n - 1) nodes.
    const members = (n: number): string =>
      JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, k) => [`k${k}`, 0])));
    expect(holdsMoreNodes(bytes(members(1000)), 1000)).toBe(false);
    expect(holdsMoreNodes(bytes(members(1001)), 1000)).toBe(true);
  });

  it("counts nothing inside a string, escaped quotes and backslash runs included", () => {
    // The message and params: two nodes outside the string.
    const text = (inner: string): string => JSON.stringify({ params: { a: inner } });
    expect(holdsMoreNodes(bytes(text("[{,".repeat(2500))), 2)).toBe(false);
    expect(holdsMoreNodes(bytes(text(`${'\\"[,'.repeat(2000)}\\`)), 2)).toBe(false);
    expect(holdsMoreNodes(bytes(text(`${"\\".repeat(999)}"[,`.repeat(500))), 2)).toBe(false);
    // A third, after the string: counted.
    expect(holdsMoreNodes(bytes(`${text("[".repeat(5000)).slice(0, -1)},"c":0}`), 2)).toBe(true);
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

  it("gives the same in the pieces a text was read in, a string or a backslash run cut anywhere", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 6 }),
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (value, limit, cuts) => {
          const whole = bytes(JSON.stringify(value));
          const at = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
          const pieces = [0, ...at].map((start, k) => whole.subarray(start, k < at.length ? at[k] : whole.length));
          expect(holdsMoreNodes(pieces, limit)).toBe(nodesOf(value) > limit);
        },
      ),
      { numRuns: 2000 },
    );
    // Backslashes run across three pieces before a quote that therefore closes nothing.
    const text = bytes(`{"a":"x\\\\\\"[,[,[,","b":0}`);
    // Two nodes (the object and the comma before "b"): what stands in the string is not counted.
    expect(holdsMoreNodes([text], 2)).toBe(false);
    expect(holdsMoreNodes([text.subarray(0, 8), text.subarray(8, 10), text.subarray(10)], 2)).toBe(false);
    expect(holdsMoreNodes([text.subarray(0, 9), text.subarray(9, 10), text.subarray(10)], 1)).toBe(true);
  });

  it("reads no text of at most limit bytes (it cannot hold more), and stops at an unclosed string", () => {
    expect(holdsMoreNodes(bytes("[[[[[[[[[["), 10)).toBe(false);
    expect(holdsMoreNodes(bytes("[[[[[[[[[[["), 10)).toBe(true);
    expect(holdsMoreNodes(bytes(`["${"[".repeat(100)}`), 3)).toBe(false);
  });
});

describe("topLevelOf", () => {
  it.each([
    ['{"jsonrpc":"2.0","id":12,"params":{"id":1,"method":"x"},"method":"ping"}', true, "12", false],
    ['\uFEFF { "method" : "ping" , "id" : "a\\"b" }', true, '"a\\"b"', false],
    ['{"id":9007199254740993,"method":"tools/call","params":[[{"id":2}]]}', true, "9007199254740993", false],
    ['{"jsonrpc":"2.0","id":3,"result":{"method":"x"}}', false, "3", true],
    // A method that is not a string is no request (a response carrying one is not answered).
    ['{"jsonrpc":"2.0","id":0,"method":null,"result":{}}', false, "0", true],
    // An id too long to be one is not taken.
    [`{"method":"x","id":${"1".repeat(300)}}`, true, undefined, false],
    [`{"method":"x","id":"${"a".repeat(300)}"}`, true, undefined, false],
    ['{"method":"notifications/x","params":{"id":4}}', true, undefined, false],
    ['{"id":{"nested":1},"method":"x"}', true, undefined, false],
    ['{"note":"\\"id\\":5","method":"x"}', true, undefined, false],
    ['[{"id":1,"method":"x"}]', false, undefined, false],
    // Members named so inside nested values or strings are not the message's.
    ['{"id":"a[{","params":{"result":1,"error":2},"note":"\\"error\\":"}', false, '"a[{"', false],
    ['{"error":{"code":1,"message":"m"},"id":"x"}', false, '"x"', true],
    // Cut short (the start of a message too large to keep): what its bytes show.
    ['{"jsonrpc":"2.0","id":"req[3]","result":{"pad":"ppp', false, '"req[3]"', true],
    ['{"jsonrpc":"2.0","id":7,"params":{"pad":"ppp', false, "7", false],
  ])("%s: method %s, id %s, answers %s", (text, method, idText, answers) => {
    expect(topLevelOf(bytes(text))).toEqual({ method, idText, answers });
  });
});
