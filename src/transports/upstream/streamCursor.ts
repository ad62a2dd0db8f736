/**
 * Where one SSE stream from an upstream has got to: the id of its last event (sent back as
 * `Last-Event-ID` to resume that stream, and no other) and the reconnection wait its `retry:`
 * field asked for.
 */
import { setTimeout as sleep } from "node:timers/promises";

export interface StreamCursor {
  lastEventId: string | undefined;
  retryMs: number;
}

export function newStreamCursor(retryMs: number): StreamCursor {
  return { lastEventId: undefined, retryMs };
}

/** Waits `ms` before a reconnection; false when `signal` aborted the wait (the transport closed). */
export async function waitToReconnect(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal, ref: false });
    return true;
  } catch {
    return false;
  }
}
