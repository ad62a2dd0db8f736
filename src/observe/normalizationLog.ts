/**
 * The normalization log writer: one JSON line per record, written
 * through pino's destination (sonic-boom) to `log.file` (created with its folder, opened for
 * append — a restart never truncates what earlier runs wrote) or to a stream (stderr). Never stdout: in `stdio` mode stdout
 * carries JSON-RPC only. Content is never logged: a `LogRecord` has none.
 */
import { pino } from "pino";
import type { Writable } from "node:stream";
import type { LogRecord } from "./logRecord.js";
import { prepareLogFile } from "./logFile.js";

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
}

/** Bytes of records gathered before one write. */
export const LOG_BATCH_BYTES = 4096;
/** Longest a record waits in the batch, in ms. */
export const LOG_FLUSH_MS = 500;
/** Longest `close()` waits for the file to be flushed and closed, in ms: exit is never held up for good. */
export const LOG_CLOSE_WAIT_MS = 5000;

/**
 * Throws a `LogFileError` (path and OS error) when `target` is a file that cannot be written:
 * checked before anything is started, so a bad path fails at once instead of at exit.
 */
export function createNormalizationLog(
  target: NormalizationLogTarget,
  options: NormalizationLogOptions = {},
): NormalizationLog {
  if ("file" in target) prepareLogFile(target.file);
  // Asynchronous, batched writes: a write per changed entry would be a syscall on the path
  // of every small read (bench/ measures it). Records are written once LOG_BATCH_BYTES have gathered, and
  // at least every LOG_FLUSH_MS; close() (and SIGTERM's shutdown) flushes what is left.
  const file =
    "file" in target
      ? pino.destination({ dest: target.file, append: true, sync: false, minLength: LOG_BATCH_BYTES })
      : "fd" in target
        ? pino.destination({ dest: target.fd, sync: false, minLength: LOG_BATCH_BYTES })
        : undefined;
  // After a failed write the file takes nothing more (no retries, no flushes): one report.
  let failed = false;
  file?.on("error", (error: Error) => {
    if (failed) return;
    failed = true;
    if (flusher !== undefined) clearInterval(flusher);
    options.onError?.(error);
  });
  // Only when a record has been written since: an idle proxy makes no empty writes (each one is a
  // thread-pool round trip and a wake-up, twice a second).
  let unflushed = false;
  const flusher =
    file === undefined
      ? undefined
      : setInterval(() => {
          if (!unflushed || failed) return;
          try {
            file.flush();
            unflushed = false;
          } catch {
            // Not ready yet (the file is still opening) or already closed: the next tick retries.
          }
        }, LOG_FLUSH_MS);
  flusher?.unref();
  const destination: { write(line: string): unknown } = file ?? (target as { stream: Writable }).stream;
  let closing: Promise<void> | undefined;
  return {
    write(record) {
      if (failed) return;
      // The log format fixes the line's fields and their order, `ts` first: the record's own
      // order (toLogRecords builds it so). One JSON.stringify per line — pino's logger
      // serialized each record field by field through its hooks, a measurable share of a small
      // read — and the same line it wrote, without pino's `level`/`time`.
      destination.write(`${JSON.stringify(record)}\n`);
      unflushed = true;
    },
    reopen() {
      // Only a file can be reopened (logrotate); stderr is what it is.
      if ("file" in target) file?.reopen();
    },
    close() {
      if (flusher !== undefined) clearInterval(flusher);
      if (file === undefined) return Promise.resolve();
      if ("fd" in target) {
        // stderr stays open for the proxy's last lines: flush, don't close.
        try {
          file.flushSync();
        } catch {
          // Nothing buffered, or the descriptor is gone: nothing more can be written anyway.
        }
        return Promise.resolve();
      }
      closing ??= new Promise<void>((resolve) => {
        if (failed) {
          file.destroy();
          resolve();
          return;
        }
        const timer = setTimeout(() => {
          file.destroy();
          resolve();
        }, LOG_CLOSE_WAIT_MS);
        timer.unref();
        const done = (): void => {
          clearTimeout(timer);
          resolve();
        };
        file.once("close", done);
        file.once("error", done);
        try {
          file.end();
        } catch {
          // Not opened yet or already broken: nothing left to flush.
          done();
        }
      });
      return closing;
    },
  };
}
