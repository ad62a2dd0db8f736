import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  WebSocketUpstreamTransport,
  type WebSocketUpstreamOptions,
} from "../../../src/transports/upstream/wsUpstream.js";
import type { JSONRPCMessage } from "../../../src/transports/types.js";
import { startWebSocketFixture } from "../../fixtures/upstream-servers/httpFixtures.js";
import { collect, INITIALIZE, INITIALIZED, type Collected } from "./collect.js";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connect(
  options: Omit<WebSocketUpstreamOptions, "maxMessageBytes"> & { maxMessageBytes?: number },
): Promise<{ transport: WebSocketUpstreamTransport; got: Collected }> {
  const transport = new WebSocketUpstreamTransport({ maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes, ...options });
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

describe("WebSocketUpstreamTransport against an SDK server over ws", () => {
  it("connects with subprotocol mcp and headers; initialize, list, call, notifications both ways", async () => {
    const fixture = await startWebSocketFixture();
    cleanups.push(fixture.close);
    const { transport, got } = await connect({ url: fixture.url, headers: { Authorization: "Bearer ws-token" } });
    expect(fixture.protocols).toEqual(["mcp"]);
    expect(fixture.requests.find((r) => r.method === "UPGRADE")?.headers.authorization).toBe("Bearer ws-token");
    // No permessage-deflate offered: frames are not compressed (CPU and a thread-pool round trip each).
    expect(fixture.requests.find((r) => r.method === "UPGRADE")?.headers["sec-websocket-extensions"]).toBeUndefined();
    await transport.send(INITIALIZE(1));
    expect((await got.response(1)).result).toMatchObject({ serverInfo: { name: "upstream-fixture" } });
    await transport.send(INITIALIZED);
    await transport.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(((await got.response(2)).result as { tools: unknown[] }).tools).toHaveLength(6);
    await transport.send(call(3, "notify"));
    await got.response(3);
    expect(got.messages.some((m) => "method" in m && m.method === "notifications/message")).toBe(true);
    await transport.send({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
    await transport.send(call(4, "received"));
    expect((await got.response(4)).result).toMatchObject({
      content: [{ text: JSON.stringify(["notifications/roots/list_changed"]) }],
    });
    await transport.close();
    expect(got.isClosed()).toBe(true);
    expect(got.errors).toEqual([]);
  });

  it("a frame over maxMessageBytes is a too-large problem and the connection ends", async () => {
    const fixture = await startWebSocketFixture();
    cleanups.push(fixture.close);
    const { transport, got } = await connect({ url: fixture.url, maxMessageBytes: 64 * 1024 });
    await transport.send(INITIALIZE(1));
    await got.response(1);
    await transport.send(call(2, "big", { bytes: 100_000 }));
    expect(await got.nextProblem()).toMatchObject({ kind: "too-large" });
    await got.closed;
  });

  it("the server going away: onerror names it, then onclose", async () => {
    const fixture = await startWebSocketFixture();
    const { got } = await connect({ url: fixture.url });
    await fixture.close();
    await got.closed;
    expect(got.errors.at(-1)?.message).toMatch(/closed the WebSocket \(code 1006\)/);
  });

  it("start() rejects for an unreachable port and for an HTTP answer instead of an upgrade", async () => {
    await expect(
      new WebSocketUpstreamTransport({
        url: "ws://127.0.0.1:1/ws",
        maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
      }).start(),
    ).rejects.toMatchObject({
      code: "UPSTREAM_UNREACHABLE",
      message: expect.stringMatching(/cannot open WebSocket to upstream ws:\/\/127.0.0.1:1\/ws: .*ECONNREFUSED/),
    });
    // A server that answers the upgrade with 401 (e.g. a wrong token).
    const server = createServer();
    server.on("upgrade", (_req, socket) => socket.end("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
    await expect(
      new WebSocketUpstreamTransport({
        url,
        headers: { Authorization: "Bearer wrong-secret" },
        maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
      }).start(),
    ).rejects.toThrow(`cannot open WebSocket to upstream ${url}: HTTP 401 Unauthorized`);
  });
});

describe("WebSocketUpstreamTransport and a ping flood", () => {
  it("answers pings; one sending them faster than it takes the answers is ended by the proxy, which says so", async () => {
    const { WebSocketServer } = await import("ws");
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1", handleProtocols: () => "mcp" });
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
    let pongs = 0;
    let flood = false;
    wss.on("connection", (ws) => {
      ws.on("pong", () => pongs++);
      ws.ping("one");
      const timer = setInterval(() => {
        if (flood && ws.readyState === ws.OPEN) for (let i = 0; i < 200; i++) ws.ping("p");
      }, 5);
      ws.on("close", () => clearInterval(timer));
    });
    cleanups.push(() => new Promise<void>((resolve) => wss.close(() => resolve())));
    const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`;
    const { transport, got } = await connect({ url, maxPendingPongs: 20 });
    await expect.poll(() => pongs, { timeout: 5_000 }).toBe(1);
    flood = true;
    await expect.poll(() => got.isClosed(), { timeout: 5_000 }).toBe(true);
    expect(transport.describeEnd()).toMatch(
      /^upstream ws:\/\/127\.0\.0\.1:\d+\/ sent pings faster than it took their answers \(20 waiting, limits\.maxPendingPongs\): the proxy ended the WebSocket$/,
    );
  });
});

describe("WebSocketUpstreamTransport never quotes back what it sent", () => {
  it("redacts header values and URL credentials from a refused handshake's status text and a close reason", async () => {
    const { WebSocketServer } = await import("ws");
    const server = createServer();
    const wss = new WebSocketServer({ noServer: true });
    let refuse = true;
    server.on("upgrade", (req, socket, head) => {
      const echo = `${req.headers.authorization} ${req.url}`;
      if (refuse) {
        socket.end(`HTTP/1.1 401 Bad ${echo}\r\nConnection: close\r\n\r\n`);
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => ws.close(4001, `bad credentials: ${echo}`));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(async () => {
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws?token=url-secret-123`;
    const options = { url, headers: { Authorization: "Bearer ws-secret-456" } };

    const refused = new WebSocketUpstreamTransport({ maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes, ...options });
    await expect(refused.start()).rejects.toThrow(/HTTP 401 Bad \[redacted\] \/ws\?token=\[redacted\]/);

    refuse = false;
    const transport = new WebSocketUpstreamTransport({ maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes, ...options });
    const got = collect(transport);
    await transport.start();
    cleanups.push(() => transport.close());
    await expect.poll(() => got.isClosed(), { timeout: 5_000 }).toBe(true);
    expect(transport.describeEnd()).toMatch(/code 4001: bad credentials: \[redacted\] \/ws\?token=\[redacted\]/);
    expect(JSON.stringify([transport.describeEnd(), got.errors.map((e) => e.message)])).not.toMatch(/secret/);
  });

  it("an error on the open socket that quotes what was sent reaches onerror redacted", async () => {
    const { WebSocketServer } = await import("ws");
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1", handleProtocols: () => "mcp" });
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => wss.close(() => resolve())));
    const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`;
    const transport = new WebSocketUpstreamTransport({
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
      url,
      headers: { Authorization: "Bearer ws-secret-789" },
    });
    const got = collect(transport);
    await transport.start();
    cleanups.push(() => transport.close());
    // ws's own errors name no header; one that did (a library's, a proxy's) must still not be quoted.
    (transport as unknown as { socket: { emit(event: string, error: Error): void } }).socket.emit(
      "error",
      new Error("handshake echo: Bearer ws-secret-789"),
    );
    expect(got.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/failed: handshake echo: (Bearer )?\[redacted\]$/),
    ]);
  });
});
