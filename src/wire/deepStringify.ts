/**
 * `JSON.stringify(value)` with a stack of its own: the same text, for a value nested deeper than
 * `JSON.stringify` recurses (thousands of nested arrays in a field nobody reads, which
 * `JSON.parse` takes). Only for such values: it is slower than the built-in. No replacer, no
 * indent. As `JSON.stringify` does: `toJSON` is called (a raw value's stand-in is written by it),
 * a boxed primitive is written as what it boxes (a boxed BigInt throws), an object's keys and an
 * array's length are read when it is opened and each value when it is reached, and a cycle throws.
 */
import { types } from "node:util";

/** What `JSON.stringify` leaves out of an object (and writes as `null` in an array). */
const OMITTED = Symbol("omitted");

/** True for the RangeError of a stack too deep (not that of a string too long, which a retry would only repeat). */
export function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

/**
 * `JSON.stringify(value)`, or, when it overflows the stack, `deepStringify(value)`: the one way
 * the proxy writes and measures JSON of any depth. `beforeRetry` undoes what the first attempt's
 * `toJSON` calls did (raw values' stand-ins listed).
 */
export function stringifyAnyDepth(value: unknown, beforeRetry?: () => void): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!isStackOverflow(error)) throw error;
    beforeRetry?.();
    return deepStringify(value);
  }
}

/** `value` as `JSON.stringify` writes it under `key`: through its `toJSON`, unboxed, or omitted. */
function asWritten(value: unknown, key: string): unknown {
  let out = value;
  if ((typeof out === "object" && out !== null) || typeof out === "bigint") {
    const toJSON = (out as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") out = toJSON.call(out, key);
  }
  // By their internal slots, as the standard reads them (a box of another realm too).
  if (types.isNumberObject(out)) out = Number(out);
  else if (types.isStringObject(out)) out = String(out);
  else if (types.isBooleanObject(out)) out = Boolean.prototype.valueOf.call(out);
  else if (types.isBigIntObject(out)) out = BigInt.prototype.valueOf.call(out);
  return out === undefined || typeof out === "function" || typeof out === "symbol" ? OMITTED : out;
}

/** A container being written: its keys (an object) or length (an array), the next to write, how many were. */
interface OpenContainer {
  readonly holder: Record<string, unknown>;
  readonly keys: readonly string[] | undefined;
  readonly length: number;
  next: number;
  written: number;
}

/** The text `JSON.stringify(root)` gives (undefined where it gives none), however deep `root` is. */
export function deepStringify(root: unknown): string | undefined {
  const out: string[] = [];
  const open: OpenContainer[] = [];
  const onStack = new Set<object>();
  const write = (value: unknown): void => {
    if (typeof value !== "object" || value === null) {
      out.push(JSON.stringify(value));
      return;
    }
    if (onStack.has(value)) throw new TypeError("Converting circular structure to JSON");
    onStack.add(value);
    const holder = value as Record<string, unknown>;
    if (Array.isArray(value)) {
      out.push("[");
      open.push({ holder, keys: undefined, length: value.length, next: 0, written: 0 });
    } else {
      out.push("{");
      const keys = Object.keys(value);
      open.push({ holder, keys, length: keys.length, next: 0, written: 0 });
    }
  };
  const top = asWritten(root, "");
  if (top === OMITTED) return undefined;
  write(top);
  while (open.length > 0) {
    const container = open[open.length - 1]!;
    if (container.next === container.length) {
      out.push(container.keys === undefined ? "]" : "}");
      onStack.delete(container.holder);
      open.pop();
      continue;
    }
    const at = container.next++;
    const key = container.keys?.[at];
    const value = asWritten(container.holder[key ?? at], key ?? String(at));
    if (key === undefined) {
      if (container.written++ > 0) out.push(",");
      if (value === OMITTED) out.push("null");
      else write(value);
    } else if (value !== OMITTED) {
      out.push(container.written++ > 0 ? `,${JSON.stringify(key)}:` : `${JSON.stringify(key)}:`);
      write(value);
    }
  }
  return out.join("");
}
