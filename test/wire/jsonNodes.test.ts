/**
 * Counting a JSON text's objects and arrays without parsing it: the count agrees with the parsed
 * value's on any JSON (brackets in strings, escaped quotes, backslash runs), the limit is exact,
 * and text too short to exceed it is not read.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { holdsMoreContainers } from "../../src/wire/jsonContainers.js";

function containersOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + value.reduce((sum: number, item) => sum + containersOf(item), 0);
  if (typeof value === "object" && value !== null)
    return 1 + Object.values(value).reduce((sum: number, item) => sum + containersOf(item), 0);
  return 0;
}

const bytes = (text: string): Buffer => Buffer.from(text, "utf8");

describe("holdsMoreContainers", () => {
  it("is exact at the limit, nested or side by side", () => {
    const nested = (n: number): string => "[".repeat(n) + "]".repeat(n);
    expect(holdsMoreContainers(bytes(nested(1000)), 1000)).toBe(false);
    expect(holdsMoreContainers(bytes(nested(1001)), 1000)).toBe(true);
    const flat = (n: number): string =>
      `[${Array(n - 1)
        .fill("{}")
        .join(",")}]`;
    expect(holdsMoreContainers(bytes(flat(1000)), 1000)).toBe(false);
    expect(holdsMoreContainers(bytes(flat(1001)), 1000)).toBe(true);
  });

  it("counts no bracket inside a string, escaped quotes and backslash runs included", () => {
    const text = (inner: string): string =>
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "x", params: { a: inner, b: [] } });
    // 5,000 brackets in a string: only the three containers outside it count.
    expect(holdsMoreContainers(bytes(text("[{".repeat(2500))), 3)).toBe(false);
    expect(holdsMoreContainers(bytes(text(`${'\\"['.repeat(2000)}\\`)), 3)).toBe(false);
    expect(holdsMoreContainers(bytes(text(`${"\\".repeat(999)}"[`.repeat(500))), 3)).toBe(false);
    // The fourth, after the string: counted.
    expect(holdsMoreContainers(bytes(`${text("[".repeat(5000)).slice(0, -1)},"c":{}}`), 3)).toBe(true);
  });

  it("agrees with the parsed value's count on any JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 40 }), (value, limit) => {
        const text = JSON.stringify(value);
        expect(holdsMoreContainers(bytes(text), limit)).toBe(containersOf(value) > limit);
      }),
      { numRuns: 2000 },
    );
  });

  it("reads no text shorter than twice the limit (it cannot hold more), and stops at an unclosed string", () => {
    expect(holdsMoreContainers(bytes("[[[[[[[[[[[["), 10)).toBe(false);
    expect(holdsMoreContainers(bytes(`["${"[".repeat(100)}`), 3)).toBe(false);
  });
});
