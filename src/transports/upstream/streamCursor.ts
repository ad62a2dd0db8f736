/**
 * Where one SSE stream from an upstream has got to: the id of its last event (sent back as
 * `Last-Event-ID` to resume that stream, and no other), how many events it has carried (with an
 * id or without: ids are optional) and the reconnection wait its `retry:` field asked for.
 */
import type { AbortLike } from "./postAbort.js";

/**
 * The longest wait a Node timer holds (2^31 − 1 ms, about 24.8 days): a longer one runs after
 * 1 ms, with a warning, so a server's `retry:` past it would have its stream asked for without
 * pause. Such a `retry:` is waited as this.
 */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Shortest wait before a stream is asked for again, whatever the server's `retry:` says: a server
 * that ends each stream at once with `retry: 0` would otherwise be asked hundreds of times a
 * second for as long as a call waits.
 */
export const MIN_RECONNECT_MS = 250;

export interface StreamCursor {
  lastEventId: string | undefined;
  events: number;
  retryMs: number;
}

export function newStreamCursor(retryMs: number): StreamCursor {
  return { lastEventId: undefined, events: 0, retryMs };
}

/** How long to wait before asking for the stream again: its `retry:`, at least `MIN_RECONNECT_MS`. */
export function reconnectDelayMs(cursor: StreamCursor): number {
  return Math.max(cursor.retryMs, MIN_RECONNECT_MS);
}

/** Waits `ms` before a reconnection; false when `signal` aborted the wait (the transport closed). */
export function waitToReconnect(ms: number, signal: AbortLike): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    // Never what keeps the process alive.
    timer.unref();
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
