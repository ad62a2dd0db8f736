/**
 * UTF-8 byte length of JSON text, computed without serializing multi-megabyte strings when the
 * answer can be had more cheaply (change records carry these lengths for every entry).
 */

const NEEDS_ESCAPE = /["\\\x00-\x1f]/g;
const NEEDS_ESCAPE_OR_NON_ASCII = /["\\\x00-\x1f\x7f-\uffff]/;
const SHORT_ESCAPES = new Set(['"', "\\", "\b", "\f", "\n", "\r", "\t"]);

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Bytes of `JSON.stringify(value)` for a string, quotes included. */
export function jsonStringBytes(value: string, utf8Length?: number): number {
  if (!NEEDS_ESCAPE_OR_NON_ASCII.test(value)) return value.length + 2;
  if (!isWellFormed(value)) return Buffer.byteLength(JSON.stringify(value), "utf8");
  let extra = 0;
  NEEDS_ESCAPE.lastIndex = 0;
  for (let m = NEEDS_ESCAPE.exec(value); m !== null; m = NEEDS_ESCAPE.exec(value)) {
    extra += SHORT_ESCAPES.has(m[0]) ? 1 : 5;
  }
  return (utf8Length ?? Buffer.byteLength(value, "utf8")) + extra + 2;
}

/**
 * Bytes of `JSON.stringify(entry)` where `entry[key]` is a (possibly huge) string: the rest of
 * the entry is serialized with that value emptied, then the string's own length is added.
 */
export function entryJsonBytes(entry: Record<string, unknown>, key: string, valueBytes: number): number {
  const rest = Buffer.byteLength(JSON.stringify({ ...entry, [key]: "" }), "utf8");
  return rest - 2 + valueBytes;
}

export function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, "utf8");
}
