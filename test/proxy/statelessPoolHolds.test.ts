/**
 * The stateless pool's holds, timed exactly: a POST whose hold budget ran out while its drain
 * was handled (an event loop late past `holdMs`) is cut off like one whose timer fired, and its
 * upstream is then held for no other POST for `holdMs`.
 */
import { expect, it } from "vitest";
import { silentLogger } from "../../src/observe/logger.js";
import { StatelessPool } from "../../src/proxy/statelessPool.js";
import { NormalizingTransport } from "../../src/proxy/withNormalization.js";
import type { UpstreamTransport } from "../../src/transports/types.js";
import { Recorder } from "../helpers/recorder.js";

/** An upstream that counts how often the pool stops reading it. */
class CountingUpstream extends Recorder {
  pauses = 0;
  pauseReading(): void {
    this.pauses++;
  }
  resumeReading(): void {}
}

/** A stateless POST's host that is always behind, until told it drained. */
class BehindHost extends Recorder {
  readonly queuedBytes = 1_000_000;
  drain: (() => void) | undefined;
  whenDrained(): Promise<void> {
    return new Promise((resolve) => (this.drain = resolve));
  }
}

it("a POST cut off once its hold budget is spent keeps every other POST from holding its upstream right after", async () => {
  const upstream = new CountingUpstream();
  const pool = new StatelessPool({
    server: "fx",
    size: 1,
    idleMs: 60_000,
    requestTimeoutMs: 60_000,
    logger: silentLogger,
    hostBufferBytes: 10,
    holdMs: 100,
    startUpstream: async (requests) => {
      const transport = new NormalizingTransport(upstream as unknown as UpstreamTransport, {}, requests);
      await transport.start();
      return { id: "fx-1", transport, describeEnd: () => undefined };
    },
    onUpstreamEnded: () => {},
  });
  const a = new BehindHost();
  const b = new BehindHost();
  await pool.serve(a);
  await pool.serve(b);
  a.receive({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", _meta: { progressToken: 1 } } });
  b.receive({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "y", _meta: { progressToken: 1 } } });
  const [toA, toB] = upstream.sent.map((s) => (s.message.params as { _meta: { progressToken: number } })._meta);
  const progressFor = (token: number) =>
    upstream.receive({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: token, progress: 1 },
    });

  progressFor(toA!.progressToken); // A is behind: held
  expect(upstream.pauses).toBe(1);
  // The event loop runs late past holdMs, and A's drain is handled before the hold's timer.
  for (const until = Date.now() + 130; Date.now() < until; );
  a.drain!();
  await new Promise((resolve) => setImmediate(resolve));
  progressFor(toA!.progressToken); // behind again with its budget spent: cut off
  progressFor(toB!.progressToken); // B behind just after: cut off too, not held
  expect(upstream.pauses).toBe(1);
  await pool.closeAll();
});
