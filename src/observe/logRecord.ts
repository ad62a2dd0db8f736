/**
 * The normalization log line: one per changed or warned entry, never content.
 * `{ts, server, session, method, uri, action, mimeBefore, mimeAfter, bytesBefore, bytesAfter, saved, ms}`
 */
import type { ChangeAction } from "../normalize/change.js";
import type { NormalizationEvent } from "../normalize/change.js";
import { recordedText } from "../normalize/recordedText.js";

/** A log line's fields, in the line's order: records are built in this order. */
export interface LogRecord {
  ts: string;
  server: string;
  session: string;
  method: string;
  uri: string | null;
  action: ChangeAction;
  mimeBefore: string | null;
  mimeAfter: string | null;
  bytesBefore: number;
  bytesAfter: number;
  saved: number;
  ms: number;
  /** Where in the result (`contents[0]`), why, and whether it was applied (false in dryRun). */
  path: string;
  reason: string;
  applied: boolean;
  /** The charset the engine guessed for bytes that declared none (transcode of undeclared charsets). */
  detected?: { charset: string; confidence: number };
  /** The entry was changed by the record before it too: totals count it once (normalize/change.ts). */
  chained?: true;
}

function isUnchanged(change: { action: string }): boolean {
  return change.action === "none";
}

/** Records for the entries that changed or warned; `ms` is the message's engine time, shared out. */
export function toLogRecords(
  event: NormalizationEvent,
  session: { server: string; id: string },
  now: () => Date = () => new Date(),
): LogRecord[] {
  // Most messages change nothing (every entry "none"): they cost one pass and no allocation.
  if (event.changes.every(isUnchanged)) return [];
  const logged = event.changes.filter((change) => !isUnchanged(change));
  const ts = now().toISOString();
  const ms = Math.round((event.ms / logged.length) * 1000) / 1000;
  return logged.map((change) => ({
    ts,
    server: session.server,
    session: session.id,
    method: event.method,
    uri: recordedText(change.uri),
    action: change.action,
    mimeBefore: recordedText(change.mimeBefore),
    mimeAfter: recordedText(change.mimeAfter),
    bytesBefore: change.bytesBefore,
    bytesAfter: change.bytesAfter,
    saved: change.saved,
    ms,
    path: change.path,
    reason: recordedText(change.reason),
    applied: change.applied,
    ...(change.detected === undefined ? {} : { detected: change.detected }),
    ...(change.chained === true ? { chained: true as const } : {}),
  }));
}
