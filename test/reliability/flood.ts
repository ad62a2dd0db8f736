/**
 * What the backpressure and lifecycle tests share about the flood fixture
 * (test/fixtures/servers/flood-server.mjs): its path, its progress file, bounded polling, and a
 * collector of the flood notifications a host receives.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/paths.js";

export const FLOOD_SERVER = join(ROOT, "test", "fixtures", "servers", "flood-server.mjs");

export interface Progress {
  pid: number;
  written: number;
  received: number;
  outOfOrder: number;
  flooding: boolean;
  stalled: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: raw JSON-RPC from a test peer; tests index into it freely.
export type Message = Record<string, any>;

export function readProgress(file: string): Progress | undefined {
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")) as Progress;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until `done` holds, or fails after `timeoutMs` naming the last value. */
export async function until<T>(
  read: () => T,
  done: (value: T) => boolean,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`${what}: not reached in ${timeoutMs} ms (last: ${JSON.stringify(value)})`);
    await sleep(100);
  }
}

/** Waits until `read()` has not changed for `quietMs` (and `ready` holds): nothing moves any more. */
export async function untilSteady(
  read: () => number,
  ready: (value: number) => boolean,
  quietMs: number,
  timeoutMs: number,
  what: string,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last = Number.NaN;
  let since = Date.now();
  for (;;) {
    const value = read();
    if (value !== last) {
      last = value;
      since = Date.now();
    } else if (ready(value) && Date.now() - since >= quietMs) {
      return value;
    }
    if (Date.now() > deadline) throw new Error(`${what} never settled (last: ${value})`);
    await sleep(100);
  }
}

/** Collects the flood notifications a host receives: how many, and whether they came 0, 1, 2, … */
export function floodCollector(host: { onmessage?: (m: Message) => void }) {
  const seen = { count: 0, next: 0, outOfOrder: 0 };
  host.onmessage = (message: Message) => {
    if (message.method !== "notifications/message") return;
    const seq = message.params?.data?.seq;
    if (seq !== seen.next) seen.outOfOrder++;
    seen.next = seq + 1;
    seen.count++;
  };
  return seen;
}
