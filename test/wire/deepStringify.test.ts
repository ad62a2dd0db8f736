/**
 * `deepStringify` writes what `JSON.stringify` writes — for any value, and for one nested deeper
 * than `JSON.stringify` recurses, which it writes with a stack of its own.
 */
import { describe, expect, it } from "vitest";
import { deepStringify, isStackOverflow } from "../../src/wire/deepStringify.js";

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
      return [new Date(0), new String("s\n"), new Number(-0), new Boolean(false), { toJSON: () => [1, { a: 2 }] }][
        Math.floor(random() * 5)
      ];
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

describe("deepStringify", () => {
  it("writes what JSON.stringify writes, on 10,000 random values", () => {
    let seed = 7;
    const random = (): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 2 ** 32;
    };
    for (let i = 0; i < 10_000; i++) {
      const value = randomValue(random, 0);
      expect(deepStringify(value)).toBe(JSON.stringify(value));
    }
  });

  it("sparse arrays, toJSON on arrays and keys, a BigInt's TypeError, as JSON.stringify", () => {
    const withToJson = Object.assign([1, 2], { toJSON: (key: string) => `array at ${JSON.stringify(key)}` });
    for (const value of [new Array(3), { a: withToJson, b: [withToJson] }, { [Symbol("s")]: 1, k: 2 }, [Symbol("s")]])
      expect(deepStringify(value)).toBe(JSON.stringify(value));
    expect(() => deepStringify({ a: 1n })).toThrow(TypeError);
  });

  it("reads as JSON.stringify reads: boxes by their slots (another realm's too), keys and length once, values when reached", async () => {
    const { runInNewContext } = await import("node:vm");
    // Each made afresh for each writer: their toJSON change what they are in.
    const sibling = (): Record<string, unknown> => {
      const object: Record<string, unknown> = { b: 1 };
      object.a = {
        toJSON: () => {
          object.b = 2;
          return 1;
        },
      };
      return { a: object.a, b: 1, c: object };
    };
    const gone = (): Record<string, unknown> => {
      const object: Record<string, unknown> = { b: 1 };
      return Object.assign(object, {
        a: {
          toJSON: () => {
            delete object.b;
            return 1;
          },
        },
      });
    };
    const grows = (): unknown[] => {
      const array: unknown[] = [];
      array.push({
        toJSON: () => {
          array.push(9);
          return 1;
        },
      });
      return array;
    };
    for (const make of [
      () => Object.assign(new Boolean(false), { valueOf: () => true }),
      () => Object.create(Number.prototype),
      () => runInNewContext("[new Number(3), new String('x'), new Boolean(true)]"),
      () => {
        const object: Record<string, unknown> = {};
        object.a = {
          toJSON: () => {
            object.b = 2;
            return 1;
          },
        };
        object.b = 1;
        return object;
      },
      sibling,
      gone,
      grows,
    ]) {
      const expected = JSON.stringify(make());
      expect(deepStringify(make()), expected).toBe(expected);
    }
    expect(() => deepStringify([Object(1n)])).toThrow(TypeError);
  });

  it("a cycle throws TypeError, as JSON.stringify's does, however deep it closes", () => {
    const root: Record<string, unknown> = {};
    let inner: Record<string, unknown> = root;
    for (let i = 0; i < 20_000; i++) inner = inner.a = {};
    inner.back = root;
    expect(() => deepStringify(root)).toThrow(TypeError);
    // One object twice, not inside itself, is no cycle.
    const shared = { k: 1 };
    expect(deepStringify([shared, { s: shared }])).toBe('[{"k":1},{"s":{"k":1}}]');
  });

  it("retries only a stack too deep: a string too long would fail again, twice the cost", () => {
    expect(isStackOverflow(new RangeError("Maximum call stack size exceeded"))).toBe(true);
    expect(isStackOverflow(new RangeError("Invalid string length"))).toBe(false);
    expect(isStackOverflow(new TypeError("Maximum call stack size exceeded"))).toBe(false);
  });

  it("writes a value nested 100,000 deep, which JSON.stringify cannot", () => {
    let deep: unknown = { k: "é", gone: undefined, n: new Number(1) };
    for (let i = 0; i < 100_000; i++) deep = i % 2 === 0 ? [deep] : { a: deep };
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(deepStringify(deep)).toBe(`${'{"a":['.repeat(50_000)}{"k":"é","n":1}${"]}".repeat(50_000)}`);
  });
});
