/**
 * The bridge on its own, between two in-memory transports: request timeouts (one timer per
 * session, due at the oldest waiting request) and the host headers forwarded with each message.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { JSONRPC } from "../../src/errors/jsonRpcCodes.js";
import { type Logger, silentLogger } from "../../src/observe/logger.js";
import { Bridge } from "../../src/proxy/bridge.js";
import { Recorder } from "../helpers/recorder.js";

async function bridgeOf(
  requestTimeoutMs = 1000,
): Promise<{ host: Recorder; upstream: Recorder; bridge: Bridge; warnings: string[] }> {
  const host = new Recorder();
  const upstream = new Recorder();
  const warnings: string[] = [];
  const logger: Logger = { ...silentLogger, warn: (msg) => warnings.push(msg), child: () => logger };
  const bridge = new Bridge({ host, upstream, logger, requestTimeoutMs });
  await bridge.start();
  return { host, upstream, bridge, warnings };
}

const call = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: {} } });
const errorsTo = (host: Recorder) => host.sent.map((s) => s.message).filter((m) => "error" in m);

describe("Bridge request timeouts", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("each request times out at its own deadline, logged; an answered one never does", async () => {
    const { host, upstream, bridge, warnings } = await bridgeOf(1000);
    host.receive(call(1));
    await vi.advanceTimersByTimeAsync(400);
    host.receive(call(2));
    await vi.advanceTimersByTimeAsync(100);
    upstream.receive({ jsonrpc: "2.0", id: 1, result: { content: [] } });
    await vi.advanceTimersByTimeAsync(899); // t = 1399
    expect(errorsTo(host)).toEqual([]);
    expect(bridge.waitingCount).toBe(1);
    await vi.advanceTimersByTimeAsync(1); // t = 1400: request 2's deadline
    expect(errorsTo(host)).toEqual([
      {
        jsonrpc: "2.0",
        id: 2,
        error: {
          code: JSONRPC.REQUEST_TIMEOUT,
          message: "upstream did not answer tools/call within 1000 ms (limits.requestTimeoutMs)",
        },
      },
    ]);
    expect(upstream.sent.at(-1)?.message).toEqual({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 2, reason: "timeout in mcp-normalizer" },
    });
    expect(bridge.waitingCount).toBe(0);
    expect(warnings).toEqual([
      "upstream did not answer a request within limits.requestTimeoutMs; answered with an error",
    ]);
    // A late answer is not forwarded: the host already has its error.
    upstream.receive({ jsonrpc: "2.0", id: 2, result: { content: [] } });
    expect(host.sent.filter((s) => s.message.id === 2)).toHaveLength(1);
  });

  it("requests sent together time out together, each answered once; later ones still get a timer", async () => {
    const { host, bridge } = await bridgeOf(500);
    host.receive(call(1));
    host.receive(call(2));
    await vi.advanceTimersByTimeAsync(500);
    expect(errorsTo(host).map((m) => m.id)).toEqual([1, 2]);
    host.receive(call(3));
    await vi.advanceTimersByTimeAsync(499);
    expect(bridge.waitingCount).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(errorsTo(host).map((m) => m.id)).toEqual([1, 2, 3]);
  });

  it("after close no timeout fires: waiting requests got the close error, once", async () => {
    const { host, bridge } = await bridgeOf(500);
    host.receive(call(1));
    await bridge.close("proxy shutting down");
    await vi.advanceTimersByTimeAsync(1000);
    const errors = errorsTo(host);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ id: 1, error: { code: JSONRPC.UPSTREAM_UNAVAILABLE } });
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("Bridge request ids", () => {
  it('1 and "1" are different requests: each answer reaches its own, a reused id still waiting is refused', async () => {
    const { host, upstream, bridge } = await bridgeOf();
    host.receive({ jsonrpc: "2.0", id: 1, method: "tools/call", params: {} });
    host.receive({ jsonrpc: "2.0", id: "1", method: "tools/call", params: {} });
    host.receive({ jsonrpc: "2.0", id: "1", method: "tools/call", params: {} });
    expect(upstream.sent).toHaveLength(2);
    expect(errorsTo(host)).toMatchObject([{ id: "1", error: { code: JSONRPC.INVALID_REQUEST } }]);
    upstream.receive({ jsonrpc: "2.0", id: "1", result: { which: "string" } });
    upstream.receive({ jsonrpc: "2.0", id: "1", result: { which: "late" } });
    upstream.receive({ jsonrpc: "2.0", id: 1, result: { which: "number" } });
    expect(
      host.sent
        .filter((s) => "result" in s.message)
        .map((s) => [s.message.id, s.message.result, s.options?.relatedRequestId]),
    ).toEqual([
      ["1", { which: "string" }, "1"],
      [1, { which: "number" }, 1],
    ]);
    expect(bridge.waitingCount).toBe(0);
  });

  it("a request that is not JSON-RPC 2.0 is answered at once with Invalid Request, never forwarded", async () => {
    const { host, upstream, bridge } = await bridgeOf();
    host.receive({ jsonrpc: "1.0", id: 1, method: "tools/list" });
    host.receive({ id: 2, method: "tools/list" });
    host.receive({ jsonrpc: "2.0", id: 3, method: "tools/call", params: "x" });
    host.receive({ jsonrpc: "2.0", id: 4, method: "tools/call", params: null });
    host.receive({ jsonrpc: "2.0", id: 5, method: "tools/list" });
    host.receive({ jsonrpc: "2.0", id: 6, method: "tools/call", params: [1] });
    // A value nested too deep to write out, and a long one: named by their kind, never written.
    let deep: unknown = [];
    for (let i = 0; i < 20_000; i++) deep = [deep];
    host.receive({ jsonrpc: deep, id: 7, method: "tools/list" } as never);
    host.receive({ jsonrpc: "2.0".repeat(100), id: 8, method: "tools/list" });
    expect(upstream.sent.map((s) => s.message.id)).toEqual([5]);
    expect(errorsTo(host).map((m) => [m.id, m.error])).toEqual([
      [1, { code: JSONRPC.INVALID_REQUEST, message: 'Invalid Request: "jsonrpc" must be "2.0", not "1.0"' }],
      [2, { code: JSONRPC.INVALID_REQUEST, message: 'Invalid Request: "jsonrpc" must be "2.0", not missing' }],
      [
        3,
        { code: JSONRPC.INVALID_REQUEST, message: 'Invalid Request: "params" must be an object or an array, not "x"' },
      ],
      [
        4,
        { code: JSONRPC.INVALID_REQUEST, message: 'Invalid Request: "params" must be an object or an array, not null' },
      ],
      [6, { code: JSONRPC.INVALID_PARAMS, message: 'Invalid params: MCP\'s "params" is an object, not an array' }],
      [7, { code: JSONRPC.INVALID_REQUEST, message: 'Invalid Request: "jsonrpc" must be "2.0", not an array' }],
      [
        8,
        {
          code: JSONRPC.INVALID_REQUEST,
          message: 'Invalid Request: "jsonrpc" must be "2.0", not a string of 300 characters',
        },
      ],
    ]);
    expect(bridge.waitingCount).toBe(1);
  });

  it("a malformed _meta or progressToken is answered -32602 at once; null ones are the server's to read", async () => {
    const { host, upstream } = await bridgeOf();
    host.receive({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { _meta: { progressToken: [1] } } });
    host.receive({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { _meta: 5 } });
    host.receive({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { _meta: null } });
    host.receive({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { _meta: { progressToken: null } } });
    host.receive({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { _meta: { progressToken: -7, x: {} } } });
    expect(upstream.sent.map((s) => s.message.id)).toEqual([3, 4, 5]);
    expect(errorsTo(host).map((m) => [m.id, m.error])).toEqual([
      [
        1,
        {
          code: JSONRPC.INVALID_PARAMS,
          message: 'Invalid params: "params._meta.progressToken" must be a string or an integer, not an array',
        },
      ],
      [2, { code: JSONRPC.INVALID_PARAMS, message: 'Invalid params: "params._meta" must be an object, not 5' }],
    ]);
  });

  it("a response from the host reaches the upstream only for a request the upstream sent, once", async () => {
    const { host, upstream } = await bridgeOf();
    upstream.receive({ jsonrpc: "2.0", id: 7, method: "sampling/createMessage", params: {} });
    host.receive({ jsonrpc: "2.0", id: "7", result: {} });
    host.receive({ jsonrpc: "2.0", id: 7, result: {} });
    host.receive({ jsonrpc: "2.0", id: 7, result: {} });
    expect(upstream.sent.map((s) => s.message)).toEqual([{ jsonrpc: "2.0", id: 7, result: {} }]);
  });

  it("an upstream's requests past maxUpstreamRequests waiting for the host are answered here, not forwarded", async () => {
    const host = new Recorder();
    const upstream = new Recorder();
    const bridge = new Bridge({ host, upstream, logger: silentLogger, requestTimeoutMs: 1000, maxUpstreamRequests: 3 });
    await bridge.start();
    const ask = (id: string) => upstream.receive({ jsonrpc: "2.0", id, method: "roots/list", params: {} });
    for (const id of ["a0", "a1", "a2", "a3", "a4"]) ask(id);
    expect(host.sent.map((s) => s.message.id)).toEqual(["a0", "a1", "a2"]);
    expect(upstream.sent.map((s) => s.message)).toEqual(
      ["a3", "a4"].map((id) => ({
        jsonrpc: "2.0",
        id,
        error: {
          code: JSONRPC.SERVER_ERROR,
          message: "too many requests waiting for the host: limits.maxUpstreamRequests (3)",
        },
      })),
    );
    // Answered by the host, one makes room for the next.
    host.receive({ jsonrpc: "2.0", id: "a0", result: { roots: [] } });
    ask("a5");
    expect(host.sent.map((s) => s.message.id)).toEqual(["a0", "a1", "a2", "a5"]);
    expect(upstream.sent.at(-1)?.message).toEqual({ jsonrpc: "2.0", id: "a0", result: { roots: [] } });
  });

  it("an upstream's request reusing the id of one still waiting for the host is refused, not forwarded", async () => {
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (msg) => warnings.push(msg), child: () => logger };
    const host = new Recorder();
    const upstream = new Recorder();
    const bridge = new Bridge({ host, upstream, logger, requestTimeoutMs: 1000, maxUpstreamRequests: 3 });
    await bridge.start();
    // Reused ids would pass maxUpstreamRequests (one entry each) and flood the host without end.
    for (let i = 0; i < 50; i++) upstream.receive({ jsonrpc: "2.0", id: `r${i % 2}`, method: "ping" });
    expect(host.sent.map((s) => s.message.id)).toEqual(["r0", "r1"]);
    expect(upstream.sent).toHaveLength(48);
    expect(upstream.sent[0]!.message).toEqual({
      jsonrpc: "2.0",
      id: "r0",
      error: {
        code: JSONRPC.INVALID_REQUEST,
        message: 'Invalid Request: id "r0" is already used by a request still waiting for the host\'s answer',
      },
    });
    expect(warnings).toContain(
      "upstream reused the id of a request still waiting for the host; answered with an error",
    );
    // Once answered, the id is free again.
    host.receive({ jsonrpc: "2.0", id: "r0", result: {} });
    upstream.receive({ jsonrpc: "2.0", id: "r0", method: "ping" });
    expect(host.sent.map((s) => s.message.id)).toEqual(["r0", "r1", "r0"]);
  });

  it("a second initialize the upstream refuses leaves the session's version (batches still judged by it)", async () => {
    const { host, upstream } = await bridgeOf();
    const initialize = (id: number, protocolVersion: string) =>
      host.receive({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion, capabilities: {} } });
    const batch = (id: number) => host.receive([{ jsonrpc: "2.0", id, method: "ping" }]);
    initialize(1, "2025-06-18");
    upstream.receive({ jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18", capabilities: {} } });
    batch(2);
    // Asking an older version again, refused: the session is still 2025-06-18, with no batches.
    initialize(3, "2024-11-05");
    upstream.receive({ jsonrpc: "2.0", id: 3, error: { code: -32600, message: "Server already initialized" } });
    batch(4);
    expect(upstream.sent.map((s) => s.message)).not.toContainEqual([{ jsonrpc: "2.0", id: 4, method: "ping" }]);
    expect(errorsTo(host).map((m) => [m.id, (m.error as { message: string }).message])).toEqual([
      [2, expect.stringContaining("2025-06-18 has no JSON-RPC batches")],
      [3, "Server already initialized"],
      [4, expect.stringContaining("2025-06-18 has no JSON-RPC batches")],
    ]);
  });

  it("an initialize answer naming no version agrees on the one asked: a later refused initialize leaves it", async () => {
    const { host, upstream } = await bridgeOf();
    host.receive({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18" } });
    upstream.receive({ jsonrpc: "2.0", id: 1, result: { capabilities: {} } });
    host.receive({ jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: "2025-03-26" } });
    upstream.receive({ jsonrpc: "2.0", id: 2, error: { code: -32600, message: "Server already initialized" } });
    host.receive([{ jsonrpc: "2.0", id: 3, method: "ping" }]);
    expect(upstream.sent.map((s) => s.message)).not.toContainEqual([{ jsonrpc: "2.0", id: 3, method: "ping" }]);
    expect(errorsTo(host).at(-1)).toMatchObject({ id: 3, error: { code: -32600 } });
  });

  it("an upstream request over maxMessageBytes whose id equals a waiting host request's answers nothing", async () => {
    const { host, upstream, bridge } = await bridgeOf();
    host.receive(call(7));
    upstream.onproblem?.({ kind: "too-large", bytes: 5000, id: 7, asks: true, excerpt: '{"method":"x"' });
    upstream.onproblem?.({ kind: "invalid-json", bytes: 50, id: 7, asks: true, excerpt: '{"method":"x"' });
    expect(errorsTo(host)).toEqual([]);
    expect(bridge.waitingCount).toBe(1);
    upstream.receive({ jsonrpc: "2.0", id: 7, result: { content: [] } });
    expect(host.sent.at(-1)?.message).toEqual({ jsonrpc: "2.0", id: 7, result: { content: [] } });
  });

  it("an answer over maxMessageBytes is answered by the bridge, and no table keeps the request", async () => {
    const { host, upstream, bridge } = await bridgeOf();
    host.receive({ jsonrpc: "2.0", id: 5, method: "resources/read", params: { uri: "file:///big" } });
    expect(bridge.waitingCount).toBe(1);
    expect(bridge.upstream.pendingCount).toBe(1);
    upstream.onproblem?.({ kind: "too-large", id: 5, bytes: 9_999_999, excerpt: '{"jsonrpc":"2.0","id":5,' });
    expect(errorsTo(host)).toMatchObject([{ id: 5, error: { code: JSONRPC.MESSAGE_TOO_LARGE } }]);
    expect(bridge.waitingCount).toBe(0);
    expect(bridge.upstream.pendingCount).toBe(0);
  });
});

describe("Bridge forwarded headers", () => {
  it("forwards the host's mcp-* headers (not its session id) with each message, following a new headers object", async () => {
    const { host, upstream } = await bridgeOf();
    const first = {
      "mcp-protocol-version": "2025-06-18",
      "Mcp-Method": "tools/call",
      "mcp-session-id": "s1",
      accept: "application/json",
    };
    host.receive(call(1), { requestInfo: { headers: first } });
    host.receive(call(2), { requestInfo: { headers: first } });
    host.receive(call(3), { requestInfo: { headers: { "mcp-protocol-version": "2025-11-25" } } });
    host.receive(call(4), { requestInfo: { headers: { accept: "*/*" } } });
    host.receive(call(5));
    expect(upstream.sent.map((s) => s.options?.forwardHeaders)).toEqual([
      { "mcp-protocol-version": "2025-06-18", "mcp-method": "tools/call" },
      { "mcp-protocol-version": "2025-06-18", "mcp-method": "tools/call" },
      { "mcp-protocol-version": "2025-11-25" },
      undefined,
      undefined,
    ]);
  });
});

describe("Bridge backpressure on a host that does not read", () => {
  it("stops reading a host that is behind on the answers the proxy gives itself, until it drains", async () => {
    let drain: () => void = () => {};
    const calls: string[] = [];
    class SlowHost extends Recorder {
      queuedBytes = 0;
      pauseReading(): void {
        calls.push("pause");
      }
      resumeReading(): void {
        calls.push("resume");
      }
      whenDrained(): Promise<void> {
        return new Promise((resolve) => (drain = resolve));
      }
    }
    const host = new SlowHost();
    const upstream = new Recorder();
    const bridge = new Bridge({ host, upstream, logger: silentLogger, requestTimeoutMs: 1000, hostBufferBytes: 100 });
    await bridge.start();
    host.receive({ jsonrpc: "1.0", id: 1, method: "tools/list" });
    expect(calls).toEqual([]);
    // The host has not taken what it was sent: the next refusal holds it.
    host.queuedBytes = 1000;
    host.receive({ jsonrpc: "1.0", id: 2, method: "tools/list" });
    host.receive({ jsonrpc: "1.0", id: 3, method: "tools/list" });
    expect(calls).toEqual(["pause"]);
    expect(upstream.sent).toEqual([]);
    host.queuedBytes = 0;
    drain();
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual(["pause", "resume"]);
    await bridge.close();
  });
});
