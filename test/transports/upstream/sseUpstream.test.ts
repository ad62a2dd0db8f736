import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { JSONRPC } from "../../../src/errors/jsonRpcCodes.js";
import { SseUpstreamTransport, type SseUpstreamOptions } from "../../../src/transports/upstream/sseUpstream.js";
import type { JSONRPCMessage } from "../../../src/transports/types.js";
import { startSseFixture } from "../../fixtures/upstream-servers/httpFixtures.js";
import { collect, INITIALIZE, INITIALIZED, type Collected } from "./collect.js";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connect(
  options: Omit<SseUpstreamOptions, "maxMessageBytes"> & { maxMessageBytes?: number },
): Promise<{ transport: SseUpstreamTransport; got: Collected }> {
  const transport = new SseUpstreamTransport({ maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes, ...options });
  const got = collect(transport);
  await transport.start();
  cleanups.push(() => transport.close());
  return { transport, got };
}

const call = (id: string | number, name: string, args: Record<string, unknown> = {}): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

/** `server` listening on a free port, closed after the test; its `/sse` URL. */
async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`;
}

/**
 * A legacy SSE server: its GET stream names `/messages`, every POST is accepted and each request
 * handed to `answer` with that stream.
 */
function legacyServer(answer: (stream: ServerResponse, id: number) => void) {
  let stream: ServerResponse | undefined;
  let closed = false;
  const server: Server = createServer((req, res) => {
    if (req.method === "GET") {
      stream = res;
      res.on("close", () => (closed = true));
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("event: endpoint\ndata: /messages\n\n");
      return;
    }
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      res.writeHead(202).end();
      answer(stream!, (JSON.parse(body) as { id: number }).id);
    });
  });
  return { server, streamClosed: () => closed };
}

/** A raw SSE server whose `endpoint` event says what the test wants. */
async function endpointServer(endpoint: string | undefined): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (endpoint === undefined) res.end(": bye\n\n");
    else res.write(`event: endpoint\ndata: ${endpoint}\n\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`;
  return {
    url,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("SseUpstreamTransport (legacy HTTP+SSE) against the SDK's SSEServerTransport", () => {
  it("follows the endpoint event, initializes, calls, carries notifications both ways", async () => {
    const fixture = await startSseFixture();
    cleanups.push(fixture.close);
    const { transport, got } = await connect({ url: fixture.url, headers: { Authorization: "Bearer legacy-token" } });
    await transport.send(INITIALIZE(1, "2024-11-05"));
    expect((await got.response(1)).result).toMatchObject({ protocolVersion: "2024-11-05" });
    await transport.send(INITIALIZED);
    await transport.send(call(2, "notify"));
    await got.response(2);
    expect(got.messages.some((m) => "method" in m && m.method === "notifications/message")).toBe(true);
    await transport.send({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
    await transport.send(call(3, "received"));
    expect((await got.response(3)).result).toMatchObject({
      content: [{ text: JSON.stringify(["notifications/roots/list_changed"]) }],
    });
    const posts = fixture.requests.filter((r) => r.method === "POST");
    expect(posts.length).toBe(5);
    expect(
      posts.every(
        (p) => p.path.startsWith("/messages?sessionId=") && p.headers.authorization === "Bearer legacy-token",
      ),
    ).toBe(true);
    expect(fixture.requests[0]?.headers.accept).toBe("text/event-stream");
    await transport.close();
    expect(got.isClosed()).toBe(true);
    expect(got.errors).toEqual([]);
  });

  it("receives a 10 MiB result as one event", async () => {
    const fixture = await startSseFixture();
    cleanups.push(fixture.close);
    const { transport, got } = await connect({ url: fixture.url });
    await transport.send(INITIALIZE(1, "2024-11-05"));
    await got.response(1);
    await transport.send(call("big", "big", { bytes: 10 * 1024 * 1024 }));
    const response = await got.response("big", 30_000);
    expect((response.result as { content: Array<{ text: string }> }).content[0]?.text.length).toBe(10 * 1024 * 1024);
    got.messages.length = 0;
  });

  it("the stream outlives connectTimeoutMs (only connecting is timed)", async () => {
    const fixture = await startSseFixture();
    cleanups.push(fixture.close);
    const { transport, got } = await connect({ url: fixture.url, connectTimeoutMs: 100 });
    await new Promise((resolve) => setTimeout(resolve, 300)); // time must pass beyond the timeout
    await transport.send(INITIALIZE(1, "2024-11-05"));
    await got.response(1);
    expect(got.errors).toEqual([]);
  });

  it("the server going away: onerror and onclose; a request after that is refused clearly", async () => {
    const fixture = await startSseFixture();
    const { transport, got } = await connect({ url: fixture.url });
    await fixture.close();
    await got.closed;
    expect(got.errors[0]?.message).toMatch(/SSE stream/);
    await expect(transport.send(call(1, "echo", { text: "x" }))).rejects.toMatchObject({ code: "UPSTREAM_CLOSED" });
  });

  it("a POST the server refuses answers the request with a JSON-RPC error", async () => {
    const fixture = await startSseFixture();
    cleanups.push(fixture.close);
    const { transport, got } = await connect({ url: fixture.url });
    // Params that are not an object: the SDK's SSEServerTransport rejects the message with 400.
    await transport.send({
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: "not an object",
    } as unknown as JSONRPCMessage);
    const response = await got.response(5);
    expect(response.error?.code).toBe(JSONRPC.UPSTREAM_UNAVAILABLE);
    expect(response.error?.message).toMatch(/answered POST tools\/call with HTTP 400/);
  });

  it("start() rejects: unreachable, no endpoint event, an endpoint on another origin", async () => {
    await expect(
      new SseUpstreamTransport({
        url: "http://127.0.0.1:1/sse",
        maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
      }).start(),
    ).rejects.toMatchObject({
      code: "UPSTREAM_UNREACHABLE",
      message: expect.stringContaining("cannot open the SSE stream of upstream http://127.0.0.1:1/sse"),
    });
    const silent = await endpointServer(undefined);
    cleanups.push(silent.close);
    await expect(
      new SseUpstreamTransport({ url: silent.url, maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes }).start(),
    ).rejects.toThrow(/stream ended before its endpoint event/);
    const foreign = await endpointServer("http://evil.example/steal");
    cleanups.push(foreign.close);
    await expect(
      new SseUpstreamTransport({ url: foreign.url, maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes }).start(),
    ).rejects.toThrow(/endpoint event names another origin \(http:\/\/evil.example\)/);
  });
});

describe("SseUpstreamTransport's events over maxMessageBytes", () => {
  it("one of another type than message answers nothing: the real answer after it is delivered", async () => {
    const { server } = legacyServer((stream, id) => {
      const echo = JSON.stringify({ jsonrpc: "2.0", id, result: { pad: "d".repeat(5000) } });
      const answer = JSON.stringify({ jsonrpc: "2.0", id, result: { content: [] } });
      stream.write(`event: debug\ndata: ${echo}\n\nevent: message\ndata: ${answer}\n\n`);
    });
    const url = await listening(server);
    const { transport, got } = await connect({ url, maxMessageBytes: 2000 });
    await transport.send(call(5, "echo"));
    expect(await got.response(5)).toEqual({ jsonrpc: "2.0", id: 5, result: { content: [] } });
    expect(got.problems).toEqual([]);
  });
});

describe("SseUpstreamTransport and an event without end", () => {
  it("reports it by its start once it runs maxSkippedMessageBytes past maxMessageBytes, cuts the stream, and the session ends saying why", async () => {
    let sent = 0;
    const { server, streamClosed } = legacyServer((out, id) => {
      out.write(`event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"x":"`);
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      // As fast as the proxy reads, for as long as the stream is open.
      const pump = (): void => {
        while (!out.destroyed && sent < 1024 * 1024 * 1024) {
          sent += chunk.length;
          if (!out.write(chunk)) return void out.once("drain", pump);
        }
      };
      pump();
    });
    const url = await listening(server);
    const { transport, got } = await connect({ url, maxMessageBytes: 100_000, maxSkippedMessageBytes: 8 << 20 });
    await transport.send(call(5, "echo"));
    expect(await got.nextProblem(5_000)).toMatchObject({ kind: "too-large", id: 5 });
    await expect.poll(() => got.isClosed(), { timeout: 5_000 }).toBe(true);
    expect(transport.describeEnd()).toMatch(
      /the SSE stream of upstream .* failed: an event ran on for \d+ bytes without end \(limits\.maxMessageBytes is 100000, limits\.maxSkippedMessageBytes 8388608\): the proxy cut the stream/,
    );
    await expect.poll(streamClosed, { timeout: 5_000 }).toBe(true);
    // Cut 8 MiB past the limit (what is in flight besides), not read on for as long as the server sends.
    expect(sent).toBeLessThan(32 * 1024 * 1024);
  });
});

describe("SseUpstreamTransport's end reason", () => {
  it("is why the stream ended, not an earlier POST's failure", async () => {
    let stream: import("node:http").ServerResponse | undefined;
    let posts = 0;
    const server: Server = createServer((req, res) => {
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("event: endpoint\ndata: /messages\n\n");
        stream = res;
        return;
      }
      req.resume();
      posts++;
      if (posts === 1) return void res.writeHead(500, { "content-type": "text/plain" }).end("server exploded");
      res.writeHead(202).end();
      // The server ends its stream while the second request waits for its answer.
      setImmediate(() => stream?.end());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`;
    const transport = new SseUpstreamTransport({ url, maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes });
    const got = collect(transport);
    await transport.start();
    cleanups.push(() => transport.close());
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "a" } });
    expect((await got.response(1)).error?.message).toMatch(/HTTP 500: server exploded/);
    await transport.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "b" } });
    await expect.poll(() => got.isClosed(), { timeout: 5_000 }).toBe(true);
    expect(transport.describeEnd()).toBe(`upstream ${url} closed its SSE stream`);
  });
});

describe("SseUpstreamTransport on a port fetch refuses", () => {
  it("says so, and what to do, not only 'fetch failed: bad port'", async () => {
    // Nothing need listen: fetch refuses port 6000 (as browsers do) before it connects.
    const transport = new SseUpstreamTransport({
      url: "http://127.0.0.1:6000/sse",
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    await expect(transport.start()).rejects.toThrow(
      /bad port: fetch refuses this port, as browsers do \(6000, .*\): serve the upstream on another port/,
    );
  });
});
