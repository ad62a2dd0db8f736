/**
 * `JSON.stringify(value)` with a stack of its own: the same text, for a value nested deeper than
 * `JSON.stringify` recurses (thousands of nested arrays in a field nobody reads, which
 * `JSON.parse` takes). Only for such values: it is slower than the built-in. No replacer, no
 * indent; `toJSON` is called as `JSON.stringify` calls it (a raw value's stand-in is written by
 * it), boxed primitives are written as what they box, and a BigInt throws the same TypeError.
 */

/** What `JSON.stringify` leaves out of an object (and writes as `null` in an array). */
const OMITTED = Symbol("omitted");

/** `value` as `JSON.stringify` writes it under `key`: through its `toJSON`, unboxed, or omitted. */
function asWritten(value: unknown, key: string): unknown {
  let out = value;
  if ((typeof out === "object" && out !== null) || typeof out === "bigint") {
    const toJSON = (out as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") out = toJSON.call(out, key);
  }
  if (out instanceof Number) out = Number(out);
  else if (out instanceof String) out = String(out);
  else if (out instanceof Boolean) out = out.valueOf();
  return out === undefined || typeof out === "function" || typeof out === "symbol" ? OMITTED : out;
}

/** A container being written: an array, or an object's keys and values; the next to write; how many were. */
interface OpenContainer {
  readonly values: readonly unknown[];
  readonly keys: readonly string[] | undefined;
  next: number;
  written: number;
}

/** The text `JSON.stringify(root)` gives (undefined where it gives none), however deep `root` is. */
export function deepStringify(root: unknown): string | undefined {
  const out: string[] = [];
  const open: OpenContainer[] = [];
  const write = (value: unknown): void => {
    if (Array.isArray(value)) {
      out.push("[");
      open.push({ values: value, keys: undefined, next: 0, written: 0 });
    } else if (typeof value === "object" && value !== null) {
      out.push("{");
      const keys = Object.keys(value);
      const values = keys.map((key) => (value as Record<string, unknown>)[key]);
      open.push({ values, keys, next: 0, written: 0 });
    } else out.push(JSON.stringify(value));
  };
  const top = asWritten(root, "");
  if (top === OMITTED) return undefined;
  write(top);
  while (open.length > 0) {
    const container = open[open.length - 1]!;
    if (container.next === container.values.length) {
      out.push(container.keys === undefined ? "]" : "}");
      open.pop();
      continue;
    }
    const at = container.next++;
    const key = container.keys?.[at];
    const value = asWritten(container.values[at], key ?? String(at));
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
