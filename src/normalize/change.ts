/** The record of what the engine decided for one entry: a log line before server, session and ts are added. */

/** Every action a record can carry: the one list (the type, the metrics' label values come from it). */
export const CHANGE_ACTIONS = [
  "unwrap-blob",
  "transcode",
  "reencode-blob",
  "fix-mime",
  "fill-mime",
  "skip-invalid-base64",
  "skip-too-large",
  "skip-detection-budget",
  "warn-unrepresentable",
  "warn-media-mismatch",
  "fit-image",
  "inline-resource",
  "cut-result",
  "warn-image-undecodable",
  "warn-image-too-many-pixels",
  "warn-image-unfittable",
  "warn-image-timeout",
  "warn-spill-full",
  "warn-lossy-text",
  "none",
] as const;

export type ChangeAction = (typeof CHANGE_ACTIONS)[number];

/** Actions that leave the entry as it was and say why: by name, every `skip-*` and `warn-*`. */
export const WARNING_ACTIONS: ReadonlySet<ChangeAction> = new Set(
  CHANGE_ACTIONS.filter((action) => action.startsWith("skip-") || action.startsWith("warn-")),
);

export interface ChangeRecord {
  action: ChangeAction;
  /** Where the entry sits in the result, as a JSON path (`contents[0]`, `content[2].resource`). */
  path: string;
  uri: string | null;
  mimeBefore: string | null;
  mimeAfter: string | null;
  /** UTF-8 length of the entry's JSON before and after (after = what would go out). */
  bytesBefore: number;
  bytesAfter: number;
  /** bytesBefore − bytesAfter; negative when a re-encode to blob grows the entry. */
  saved: number;
  /** Why, in a few words, for people reading logs. */
  reason: string;
  /** False in dryRun: the record says what would change, the entry went out unchanged. */
  applied: boolean;
  /** Present when the engine guessed the bytes' charset (none was declared): what it found. */
  detected?: { charset: string; confidence: number };
  /**
   * True when a record before it in the same result changed the same entry (the engine fixed its
   * type, then the fit layer made it smaller): `bytesBefore` is what that change left, and totals
   * count the entry once — this record adds only its own difference.
   */
  chained?: true;
}

export function isChange(record: ChangeRecord): boolean {
  return record.action !== "none";
}

/** What normalizing one message produced: the records of its entries, for logs, metrics and reports. */
export interface NormalizationEvent {
  /** The method of the request the result answers (or of the server→client request). */
  readonly method: string;
  readonly id: string | number;
  readonly changes: readonly ChangeRecord[];
  /** Milliseconds spent in the engine for this message. */
  readonly ms: number;
}
