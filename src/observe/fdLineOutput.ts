/**
 * Log text written to an open file descriptor (stderr) synchronously: when `put` returns, the
 * text is with the OS, so a crash or `process.exit()` right after cannot lose it. Node's own
 * `process.stderr` is asynchronous on a pipe: what a full pipe does not take waits in memory and
 * is gone at exit.
 *
 * A pipe that is full (the reader is slow, EAGAIN) never blocks the proxy: the rest waits, in
 * order, and is retried shortly; `flushSync` (used at exit) waits for the reader for a bounded
 * time. Any other error (the reader is gone, EPIPE) ends the output: reported once, nothing more
 * is written. The descriptor is never closed: stderr stays open for the proxy's last lines.
 */
import { writeSync } from "node:fs";

export interface FdLineOutput {
  put(text: string): void;
  /** Writes everything waiting, blocking for the reader for at most `waitMs`. */
  flushSync(waitMs: number): void;
}

/** How long a full pipe is left before the waiting text is tried again, in ms. */
const RETRY_MS = 20;
/** How long `flushSync` sleeps between tries on a full pipe, in ms. */
const FLUSH_SLEEP_MS = 5;
/**
 * Most text kept waiting for a reader that does not read: past it new lines are dropped and
 * counted (a line saying how many is written once the reader takes text again), so a server
 * that makes the proxy log on every junk line cannot grow it without end.
 */
export const LOG_BACKLOG_BYTES = 16 * 1024 * 1024;

export function fdLineOutput(fd: number, onError: (error: Error) => void): FdLineOutput {
  /** Text a full pipe did not take yet, oldest first (the first may be the rest of a partial write). */
  const waiting: Buffer[] = [];
  let waitingBytes = 0;
  let dropped = 0;
  let retry: NodeJS.Timeout | undefined;
  let failed = false;

  const fail = (error: Error): void => {
    failed = true;
    waiting.length = 0;
    waitingBytes = 0;
    if (retry !== undefined) clearTimeout(retry);
    onError(error);
  };

  /** Writes what is waiting until the pipe is full; true when nothing waits any more. */
  const writeWaiting = (): boolean => {
    while (waiting.length > 0 && !failed) {
      const head = waiting[0]!;
      let written: number;
      try {
        written = writeSync(fd, head);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EAGAIN") return false;
        fail(error as Error);
        return true;
      }
      waitingBytes -= written;
      if (written < head.length) waiting[0] = head.subarray(written);
      else waiting.shift();
      if (dropped > 0 && waiting.length === 0) {
        const note = {
          level: "warn",
          time: new Date().toISOString(),
          msg: "log lines dropped: stderr was not read",
          dropped,
        };
        dropped = 0;
        queue(Buffer.from(`${JSON.stringify(note)}\n`));
      }
    }
    return true;
  };

  const queue = (text: Buffer): void => {
    waiting.push(text);
    waitingBytes += text.length;
  };

  const retryLater = (): void => {
    if (retry !== undefined || failed) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (!writeWaiting()) retryLater();
    }, RETRY_MS);
    // Never what keeps the process alive: at exit `flushSync` writes what still waits.
    retry.unref();
  };

  return {
    put(text) {
      if (failed) return;
      if (waitingBytes > LOG_BACKLOG_BYTES) {
        dropped += text.split("\n").length - 1 || 1;
        return;
      }
      queue(Buffer.from(text));
      // Behind text that already waits: order is kept, the retry writes it.
      if (waiting.length > 1) return;
      if (!writeWaiting()) retryLater();
    },
    flushSync(waitMs) {
      const until = Date.now() + waitMs;
      const sleeper = new Int32Array(new SharedArrayBuffer(4));
      while (!writeWaiting() && Date.now() < until) Atomics.wait(sleeper, 0, 0, FLUSH_SLEEP_MS);
    },
  };
}
