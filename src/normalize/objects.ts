/** Small helpers for JSON objects that must keep their keys, their order and nothing else. */
import { noteRebuilt } from "../wire/rebuiltFrom.js";

export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A copy of `source` with some keys replaced in place (same position) and new keys appended.
 * Keys are defined, not assigned, so a `__proto__` key from JSON.parse stays a plain key.
 * `rename` swaps one key for another at the same position (`blob` → `text`).
 */
export function rebuild(
  source: JsonObject,
  replace: Readonly<Record<string, unknown>>,
  rename?: readonly [from: string, to: string],
): JsonObject {
  const out: JsonObject = {};
  const done = new Set<string>();
  for (const key of Object.keys(source)) {
    if (rename !== undefined && key === rename[0]) {
      define(out, rename[1], replace[rename[1]]);
      done.add(rename[1]);
    } else if (Object.hasOwn(replace, key)) {
      define(out, key, replace[key]);
      done.add(key);
    } else {
      define(out, key, source[key]);
    }
  }
  for (const key of Object.keys(replace)) {
    if (!done.has(key) && !(rename !== undefined && key === rename[1])) define(out, key, replace[key]);
  }
  noteRebuilt(out, source);
  return out;
}

export function define(target: JsonObject, key: string, value: unknown): void {
  // Assignment makes the same own, enumerable, writable property on a plain object — except for
  // `__proto__`, whose inherited setter would swallow it. defineProperty is much slower.
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * `list` mapped item by item; the original array itself when no item changed (so unchanged
 * results keep their identity and are never copied).
 */
export function mapChanged(
  list: readonly unknown[],
  fn: (item: unknown, index: number) => unknown,
): readonly unknown[] {
  let out: unknown[] | null = null;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const next = fn(item, i);
    if (next !== item) {
      out ??= list.slice();
      out[i] = next;
    }
  }
  return out ?? list;
}
