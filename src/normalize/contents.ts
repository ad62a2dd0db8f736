import type { ChangeRecord } from "./change.js";
import type { DetectionBudget } from "./charsetDetection.js";
import { normalizeResourceEntry } from "./entry.js";
import { mapChanged } from "./objects.js";
import type { Policy } from "./policy.js";

export interface NormalizedContents {
  /** The original array itself when no entry changed. */
  readonly contents: unknown;
  readonly changes: ChangeRecord[];
}

/** A `resources/read` `contents[]` array. Anything that is not an array passes through. */
export function normalizeContents(
  contents: unknown,
  policy: Policy,
  path = "contents",
  budget: DetectionBudget = policy.detectionBudget(),
): NormalizedContents {
  if (!Array.isArray(contents)) return { contents, changes: [] };
  const changes: ChangeRecord[] = [];
  const out = mapChanged(contents, (entry, index) => {
    const result = normalizeResourceEntry(entry, policy, `${path}[${index}]`, budget);
    if (result.record !== null) changes.push(result.record);
    return result.entry;
  });
  return { contents: out, changes };
}
