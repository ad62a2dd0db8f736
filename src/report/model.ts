/**
 * The size report model: what `audit` and `report` compute and what every renderer
 * (md, json, html) shows. Its JSON form is the documented, stable `--format json` output:
 * fields are only ever added within a `schemaVersion`; renaming or removing one bumps it.
 */

import type { AuditItem, AuditScope, SkippedEntry, StructuredDuplicate } from "./auditDetails.js";

/** Version of the JSON report format. Bumped on any change that is not a pure addition. */
export const REPORT_SCHEMA_VERSION = 1;

/**
 * One entry's accounting, as the aggregator consumes it: a normalization log line
 * or an engine record from `audit` (then `action` may be `none`, and tokens may be present).
 */
export interface EntryFact {
  readonly ts?: string | null;
  readonly server: string;
  readonly method: string;
  readonly uri: string | null;
  /** A change action (normalize/change.ts), `none` (audit: unchanged), or whatever a newer proxy logged. */
  readonly action: string;
  readonly mimeBefore: string | null;
  readonly mimeAfter: string | null;
  readonly bytesBefore: number;
  readonly bytesAfter: number;
  /** bytesBefore − bytesAfter; negative when a re-encode to blob grew the entry. */
  readonly saved: number;
  /** False in dryRun: the change was logged, not made. Absent counts as applied. */
  readonly applied?: boolean;
  /** The entry was changed by the fact before it too: counted once, this fact adding its difference. */
  readonly chained?: boolean;
  /** Estimated LLM tokens of the entry's JSON (audit `--tokens` only). */
  readonly tokensBefore?: number;
  readonly tokensAfter?: number;
}

/** Sums over a set of entries. */
export interface Totals {
  /** Entries counted (audit: every entry read; log: every changed or warned entry logged). */
  entries: number;
  /** Entries whose action changed them (not `none`, not a warning). */
  changed: number;
  /** Entries left alone with a warning (`skip-*`, `warn-*`). */
  warned: number;
  /** Changes logged in dryRun (counted in the bytes as if made). */
  notApplied: number;
  bytesBefore: number;
  bytesAfter: number;
  saved: number;
  /** Present when tokens were counted (audit `--tokens`). */
  tokensBefore?: number;
  tokensAfter?: number;
  /** Entries per action (`unwrap-blob`, `transcode`, …, `none`). */
  actions: Record<string, number>;
}

/** A row of a breakdown (by server, mime type, action or method). */
export interface GroupRow extends Totals {
  key: string;
  /** This row's share of all bytes saved, 0…1 (0 when nothing was saved overall). */
  shareOfSaved: number;
}

/** A row per URI (audit: per resource read; log: per URI seen, bounded). */
export interface UriRow extends Totals {
  uri: string;
  server: string;
  /** Essence of the type the entry ended with (mimeAfter, else mimeBefore), or `(none)`. */
  mime: string;
  shareOfSaved: number;
}

export interface ReadFailure {
  uri: string;
  /** What the upstream answered (JSON-RPC error code and message) or why the read failed. */
  error: string;
  code?: number;
  /** Audit: a failed resource read, or a tool call that failed or answered `isError`. */
  kind?: "read" | "call";
}

export interface MalformedLine {
  source: string;
  line: number;
  error: string;
}

export interface ReportModel {
  schemaVersion: typeof REPORT_SCHEMA_VERSION;
  /** `audit`: one upstream's resources, read now. `log`: normalization logs aggregated. */
  kind: "audit" | "log";
  generatedAt: string;
  /** What was measured: the upstream (audit) or the log files (`-` is stdin). */
  source: { server?: string; upstream?: string; files?: string[] };
  /** First and last `ts` seen (log), or when the audit started and ended. */
  timeRange: { from: string | null; to: string | null };
  totals: Totals & { shareSaved: number };
  byServer: GroupRow[];
  byMime: GroupRow[];
  byAction: GroupRow[];
  byMethod: GroupRow[];
  /** Every URI tracked, most bytes saved first (audit: every resource read). */
  byUri: UriRow[];
  /** The first `topN` of byUri with something saved: where the bytes go. */
  topOffenders: UriRow[];
  /** Audit: resources whose read failed, with the error. Empty for logs. */
  failures: ReadFailure[];
  /** Log: lines that were not normalization records. Audit: zero. */
  malformed: { lines: number; examples: MalformedLine[] };
  /** Log: JSON lines that are not normalization records (operational log lines), skipped. */
  ignoredLines: number;
  /**
   * The URI table is bounded (about `limit` rows, those that save or grow most); entries of URIs
   * that fell out of it or never got in are `untrackedEntries`, and entries with no URI at all (a
   * tool's image or text block) `entriesWithoutUri`. Totals and breakdowns stay exact.
   */
  uriTable: { limit: number; untrackedEntries: number; entriesWithoutUri: number };
  /** Audit: resources listed by the upstream, and how many of them failed to read. */
  resources?: { listed: number; failed: number };
  /** Present when tokens were counted: which tokenizer encoding estimated them. */
  tokens?: { encoding: string; note: string };
  /** Audit: what was looked at (capabilities, counts, notes). */
  scope?: AuditScope;
  /** Audit: every entry read, in the order read (outside --max-bytes). */
  items?: AuditItem[];
  /** Audit: entries over --max-bytes, outside the totals. */
  skipped?: SkippedEntry[];
  /** Audit: bytes of tool results' content that structuredContent repeats. */
  duplicates?: StructuredDuplicate[];
}

/** Reads and calls that failed: every one counted, though `failures` lists only the first of them. */
export function failedCount(model: ReportModel): number {
  return model.scope === undefined ? model.failures.length : model.scope.readFailed + model.scope.callFailed;
}

/** The line under a failure list cut at its bound, or null when every failure is listed. */
export function unlistedFailures(model: ReportModel): string | null {
  const unlisted = failedCount(model) - model.failures.length;
  return unlisted > 0 ? `… and ${unlisted} more, not listed (each counted).` : null;
}
