/**
 * One line of a normalization log back into an entry fact. Total: any string in,
 * a verdict out. A log written to stderr also holds the proxy's operational lines (`level`,
 * `msg`); those are JSON but not records, and are `ignored`, not `malformed`.
 */
import type { EntryFact } from "./model.js";

export type ParsedLine =
  | { kind: "record"; fact: EntryFact }
  | { kind: "ignored" }
  | { kind: "blank" }
  | { kind: "malformed"; error: string };

const NUMBER_FIELDS = ["bytesBefore", "bytesAfter"] as const;

export function parseLogLine(line: string): ParsedLine {
  if (line.trim() === "") return { kind: "blank" };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { kind: "malformed", error: `not JSON (${(error as Error).message})` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { kind: "malformed", error: "not a JSON object" };
  const obj = value as Record<string, unknown>;
  // A record is what has an action and sizes; anything else JSON is an operational line.
  if (!("action" in obj) && !("bytesBefore" in obj)) return { kind: "ignored" };
  if (typeof obj.action !== "string" || obj.action === "")
    return { kind: "malformed", error: "field action is not a non-empty string" };
  for (const name of NUMBER_FIELDS) {
    const n = obj[name];
    // A whole number a double holds exactly: 1.5, -10, 1e308 or 2^53 + 1 would poison every total.
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0)
      return { kind: "malformed", error: `field ${name} is not a byte count (a whole number from 0 to 2^53 − 1)` };
  }
  const bytesBefore = obj.bytesBefore as number;
  const bytesAfter = obj.bytesAfter as number;
  // `saved` is derived; a line whose saved disagrees with its sizes was tampered with or cut.
  if (obj.saved !== undefined && obj.saved !== bytesBefore - bytesAfter)
    return { kind: "malformed", error: "field saved is not bytesBefore − bytesAfter" };
  for (const name of ["server", "method"] as const) {
    if (obj[name] !== undefined && typeof obj[name] !== "string")
      return { kind: "malformed", error: `field ${name} is not a string` };
  }
  for (const name of ["uri", "mimeBefore", "mimeAfter", "ts"] as const) {
    if (obj[name] !== undefined && obj[name] !== null && typeof obj[name] !== "string")
      return { kind: "malformed", error: `field ${name} is not a string or null` };
  }
  return {
    kind: "record",
    fact: {
      ts: (obj.ts as string | null | undefined) ?? null,
      server: (obj.server as string | undefined) ?? "(unknown)",
      method: (obj.method as string | undefined) ?? "(unknown)",
      uri: (obj.uri as string | null | undefined) ?? null,
      action: obj.action,
      mimeBefore: (obj.mimeBefore as string | null | undefined) ?? null,
      mimeAfter: (obj.mimeAfter as string | null | undefined) ?? null,
      bytesBefore,
      bytesAfter,
      saved: bytesBefore - bytesAfter,
      ...(typeof obj.applied === "boolean" ? { applied: obj.applied } : {}),
      ...(obj.chained === true ? { chained: true } : {}),
    },
  };
}
