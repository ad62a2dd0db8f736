/**
 * The flood fixture (test/fixtures/servers/flood-server.mjs) and what the backpressure tests do
 * with it, in both directions:
 *
 * - a host that stops reading asks for a flood of notifications: the flooder, which honours its
 *   own stdout's backpressure, is held back (`holdFlood`), and once the host reads again every
 *   notification arrives in order, then the answer (`expectFloodDelivered`);
 * - the fixture stops reading its stdin (`stallUpstream`), a host floods it with notifications
 *   (`notifyFlood`) until the proxy stops reading the host (`untilHostHeld`), and once released
 *   (`releaseUpstream`) the fixture has received every one, in order.
 *
 * The fixture reports what it wrote and received in a JSON progress file the tests poll.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { RawHost, RawMessage } from "../fixtures/hosts/rawHosts.mjs";
import { ROOT } from "./paths.js";
import { signalProcess } from "./pids.js";
import { until, untilSteady } from "./polling.js";

export const FLOOD_SERVER = join(ROOT, "test", "fixtures", "servers", "flood-server.mjs");

/** Notifications in a flood: ~460 bytes each, ~46 MB on the wire, ten times what the socket and pipe buffers between the flooder and a stalled host hold. */
export const FLOOD_COUNT = 100_000;
export const PAD_BYTES = 350;
/**
 * Proxy RSS growth allowed while a host is stalled: a held session keeps `limits.hostBufferBytes`
 * (1 MiB) plus a read's worth of messages; the rest is the garbage of what went through before
 * the hold, not yet collected. Unbounded, the same flood holds the ~46 MB as parsed messages
 * (several times that in heap).
 */
export const RSS_GROWTH_BOUND = 80 * 1024 * 1024;

export interface Progress {
  pid: number;
  written: number;
  received: number;
  outOfOrder: number;
  flooding: boolean;
  stalled: boolean;
}

export function readProgress(file: string): Progress | undefined {
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")) as Progress;
}

/** The `tools/call` that asks the fixture for `count` notifications, reporting to `progressFile`. */
export function floodCall(progressFile: string, count = FLOOD_COUNT): { name: string; arguments: object } {
  return { name: "flood", arguments: { count, padBytes: PAD_BYTES, progress: progressFile } };
}

/** Collects the flood notifications a host receives: how many, and whether they came 0, 1, 2, … */
export function floodCollector(host: { onmessage?: (m: RawMessage) => void }) {
  const seen = { count: 0, next: 0, outOfOrder: 0 };
  host.onmessage = (message: RawMessage) => {
    if (message.method !== "notifications/message") return;
    const seq = message.params?.data?.seq;
    if (seq !== seen.next) seen.outOfOrder++;
    seen.next = seq + 1;
    seen.count++;
  };
  return seen;
}

export interface HeldFlood {
  /** The flooder's progress once held: how many notifications it could write. */
  readonly held: Progress;
  /** The flood's answer, which comes once the host reads again. */
  readonly answer: Promise<RawMessage>;
  /** Whether the answer has come (it must not while the host does not read). */
  answered(): boolean;
}

/**
 * Asks the fixture for a flood on `host` (which the caller has paused) and waits until what the
 * flooder could write stops growing: the proxy stopped reading it.
 */
export async function holdFlood(
  host: RawHost,
  progressFile: string,
  { count = FLOOD_COUNT, timeoutMs = 30_000 } = {},
): Promise<HeldFlood> {
  let answered = false;
  const answer = host.request("tools/call", floodCall(progressFile, count), 120_000).finally(() => (answered = true));
  // Awaited by the caller; a failure before that must not go unhandled when the host closes.
  answer.catch(() => {});
  return { held: await untilFlooderHeld(progressFile, timeoutMs), answer, answered: () => answered };
}

/** Waits until what the flooder could write stops growing; resolves with its progress then. */
export async function untilFlooderHeld(progressFile: string, timeoutMs = 30_000): Promise<Progress> {
  await untilSteady(
    () => readProgress(progressFile)?.written ?? 0,
    (n) => n > 0,
    1500,
    timeoutMs,
    "the flooder's written count",
  );
  return readProgress(progressFile)!;
}

/** Resumes `host`; expects the flood's answer and all `count` notifications, 0, 1, 2, … */
export async function expectFloodDelivered(
  host: RawHost,
  flood: HeldFlood,
  seen: ReturnType<typeof floodCollector>,
  count = FLOOD_COUNT,
): Promise<void> {
  host.resume();
  expect((await flood.answer).result.content[0].text).toBe(`flooded ${count}`);
  // Notifications come before the answer on every transport but streamable HTTP's, where
  // they share the answer's stream and so are in before it too.
  await until(
    () => seen.count,
    (n) => n >= count,
    10_000,
    "flood notifications",
  );
  expect(seen).toEqual({ count, next: count, outOfOrder: 0 });
}

/** Has the fixture stop reading its stdin (until SIGUSR2); resolves with its pid once it has. */
export async function stallUpstream(host: RawHost, progressFile: string): Promise<number> {
  await host.request("tools/call", { name: "stall", arguments: { ms: 60_000, progress: progressFile } });
  const stalled = await until(
    () => readProgress(progressFile),
    (p) => p?.stalled === true,
    10_000,
    "stall",
  );
  return stalled!.pid;
}

/** Sends `count` notifications of about `padBytes` each, numbered from 0, as fast as the host takes them. */
export function notifyFlood(host: RawHost, count: number, padBytes: number): void {
  const pad = "y".repeat(padBytes);
  for (let seq = 0; seq < count; seq++) host.notify("notifications/flood", { seq, pad });
}

/**
 * Waits until the host's backlog stops moving and resolves with it: what the proxy did not take
 * once it stopped reading the host (0 when it read everything).
 */
export function untilHostHeld(host: RawHost): Promise<number> {
  return untilSteady(
    () => host.backlogBytes,
    () => true,
    1500,
    30_000,
    "the host's backlog",
  );
}

/** Lets the stalled fixture read again; expects it to receive all `count` notifications, in order. */
export async function releaseUpstream(pid: number, progressFile: string, count: number, timeoutMs = 60_000) {
  signalProcess(pid, "SIGUSR2");
  const done = await until(
    () => readProgress(progressFile),
    (p) => (p?.received ?? 0) >= count,
    timeoutMs,
    "upstream received",
  );
  expect(done).toMatchObject({ received: count, outOfOrder: 0 });
}
