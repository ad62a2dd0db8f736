/**
 * A host batch's answers, wherever they come from — refused by the proxy at once, answered by
 * the upstream one by one or in its own array, timed out, ended with the session — reach a host
 * that takes messages whole as one array (JSON-RPC 2.0 §6), once the last is in. A request the
 * host cancels is owed nothing; answers held past `hostBufferBytes` go out early, as an array of
 * their own. The bridge between two recorders, on protocol 2025-03-26.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger, type Logger } from "../../src/observe/logger.js";
import { Bridge } from "../../src/proxy/bridge.js";
import { JSONRPC } from "../../src/errors/jsonRpcCodes.js";
import { Recorder } from "../helpers/recorder.js";

class WholeMessageHost extends Recorder {
  readonly keepsBatches = true;
}

async function batchSession(options: { hostBufferBytes?: number; version?: string } = {}) {
  const host = new WholeMessageHost();
  const upstream = new Recorder();
  const logger: Logger = { ...silentLogger, child: () => logger };
  const bridge = new Bridge({
    host,
    upstream,
    logger,
    requestTimeoutMs: 1000,
    ...(options.hostBufferBytes === undefined ? {} : { hostBufferBytes: options.hostBufferBytes }),
  });
  await bridge.start();
  const version = options.version ?? "2025-03-26";
  host.receive({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: version } });
  upstream.receive({ jsonrpc: "2.0", id: 0, result: { protocolVersion: version } });
  host.sent.length = 0;
  upstream.sent.length = 0;
  return { host, upstream, bridge };
}

const call = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "x" } });
const result = (id: number, text = "ok") => ({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text }] } });
const idsOf = (message: unknown) => (message as Array<{ id: unknown }>).map((m) => m.id);

describe("a host batch's answers, gathered", () => {
  it("a refusal and two answers sent one by one reach the host as one array, once the last is in", async () => {
    const { host, upstream } = await batchSession();
    host.receive([call(1), { ...call(2), extra: true }, { jsonrpc: "2.0", method: "notifications/x" }, call(3)]);
    expect(upstream.sent.map((s) => s.message)).toEqual([
      [call(1), { jsonrpc: "2.0", method: "notifications/x" }, call(3)],
    ]);
    expect(host.sent).toEqual([]);
    upstream.receive(result(3));
    expect(host.sent).toEqual([]);
    upstream.receive(result(1));
    expect(host.sent).toHaveLength(1);
    const [answers] = host.sent.map((s) => s.message as unknown as Array<Record<string, unknown>>);
    expect(answers).toEqual([
      {
        jsonrpc: "2.0",
        id: 2,
        error: {
          code: JSONRPC.INVALID_REQUEST,
          message: 'Invalid Request: a request has only "jsonrpc", "id", "method" and "params", not "extra"',
        },
      },
      result(3),
      result(1),
    ]);
  });

  it("the upstream's own array goes on as written, the proxy's refusal added at its end", async () => {
    const { host, upstream } = await batchSession();
    host.receive([call(1), { ...call(2), jsonrpc: "1.0" }, call(3)]);
    upstream.receive([result(1), { jsonrpc: "2.0", method: "notifications/message" }, result(3)]);
    expect(host.sent.map((s) => idsOf(s.message))).toEqual([[1, undefined, 3, 2]]);
  });

  it("a request the host cancels is owed nothing: the array goes with the others' answers", async () => {
    const { host, upstream } = await batchSession();
    host.receive([call(1), call(2)]);
    host.receive({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } });
    expect(host.sent).toEqual([]);
    upstream.receive(result(1));
    expect(host.sent.map((s) => idsOf(s.message))).toEqual([[1]]);
  });

  it("a batch the host cancels whole sends nothing", async () => {
    const { host, upstream } = await batchSession();
    host.receive([call(1)]);
    host.receive({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } });
    upstream.receive(result(1));
    expect(host.sent).toEqual([]);
  });

  it("the session's end answers what is left, in the one array", async () => {
    const { host, upstream, bridge } = await batchSession();
    host.receive([call(1), call(2)]);
    upstream.receive(result(2));
    await bridge.close("test over");
    expect(host.sent).toHaveLength(1);
    expect(host.sent[0]!.message).toMatchObject([
      { id: 2, result: {} },
      { id: 1, error: { code: JSONRPC.UPSTREAM_UNAVAILABLE } },
    ]);
  });

  it("answers held past hostBufferBytes go out as an array of their own; the rest follow in another", async () => {
    const { host, upstream } = await batchSession({ hostBufferBytes: 1000 });
    host.receive([call(1), call(2), call(3)]);
    upstream.receive(result(1, "a".repeat(600)));
    expect(host.sent).toEqual([]);
    upstream.receive(result(2, "b".repeat(600)));
    expect(host.sent.map((s) => idsOf(s.message))).toEqual([[1, 2]]);
    upstream.receive(result(3));
    expect(host.sent.map((s) => idsOf(s.message))).toEqual([[1, 2], [3]]);
  });

  it("what the session's batches hold together is bounded: the batch that passes it sends what it holds", async () => {
    const { host, upstream } = await batchSession({ hostBufferBytes: 1000 });
    host.receive([call(1), call(2)]);
    host.receive([call(3), call(4)]);
    upstream.receive(result(1, "a".repeat(600)));
    expect(host.sent).toEqual([]);
    upstream.receive(result(3, "c".repeat(600)));
    expect(host.sent.map((s) => idsOf(s.message))).toEqual([[3]]);
    upstream.receive(result(4));
    upstream.receive(result(2));
    expect(host.sent.map((s) => idsOf(s.message))).toEqual([[3], [4], [1, 2]]);
  });

  it("an upstream array that answers part of a batch: its answers wait for the rest, what else it holds goes on", async () => {
    const { host, upstream } = await batchSession();
    host.receive([call(1), call(2)]);
    upstream.receive([result(1), { jsonrpc: "2.0", method: "notifications/message" }]);
    expect(host.sent.map((s) => idsOf(s.message))).toEqual([[undefined]]);
    upstream.receive(result(2));
    expect(host.sent.map((s) => idsOf(s.message))).toEqual([[undefined], [1, 2]]);
  });

  it("a host on a protocol without batches has them refused, each answer alone, as before", async () => {
    const { host } = await batchSession({ version: "2025-06-18" });
    host.receive([call(1), call(2)]);
    expect(host.sent.map((s) => (s.message as { id: unknown }).id)).toEqual([1, 2]);
  });
});

describe("a host batch's answers, timed out", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a request that times out is answered inside the array", async () => {
    const { host, upstream } = await batchSession();
    host.receive([call(1), call(2)]);
    upstream.receive(result(1));
    expect(host.sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1001);
    expect(host.sent).toHaveLength(1);
    expect(host.sent[0]!.message).toMatchObject([
      { id: 1, result: {} },
      { id: 2, error: { code: JSONRPC.REQUEST_TIMEOUT } },
    ]);
  });
});
