/**
 * The normalization log: one JSON line per record, through the shared log writer (logSink.ts) to
 * `log.file` (created with its folder, opened for append — a restart never truncates what earlier
 * runs wrote), to stderr, or to a stream; batched. Never stdout: in `stdio` mode stdout carries
 * JSON-RPC only. Content is never logged: a `LogRecord` has none.
 */
import type { Writable } from "node:stream";
import type { LogRecord } from "./logRecord.js";
import { type LogSink, openLogSink, sinkFor } from "./logSink.js";

export { LOG_BATCH_BYTES, LOG_CLOSE_WAIT_MS, LOG_FLUSH_MS } from "./logSink.js";

export interface NormalizationLog {
  write(record: LogRecord): void;
  /** Reopens the file (after an external rotation, e.g. logrotate on SIGHUP); no-op for streams. */
  reopen(): void;
  /** Flushes and closes the file; a stream (stderr) is left open. */
  close(): Promise<void>;
}

export type NormalizationLogTarget = { file: string } | { fd: number } | { stream: Writable };

export interface NormalizationLogOptions {
  /** A write to the file failed (disk full, permissions): reported, never thrown into the proxy. */
  onError?: (error: Error) => void;
  /** The file takes records again after a failure (a reopen found it writable). */
  onResumed?: () => void;
}

/**
 * Throws a `LogFileError` (path and OS error) when `target` is a file that cannot be written:
 * checked before anything is started, so a bad path fails at once instead of at exit.
 */
export function createNormalizationLog(
  target: NormalizationLogTarget,
  options: NormalizationLogOptions = {},
): NormalizationLog {
  // stderr is shared with the operational log: one writer, so their lines never tear each other.
  const sink: LogSink = "fd" in target && target.fd === 2 ? sinkFor(process.stderr) : openLogSink(target, options);
  return {
    write(record) {
      // The log format fixes the line's fields and their order, `ts` first: the record's own
      // order (toLogRecords builds it so). One JSON.stringify per line — the same line pino's
      // logger once wrote, without pino's `level`/`time`.
      sink.write(`${JSON.stringify(record)}\n`);
    },
    reopen: () => sink.reopen(),
    close: () => sink.close(),
  };
}
