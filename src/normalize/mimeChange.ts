/**
 * Whether and how a `mimeType` string changes: the original string is kept whenever it already
 * says what the new type says in canonical form (lowercase essence), so nothing is rewritten
 * for show.
 */
import { formatMediaType, parseMediaType, type MediaType } from "./mediaType.js";

export interface MimeOutcome {
  /** The string to emit, or undefined to leave the field as it is (absent stays absent). */
  readonly value: string | undefined;
  readonly action: "fill-mime" | "fix-mime" | null;
}

export function mimeOutcome(declaredRaw: unknown, next: MediaType | null): MimeOutcome {
  if (next === null) return { value: undefined, action: null };
  const declared = parseMediaType(declaredRaw);
  if (declared !== null && sameType(declared, next) && essenceIsCanonical(declaredRaw as string)) {
    return { value: undefined, action: null };
  }
  const action = declaredRaw === undefined || declaredRaw === null || declaredRaw === "" ? "fill-mime" : "fix-mime";
  return { value: formatMediaType(next), action };
}

function sameType(a: MediaType, b: MediaType): boolean {
  if (a.essence !== b.essence || a.params.length !== b.params.length) return false;
  return a.params.every(([name, value], i) => b.params[i]![0] === name && b.params[i]![1] === value);
}

function essenceIsCanonical(raw: string): boolean {
  const semi = raw.indexOf(";");
  const head = semi === -1 ? raw : raw.slice(0, semi);
  return head === head.trim().toLowerCase() && head.length > 0;
}

export function mimeString(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}
