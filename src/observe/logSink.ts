/**
 * Where log lines go and how they are written — the one writer under both the operational log
 * (logger.ts) and the normalization records (normalizationLog.ts). Never stdout: in `stdio` mode
 * stdout carries JSON-RPC only.
 *
 * - `{ file }`: appended to the file (created with its folders), asynchronously; reopened on
 *   demand (logrotate); `close()` writes what is left and closes it, waiting a bounded time.
 * - `{ fd }` (stderr): written synchronously — a line is with the OS when `writeNow` returns, and
 *   at exit (`process.exit()`, an uncaught exception) whatever still waits is written. Never
 *   closed.
 * - `{ stream }`: handed to the stream at once (tests, embedders); never closed.
 *
 * Lines given to `write` may wait in a batch: a write per record would be a syscall on the path
 * of every small read. The batch goes out once LOG_BATCH_BYTES have gathered, at most
 * LOG_FLUSH_MS after its first line, before any `writeNow` line, and at `close()`. A write that
 * fails (disk full, the reader gone) is reported once to `onError`; nothing more is written there
 * (to a file: until a reopen finds it writable again, told to `onResumed`).
 */
import type { Writable } from "node:stream";
import { fdLineOutput } from "./fdLineOutput.js";
import { fileLineOutput } from "./fileLineOutput.js";
import { endLastLine, prepareLogFile } from "./logFile.js";

export type LogTarget = { file: string } | { fd: number } | { stream: Writable };

export interface LogSink {
  /** A line that may wait in the batch (normalization records). */
  write(line: string): void;
  /** A line written now, after whatever waits in the batch (operational lines). */
  writeNow(line: string): void;
  /** Opens the file again (after an external rotation, e.g. logrotate on SIGHUP); no-op otherwise. */
  reopen(): void;
  /** Writes what waits; a file is then closed, an fd or a stream is left open (and usable). */
  close(): Promise<void>;
}

export interface LogSinkOptions {
  /** The first failed write (disk full, permissions, the reader gone): reported, never thrown. */
  onError?: (error: Error) => void;
  /** A file that failed takes records again (a reopen found it writable). */
  onResumed?: () => void;
  /** Longest `close()` (and the write at exit) waits, in ms. Default LOG_CLOSE_WAIT_MS. */
  closeWaitMs?: number;
}

/** Characters (bytes, for ASCII) of lines gathered before one write. */
export const LOG_BATCH_BYTES = 4096;
/** Longest a line waits in the batch, in ms. */
export const LOG_FLUSH_MS = 500;
/** Longest `close()`, or the last write at exit, waits for the destination, in ms: exit is never held up for good. */
export const LOG_CLOSE_WAIT_MS = 5000;

/**
 * Throws a `LogFileError` (path and OS error) when `target` is a file that cannot be written:
 * checked before anything is started, so a bad path fails at once instead of at exit.
 */
export function openLogSink(target: LogTarget, options: LogSinkOptions = {}): LogSink {
  if ("stream" in target) return streamSink(target.stream);
  const onError = options.onError ?? (() => {});
  const waitMs = options.closeWaitMs ?? LOG_CLOSE_WAIT_MS;
  if ("fd" in target) {
    const out = fdLineOutput(target.fd, onError);
    const sink = batchingSink(
      (text) => out.put(text),
      () => {},
      async () => out.flushSync(waitMs),
    );
    flushedAtExit.add(() => {
      sink.writeNow("");
      out.flushSync(waitMs);
    });
    return sink;
  }
  prepareLogFile(target.file);
  const out = fileLineOutput(target.file, {
    onError,
    prepare: () => {
      prepareLogFile(target.file);
      endLastLine(target.file);
    },
    onResumed: options.onResumed ?? (() => {}),
  });
  return batchingSink(
    (text) => out.put(text),
    () => out.reopen(),
    () => out.close(waitMs),
  );
}

let stderrSink: LogSink | undefined;

/**
 * The sink for `stream`: the real process's stderr is written through one shared fd sink (so
 * operational lines and records to stderr never tear each other and keep their order); any
 * other stream (tests, embedders) gets its own.
 */
export function sinkFor(stream: Writable): LogSink {
  if (stream !== process.stderr) return streamSink(stream);
  stderrSink ??= openLogSink({ fd: 2 });
  return stderrSink;
}

function streamSink(stream: Writable): LogSink {
  return {
    write: (line) => void stream.write(line),
    writeNow: (line) => void stream.write(line),
    reopen: () => {},
    close: () => Promise.resolve(),
  };
}

function batchingSink(put: (text: string) => void, reopen: () => void, finish: () => Promise<void>): LogSink {
  let batch = "";
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (batch === "") return;
    const text = batch;
    batch = "";
    put(text);
  };
  return {
    write(line) {
      batch += line;
      if (batch.length >= LOG_BATCH_BYTES) flush();
      else if (timer === undefined) {
        timer = setTimeout(flush, LOG_FLUSH_MS);
        // Never what keeps the process alive: close() and the exit hook write what is left.
        timer.unref();
      }
    },
    writeNow(line) {
      batch += line;
      flush();
    },
    reopen() {
      flush();
      reopen();
    },
    close() {
      flush();
      return finish();
    },
  };
}

/** What is written synchronously when the process exits (fd sinks: stderr). */
const flushedAtExit = new Set<() => void>();
process.on("exit", () => {
  for (const flush of flushedAtExit) flush();
});
