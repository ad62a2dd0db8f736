/**
 * The bridge (and the stateless pool) and the normalizing decorator keep one table of the
 * requests in flight on a connection: every request has one entry, both count the same entries,
 * and after answers, cancels, timeouts (also of an answer held by the fit stage), answers over
 * the size limit, the upstream's death and close nothing is left. Between in-memory transports;
 * the fit test fits a real image.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { JSONRPC } from "../../src/errors/jsonRpcCodes.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { fitLimitsOf } from "../../src/config/fitPolicy.js";
import { createFitRuntime } from "../../src/fit/runtime.js";
import { type Logger, silentLogger } from "../../src/observe/logger.js";
import { Bridge } from "../../src/proxy/bridge.js";
import { StatelessPool } from "../../src/proxy/statelessPool.js";
import { type NormalizationOptions, NormalizingTransport } from "../../src/proxy/withNormalization.js";
import { Recorder } from "../helpers/recorder.js";
import { bigPng } from "../fixtures/images/makeImages.js";

/** A logger keeping its warnings (the bridge says when it drops a late answer). */
function recordingLogger(warnings: string[]): Logger {
  const logger: Logger = {
    ...silentLogger,
    warn: (msg) => warnings.push(msg),
    debug: (msg) => warnings.push(`debug: ${msg}`),
    child: () => logger,
  };
  return logger;
}

async function bridgeOf(normalization: NormalizationOptions = {}, requestTimeoutMs = 1000, warnings: string[] = []) {
  const host = new Recorder();
  const upstream = new Recorder();
  const bridge = new Bridge({ host, upstream, logger: recordingLogger(warnings), requestTimeoutMs, normalization });
  await bridge.start();
  return { host, upstream, bridge };
}

/** Requests the decorator rewrites the answers of, and ones it does not, with ids of both types. */
const mixed = [
  { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: {} } },
  { jsonrpc: "2.0", id: "1", method: "ping" },
  { jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "file:///a" } },
  { jsonrpc: "2.0", id: 3, method: "tools/list" },
];

const counts = (bridge: Bridge) => [bridge.waitingCount, bridge.upstream.pendingCount];
const errorsTo = (host: Recorder) => host.sent.map((s) => s.message).filter((m) => "error" in m);

describe("one request table per connection", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("one entry per request in flight, whatever its method; answers and cancels take it out for both", async () => {
    const { host, upstream, bridge } = await bridgeOf();
    for (const request of mixed) host.receive(request);
    expect(counts(bridge)).toEqual([4, 4]);
    upstream.receive({ jsonrpc: "2.0", id: 1, result: { content: [] } });
    upstream.receive({ jsonrpc: "2.0", id: "1", result: {} });
    expect(counts(bridge)).toEqual([2, 2]);
    host.receive({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } });
    expect(counts(bridge)).toEqual([1, 1]);
    upstream.receive({ jsonrpc: "2.0", id: 3, error: { code: -32601, message: "no" } });
    expect(counts(bridge)).toEqual([0, 0]);
    // A reused id is refused while its request waits, and takes no second entry.
    host.receive(mixed[0]);
    host.receive(mixed[0]);
    expect(errorsTo(host).slice(1)).toMatchObject([{ id: 1, error: { code: JSONRPC.INVALID_REQUEST } }]);
    expect(counts(bridge)).toEqual([1, 1]);
  });

  it("timeouts leave nothing behind", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const { host, bridge } = await bridgeOf({}, 500);
    for (const request of mixed) host.receive(request);
    await vi.advanceTimersByTimeAsync(500);
    expect(errorsTo(host)).toHaveLength(4);
    expect(counts(bridge)).toEqual([0, 0]);
  });

  it("the upstream's death answers every request and leaves nothing behind", async () => {
    const { host, upstream, bridge } = await bridgeOf();
    for (const request of mixed) host.receive(request);
    upstream.end();
    await vi.waitFor(() => expect(bridge.isClosed).toBe(true));
    expect(errorsTo(host).map((m) => m.id)).toEqual([1, "1", 2, 3]);
    expect(counts(bridge)).toEqual([0, 0]);
  });

  it("close answers every request and leaves nothing behind", async () => {
    const { host, bridge } = await bridgeOf();
    for (const request of mixed) host.receive(request);
    await bridge.close("proxy shutting down");
    expect(errorsTo(host)).toHaveLength(4);
    expect(counts(bridge)).toEqual([0, 0]);
  });

  it("an answer held by the fit stage finds its method; timed out meanwhile, it is dropped and leaves nothing", async () => {
    const png = (await bigPng(4000, 3000)).toString("base64");
    const imageAnswer = (id: number) => ({
      jsonrpc: "2.0",
      id,
      result: { content: [{ type: "image", data: png, mimeType: "image/png" }] },
    });
    const runtime = createFitRuntime(fitLimitsOf({ limits: DEFAULT_LIMITS }));
    const fit = { fit: { policy: { images: true }, runtime } };

    // In time: the answer is fitted as the tools/call result it is.
    const first = await bridgeOf(fit, 60_000);
    first.host.receive(mixed[0]);
    first.upstream.receive(imageAnswer(1));
    expect(counts(first.bridge)).toEqual([1, 1]);
    await vi.waitFor(() => expect(first.host.sent).toHaveLength(1), { timeout: 30_000, interval: 20 });
    const fitted = first.host.sent[0]!.message as { result: { content: Array<{ data: string }> } };
    expect(fitted.result.content[0]!.data.length).toBeLessThan(png.length);
    expect(counts(first.bridge)).toEqual([0, 0]);

    // Timed out while its images are fitted: the host has its error, the late answer goes nowhere.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const warnings: string[] = [];
    const second = await bridgeOf(fit, 500, warnings);
    second.host.receive(mixed[0]);
    second.upstream.receive(imageAnswer(1));
    await vi.advanceTimersByTimeAsync(500);
    expect(errorsTo(second.host)).toMatchObject([{ id: 1, error: { code: JSONRPC.REQUEST_TIMEOUT } }]);
    expect(counts(second.bridge)).toEqual([0, 0]);
    await vi.waitFor(
      () =>
        expect(warnings).toContain(
          "debug: upstream answered a request given up (cancelled or timed out); not forwarded",
        ),
      { timeout: 30_000, interval: 20 },
    );
    expect(second.host.sent).toHaveLength(1);
    expect(counts(second.bridge)).toEqual([0, 0]);
    await first.bridge.close();
    await second.bridge.close();
  });
});

/** A pool of one upstream (its decorator reading the pool's table) and `posts` stateless POSTs served by it. */
async function poolOf(posts: number, requestTimeoutMs = 60_000) {
  const upstream = new Recorder();
  let decorator: NormalizingTransport | undefined;
  const pool = new StatelessPool({
    server: "fx",
    size: 1,
    idleMs: 60_000,
    requestTimeoutMs,
    logger: silentLogger,
    startUpstream: async (requests) => {
      decorator = new NormalizingTransport(upstream, {}, requests);
      await decorator.start();
      return { id: "fx-1", transport: decorator, describeEnd: () => "exited with code 3" };
    },
    onUpstreamEnded: () => {},
  });
  const hosts = Array.from({ length: posts }, () => new Recorder());
  for (const host of hosts) await pool.serve(host);
  const poolCounts = () => [pool.waitingCount, decorator!.pendingCount];
  /** The pool's id of the request the upstream got `n`-th. */
  const poolId = (n: number) => upstream.sent.filter((s) => "method" in s.message)[n]!.message.id as number;
  return { pool, upstream, hosts, poolCounts, poolId };
}

describe("one request table per pooled upstream", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("POSTs that each number from 1 have one entry per request; answers, too-large answers and ended POSTs take them out", async () => {
    const { upstream, hosts, poolCounts, poolId } = await poolOf(3);
    for (const host of hosts) host.receive(mixed[0]);
    hosts[0]!.receive(mixed[2]);
    expect(poolCounts()).toEqual([4, 4]);
    upstream.receive({ jsonrpc: "2.0", id: poolId(0), result: { content: [] } });
    expect(hosts[0]!.sent.map((s) => s.message)).toEqual([{ jsonrpc: "2.0", id: 1, result: { content: [] } }]);
    expect(poolCounts()).toEqual([3, 3]);
    // The upstream's answer was over limits.maxMessageBytes: the host gets the pool's error, no entry stays.
    upstream.onproblem?.({ kind: "too-large", id: poolId(3), bytes: 9_999_999, excerpt: "{" });
    expect(errorsTo(hosts[0]!)).toMatchObject([{ id: 2, error: { code: JSONRPC.MESSAGE_TOO_LARGE } }]);
    expect(poolCounts()).toEqual([2, 2]);
    hosts[1]!.end();
    expect(poolCounts()).toEqual([1, 1]);
    upstream.end();
    expect(errorsTo(hosts[2]!)).toMatchObject([{ id: 1, error: { code: JSONRPC.UPSTREAM_UNAVAILABLE } }]);
    expect(poolCounts()).toEqual([0, 0]);
  });

  it("timeouts leave nothing behind", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const { hosts, poolCounts } = await poolOf(2, 500);
    for (const host of hosts) for (const request of mixed) host.receive(request);
    expect(poolCounts()).toEqual([8, 8]);
    await vi.advanceTimersByTimeAsync(500);
    for (const host of hosts) expect(errorsTo(host)).toHaveLength(4);
    expect(poolCounts()).toEqual([0, 0]);
  });
});
