/**
 * What every decision about one resource entry needs, gathered once: the entry, its declared
 * type, the policy that applies, its size before, and the two ways a decision ends — the entry
 * as it was, or a rebuilt one — each with its change record.
 */
import type { ChangeAction, ChangeRecord } from "./change.js";
import type { DetectionBudget } from "./charsetDetection.js";
import type { DetectedCharset } from "./decideBytes.js";
import type { MediaType } from "./mediaType.js";
import { mimeString } from "./mimeChange.js";
import type { JsonObject } from "./objects.js";
import type { ResolvedPolicy } from "./policy.js";
import { entryJsonBytes } from "../wire/jsonSize.js";

export interface EntryResult {
  /** The entry to send on: the original object itself when nothing changes (or in dryRun). */
  readonly entry: unknown;
  /**
   * Null when the value is not a resource entry at all, or when it is left as it was and the
   * policy asks for no record of that (`recordUnchanged: false`).
   */
  readonly record: ChangeRecord | null;
}

/** How the JSON size of an entry's payload is measured, once a record needs it. */
export interface PayloadMeasure {
  /** JSON bytes of the payload's literal, quotes included. */
  jsonBytes(): number;
}

/** Not measured yet. */
const UNMEASURED = -1;

export class EntryContext {
  readonly uri: string | null;
  readonly mimeBefore: string | null;
  /** Set once the bytes' charset has been guessed: every record made after that carries it. */
  detected: DetectedCharset | undefined;
  private measuredPayload = UNMEASURED;
  private measuredBefore = UNMEASURED;

  constructor(
    readonly entry: JsonObject,
    readonly path: string,
    readonly declared: MediaType | null,
    readonly settings: ResolvedPolicy,
    /** `"blob"` or `"text"`: the member that holds the payload. */
    readonly key: string,
    private readonly measure: PayloadMeasure,
    /** False: an entry left as it was (action `none`) gets no record, and is never measured. */
    private readonly recordUnchanged: boolean,
    /** What charset detection may still read for the message the entry is in. */
    readonly budget: DetectionBudget,
  ) {
    this.uri = typeof entry.uri === "string" ? entry.uri : null;
    this.mimeBefore = mimeString(entry.mimeType);
  }

  /** JSON bytes of the payload's literal, quotes included (measured on first use). */
  get payloadBytes(): number {
    if (this.measuredPayload === UNMEASURED) this.measuredPayload = this.measure.jsonBytes();
    return this.measuredPayload;
  }

  /** UTF-8 length of the entry's JSON as it came (measured on first use). */
  get bytesBefore(): number {
    if (this.measuredBefore === UNMEASURED)
      this.measuredBefore = entryJsonBytes(this.entry, this.key, this.payloadBytes);
    return this.measuredBefore;
  }

  /** The entry goes on as it was; the record says why (none for `none` when records of those are off). */
  unchanged(action: ChangeAction, reason: string): EntryResult {
    if (action === "none" && !this.recordUnchanged) return { entry: this.entry, record: null };
    return { entry: this.entry, record: this.record(action, reason, this.mimeBefore, this.bytesBefore) };
  }

  /** `next` replaces the entry (unless dryRun); `nextKey` holds its payload of `nextPayloadBytes`. */
  changed(
    action: ChangeAction,
    reason: string,
    next: JsonObject,
    nextKey: string,
    nextPayloadBytes: number,
  ): EntryResult {
    const bytesAfter = entryJsonBytes(next, nextKey, nextPayloadBytes);
    return {
      entry: this.settings.dryRun ? this.entry : next,
      record: this.record(action, reason, mimeString(next.mimeType), bytesAfter),
    };
  }

  // Written out, not spread from a shared base: a spread copies a base object per record.
  private record(action: ChangeAction, reason: string, mimeAfter: string | null, bytesAfter: number): ChangeRecord {
    return {
      path: this.path,
      uri: this.uri,
      mimeBefore: this.mimeBefore,
      bytesBefore: this.bytesBefore,
      applied: !this.settings.dryRun,
      action,
      reason,
      mimeAfter,
      bytesAfter,
      saved: this.bytesBefore - bytesAfter,
      ...(this.detected === undefined ? {} : { detected: this.detected }),
    };
  }
}
