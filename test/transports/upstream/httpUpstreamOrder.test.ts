/**
 * A streamable HTTP upstream gets a session's messages in the order the host sent them across a
 * notification, on warm connections: `notifications/initialized` is acknowledged before the first
 * request goes out, that request reuses the connection the notification freed (the GET stream
 * has connections of its own), and requests never wait for each other. Against a plain
 * node:http server that records which connection carried what, and when.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";
import { RawJsonValue } from "../../../src/wire/rawJson.js";
import { type Logger, silentLogger } from "../../../src/observe/logger.js";
import {
  type HttpUpstreamOptions,
  StreamableHttpUpstreamTransport,
} from "../../../src/transports/upstream/streamableHttpUpstream.js";
import type { JSONRPCMessage } from "../../../src/transports/types.js";
import { sleep, waitFor } from "../../helpers/polling.js";
import { collect, INITIALIZE, INITIALIZED } from "./collect.js";

interface Arrival {
  connection: number;
  method: string;
  rpc: string | undefined;
  id: unknown;
  at: number;
  /** Its `MCP-Protocol-Version` header. */
  version: string | undefined;
}

interface OrderServer {
  url: string;
  arrivals: Arrival[];
  /** When the server wrote the 202 of `notifications/initialized`. */
  initializedAckAt(): number | undefined;
  /** Lets the held answer of request `id` go. */
  release(id: number): void;
  /** Held requests whose connection ended before they were answered. */
  endedUnanswered(): number[];
  /** Notifications never acknowledged whose connection the client ended. */
  endedNotifications(): string[];
}

const servers: Server[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/**
 * `ackDelayMs`: how long the 202 of `notifications/initialized` takes (undefined: never sent).
 * `hold`: request ids whose answer waits for `release(id)`. `get`: what a GET gets — its event
 * stream (`open`), no answer at all (`silent`), or 400 until `notifications/initialized` has
 * arrived (`after-initialized`), or a stream that asks for no wait and ends at once, empty (`flap`).
 */
async function startServer(
  ackDelayMs: number | undefined,
  hold: number[] = [],
  get: "open" | "silent" | "after-initialized" | "reset" | "flap" = "open",
): Promise<OrderServer> {
  const arrivals: Arrival[] = [];
  const connectionOf = new WeakMap<Socket, number>();
  const held = new Map<number, () => void>();
  const released = new Set<number>();
  const endedUnanswered: number[] = [];
  const endedNotifications: string[] = [];
  let opened = 0;
  let ackAt: number | undefined;
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const body = parts.length === 0 ? undefined : JSON.parse(Buffer.concat(parts).toString("utf8"));
    arrivals.push({
      connection: connectionOf.get(req.socket)!,
      method: req.method!,
      rpc: body?.method,
      id: body?.id,
      at: performance.now(),
      version: req.headers["mcp-protocol-version"] as string | undefined,
    });
    if (req.method === "OPTIONS" || req.method === "DELETE") return void res.writeHead(204).end();
    if (req.method === "GET") {
      if (get === "silent") return;
      if (get === "reset") return void req.socket.destroy();
      if (get === "flap") return void res.writeHead(200, { "content-type": "text/event-stream" }).end("retry: 0\n\n");
      if (get === "after-initialized" && !arrivals.some((a) => a.rpc === "notifications/initialized"))
        return void res.writeHead(400).end("Bad Request: not initialized");
      return void res.writeHead(200, { "content-type": "text/event-stream" }).write(": open\n\n");
    }
    if (body.id === undefined) {
      if (body.method !== "notifications/initialized") return void res.writeHead(202).end();
      if (ackDelayMs === undefined) {
        // Never acknowledged.
        res.on("close", () => endedNotifications.push(body.method));
        return;
      }
      setTimeout(() => {
        ackAt = performance.now();
        res.writeHead(202).end();
      }, ackDelayMs);
      return;
    }
    const answer = (): void => {
      const result =
        body.method === "initialize"
          ? { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "order", version: "1" } }
          : { content: [] };
      res
        .writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: body.id, result }));
    };
    if (hold.includes(body.id) && !released.has(body.id)) {
      held.set(body.id, answer);
      res.on("close", () => {
        if (!res.headersSent) endedUnanswered.push(body.id);
      });
    } else answer();
  });
  server.on("connection", (socket: Socket) => connectionOf.set(socket, opened++));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    arrivals,
    initializedAckAt: () => ackAt,
    endedUnanswered: () => endedUnanswered,
    endedNotifications: () => endedNotifications,
    release(id) {
      released.add(id);
      held.get(id)?.();
      held.delete(id);
    },
  };
}

const call = (id: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "x", arguments: {} },
});

/** The host's (or the proxy's deadline's) cancel of request `id`. */
const cancel = (id: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/cancelled",
  params: { requestId: id, reason: "timeout" },
});

/** What reached the server, in order: JSON-RPC methods, and HTTP methods for the rest (no OPTIONS probe). */
function arrived(server: OrderServer): string[] {
  return server.arrivals.filter((a) => a.method !== "OPTIONS").map((a) => a.rpc ?? a.method);
}

/** A session's start with its GET stream opened before `notifications/initialized`, then a call. */
const GET_FIRST = ["initialize", "GET", "notifications/initialized", "tools/call"];

/** A logger that keeps its warnings, with their fields. */
function recordingWarnings(): {
  logger: Logger;
  warnings: Array<{ msg: string; fields: Record<string, unknown> | undefined }>;
} {
  const warnings: Array<{ msg: string; fields: Record<string, unknown> | undefined }> = [];
  const logger: Logger = {
    ...silentLogger,
    warn: (msg, fields) => warnings.push({ msg, fields }),
    child: () => logger,
  };
  return { logger, warnings };
}

async function connected(
  server: OrderServer,
  ackTimeoutMs?: number,
  logger: Logger = silentLogger,
  unacknowledgedTimeoutMs?: number,
  more: Partial<HttpUpstreamOptions> = {},
) {
  const transport = new StreamableHttpUpstreamTransport({
    url: server.url,
    maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    logger,
    ...(ackTimeoutMs === undefined ? {} : { ackTimeoutMs }),
    ...(unacknowledgedTimeoutMs === undefined ? {} : { unacknowledgedTimeoutMs }),
    ...more,
  });
  const got = collect(transport);
  await transport.start();
  cleanups.push(() => transport.close());
  await transport.send(INITIALIZE(1));
  await got.response(1, 5_000);
  return { transport, got };
}

describe("streamable HTTP upstream: order and warm connections", () => {
  it("the first request goes after notifications/initialized is acknowledged, on the connection it freed", async () => {
    const server = await startServer(150);
    const { transport, got } = await connected(server);
    // As a WebSocket or stdio host sends them: the request right behind the notification.
    const initialized = transport.send(INITIALIZED);
    const request = transport.send(call(2));
    await Promise.all([initialized, request]);
    await got.response(2, 5_000);

    const notification = server.arrivals.find((a) => a.rpc === "notifications/initialized")!;
    const first = server.arrivals.find((a) => a.id === 2)!;
    expect(first.at).toBeGreaterThanOrEqual(server.initializedAckAt()!);
    expect(first.connection).toBe(notification.connection);
    // The GET stream opened after the 202 has a connection of its own.
    await waitFor(() => server.arrivals.some((a) => a.method === "GET"), 5_000);
    const stream = server.arrivals.find((a) => a.method === "GET")!;
    expect(stream.connection).not.toBe(notification.connection);
  }, 10_000);

  it("requests do not wait for each other: a held answer does not keep the next request back", async () => {
    const server = await startServer(0, [2]);
    const { transport, got } = await connected(server);
    await transport.send(INITIALIZED);
    // A request's send settles with its answer's headers: request 2's is not awaited here.
    const second = transport.send(call(2));
    await transport.send(call(3));
    // Request 3 is answered while request 2 still waits for its answer.
    await got.response(3, 5_000);
    expect(got.messages.some((m) => "id" in m && m.id === 2)).toBe(false);
    server.release(2);
    await second;
    await got.response(2, 5_000);
  }, 10_000);

  it("a notification never acknowledged holds what follows until close, which ends the wait", async () => {
    const server = await startServer(undefined);
    const { transport } = await connected(server);
    const outcome = (sent: Promise<void>) =>
      sent.then(
        () => "sent",
        (error: Error) => error.message,
      );
    const initialized = outcome(transport.send(INITIALIZED));
    const request = outcome(transport.send(call(2)));
    await sleep(200);
    expect(server.arrivals.some((a) => a.id === 2)).toBe(false);
    await transport.close();
    // Neither send hangs: the notification's ends with the close, the request is refused.
    expect(await initialized).toBe("sent");
    expect(await request).toMatch(/closed/);
    expect(server.arrivals.some((a) => a.id === 2)).toBe(false);
  }, 10_000);

  it("a notification not acknowledged in ackTimeoutMs holds what follows no longer, and says so", async () => {
    const server = await startServer(undefined);
    const { logger, warnings } = recordingWarnings();
    const { transport, got } = await connected(server, 300, logger);
    void transport.send(INITIALIZED).catch(() => {});
    const request = transport.send(call(2));
    await sleep(100);
    expect(server.arrivals.some((a) => a.id === 2)).toBe(false);
    await got.response(2, 3_000);
    await request;
    const notification = server.arrivals.find((a) => a.rpc === "notifications/initialized")!;
    const second = server.arrivals.find((a) => a.id === 2)!;
    expect(second.at - notification.at).toBeGreaterThanOrEqual(250);
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: expect.stringContaining("has not acknowledged"),
        fields: expect.objectContaining({ message: "notifications/initialized", limit: "limits.upstreamAckTimeoutMs" }),
      }),
    ]);
  }, 10_000);

  it("what waits behind an unacknowledged notification counts as queued for the upstream", async () => {
    const server = await startServer(undefined);
    const { transport } = await connected(server);
    void transport.send(INITIALIZED).catch(() => {});
    const queuedAfterNotification = transport.queuedBytes;
    const waiting = Array.from({ length: 20 }, (_, i) => transport.send(call(10 + i)).catch(() => {}));
    // Each request's body is counted at once, though none has been sent.
    expect(transport.queuedBytes).toBeGreaterThan(queuedAfterNotification + 20 * 40);
    let drained = false;
    void transport.whenDrained().then(() => (drained = true));
    await sleep(150);
    expect(drained).toBe(false);
    expect(server.arrivals.some((a) => typeof a.id === "number" && a.id >= 10)).toBe(false);
    await transport.close();
    await Promise.all(waiting);
    expect(transport.queuedBytes).toBe(0);
  }, 10_000);

  it("a request cancelled while its POST waits for headers has that POST ended, and nothing more is said", async () => {
    const server = await startServer(0, [2]);
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (msg) => warnings.push(msg), child: () => logger };
    const { transport, got } = await connected(server, undefined, logger);
    await transport.send(INITIALIZED);
    const request = transport.send(call(2));
    await waitFor(() => server.arrivals.some((a) => a.id === 2), 5_000);
    await transport.send(cancel(2));
    // The server sees the request's connection end, unanswered.
    await waitFor(() => server.endedUnanswered().includes(2), 5_000);
    await request;
    expect(server.arrivals.some((a) => a.rpc === "notifications/cancelled")).toBe(true);
    expect(got.messages.some((m) => "id" in m && m.id === 2)).toBe(false);
    expect(got.errors).toEqual([]);
    expect(warnings).toEqual([]);
    expect(transport.queuedBytes).toBe(0);
    // The session goes on.
    await transport.send(call(3));
    await got.response(3, 5_000);
  }, 10_000);

  it("a cancel naming an id past 2^53 as it was written (the proxy's own, on a timeout) ends that request's POST", async () => {
    const id = 2 ** 53;
    const server = await startServer(0, [id]);
    const { transport } = await connected(server);
    await transport.send(INITIALIZED);
    const request = transport.send(call(id));
    await waitFor(() => server.arrivals.some((a) => a.id === id), 5_000);
    const requestId = new RawJsonValue("9007199254740993") as unknown as number;
    await transport.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } });
    await waitFor(() => server.endedUnanswered().includes(id), 5_000);
    await request;
  }, 10_000);

  it("a notification not acknowledged in unacknowledgedTimeoutMs has its POST ended then, its bytes uncounted", async () => {
    const server = await startServer(undefined);
    const { transport, got } = await connected(server, 100, silentLogger, 800);
    const initialized = transport.send(INITIALIZED);
    await transport.send(call(2));
    await got.response(2, 3_000);
    // What followed went on at the ack timeout; the notification's POST is still open then.
    expect(server.endedNotifications()).toEqual([]);
    await waitFor(() => server.endedNotifications().includes("notifications/initialized"), 3_000);
    // Its send settles: the message went out; only its acknowledgement never came.
    await initialized;
    expect(transport.queuedBytes).toBe(0);
    expect(got.errors).toEqual([]);
  }, 10_000);

  it("a request cancelled while it waits behind an unacknowledged notification is never sent", async () => {
    const server = await startServer(undefined, [2]);
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (msg) => warnings.push(msg), child: () => logger };
    const { transport, got } = await connected(server, 300, logger);
    void transport.send(INITIALIZED).catch(() => {});
    // The notification's POST stays open, unacknowledged, and counted.
    const notificationBytes = transport.queuedBytes;
    const request = transport.send(call(2));
    await transport.send(cancel(2));
    await request;
    // The cancel reaches the server; the request it names never does.
    await waitFor(() => server.arrivals.some((a) => a.rpc === "notifications/cancelled"), 3_000);
    expect(server.arrivals.some((a) => a.id === 2)).toBe(false);
    expect(got.messages.some((m) => "id" in m && m.id === 2)).toBe(false);
    expect(got.errors).toEqual([]);
    expect(warnings.filter((w) => !w.includes("has not acknowledged"))).toEqual([]);
    // The request's bytes are uncounted though it never went out.
    expect(transport.queuedBytes).toBe(notificationBytes);
    // The session goes on.
    await transport.send(call(3));
    await got.response(3, 5_000);
  }, 10_000);

  it("a request cancelled while its error answer is still arriving gets no error of its own", async () => {
    // A server whose error body never ends: the request's answer is cut off by the cancel.
    const server = createServer(async (req, res) => {
      const parts: Buffer[] = [];
      for await (const part of req) parts.push(part as Buffer);
      if (req.method !== "POST") return void res.writeHead(204).end();
      const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
      if (body.id === undefined) return void res.writeHead(202).end();
      res.writeHead(500, { "content-type": "text/plain" }).write("internal error, and more to come");
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (msg) => warnings.push(msg), child: () => logger };
    const transport = new StreamableHttpUpstreamTransport({
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
      logger,
    });
    const got = collect(transport);
    await transport.start();
    cleanups.push(() => transport.close());
    const request = transport.send(call(5));
    await sleep(100);
    await transport.send(cancel(5));
    await request;
    await sleep(100);
    expect(got.messages.some((m) => "id" in m && m.id === 5)).toBe(false);
    expect(got.errors).toEqual([]);
    expect(warnings).toEqual([]);
  }, 10_000);

  it("a cancel inside a batch ends the POST of the request it names", async () => {
    const server = await startServer(0, [2]);
    const { transport, got } = await connected(server);
    await transport.send(INITIALIZED);
    const request = transport.send(call(2));
    await waitFor(() => server.arrivals.some((a) => a.id === 2), 5_000);
    const batch = [
      cancel(2),
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "t", progress: 1 } },
    ];
    await transport.send(batch as unknown as JSONRPCMessage);
    await waitFor(() => server.endedUnanswered().includes(2), 5_000);
    await request;
    expect(got.messages.some((m) => "id" in m && m.id === 2)).toBe(false);
    expect(got.errors).toEqual([]);
  }, 10_000);

  it("a notification acknowledged after ackTimeoutMs is still delivered, and the GET stream still opens", async () => {
    const server = await startServer(500);
    const { transport, got } = await connected(server, 100, silentLogger, 5_000);
    const initialized = transport.send(INITIALIZED);
    await transport.send(call(2));
    await got.response(2, 3_000);
    await initialized;
    expect(server.initializedAckAt()).toBeDefined();
    expect(server.endedNotifications()).toEqual([]);
    await waitFor(() => server.arrivals.some((a) => a.method === "GET"), 3_000);
    expect(transport.queuedBytes).toBe(0);
  }, 10_000);

  it("the GET stream is open before notifications/initialized goes: what the server sends on hearing it has a stream", async () => {
    const server = await startServer(0);
    const { transport, got } = await connected(server);
    await transport.send(INITIALIZED);
    await transport.send(call(2));
    await got.response(2, 3_000);
    expect(arrived(server)).toEqual(GET_FIRST);
  }, 10_000);

  it("a GET refused before notifications/initialized is asked for once more after it", async () => {
    const server = await startServer(0, [], "after-initialized");
    const { transport, got } = await connected(server);
    await transport.send(INITIALIZED);
    await transport.send(call(2));
    await got.response(2, 3_000);
    await waitFor(() => server.arrivals.filter((a) => a.method === "GET").length === 2, 3_000);
    expect(arrived(server).filter((what) => what !== "tools/call")).toEqual([
      "initialize",
      "GET",
      "notifications/initialized",
      "GET",
    ]);
    await sleep(200);
    expect(server.arrivals.filter((a) => a.method === "GET")).toHaveLength(2);
  }, 10_000);

  it("a GET the server never answers holds notifications/initialized for serverStreamWaitMs only, and says so", async () => {
    const server = await startServer(0, [], "silent");
    const { logger, warnings } = recordingWarnings();
    // What follows the notification waits for its 202 only: the two waits do not add up.
    const { transport, got } = await connected(server, 10_000, logger, undefined, { serverStreamWaitMs: 300 });
    await transport.send(INITIALIZED);
    await transport.send(call(2));
    await got.response(2, 3_000);
    const get = server.arrivals.find((a) => a.method === "GET")!;
    const notification = server.arrivals.find((a) => a.rpc === "notifications/initialized")!;
    expect(notification.at - get.at).toBeGreaterThanOrEqual(250);
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: expect.stringContaining("has not answered the GET stream"),
        fields: expect.objectContaining({ limit: "limits.upstreamStreamWaitMs" }),
      }),
    ]);
    const second = server.arrivals.find((a) => a.id === 2)!;
    expect(second.at - get.at).toBeLessThan(2_000);
  }, 10_000);

  it("with ackTimeoutMs 0, what follows notifications/initialized still goes after it while it waits for the GET", async () => {
    const server = await startServer(0, [], "silent");
    const { transport, got } = await connected(server, 0, silentLogger, undefined, { serverStreamWaitMs: 200 });
    const initialized = transport.send(INITIALIZED);
    await transport.send(call(2));
    await got.response(2, 3_000);
    await initialized;
    expect(arrived(server)).toEqual(GET_FIRST);
  }, 10_000);

  it("a GET that fails (no answer) reconnects as its own retries say, not once more on top", async () => {
    const server = await startServer(0, [], "reset");
    const { transport, got } = await connected(server, undefined, silentLogger, undefined, {
      serverStreamRetries: 1,
    });
    await transport.send(INITIALIZED);
    await transport.send(call(2));
    await got.response(2, 3_000);
    // The first GET and its one retry (a second after it), and nothing after.
    await waitFor(() => server.arrivals.filter((a) => a.method === "GET").length === 2, 3_000);
    await sleep(1_500);
    expect(server.arrivals.filter((a) => a.method === "GET")).toHaveLength(2);
  }, 10_000);

  it("never initialized (a pooled upstream): what has no version header carries the latest a host sent, not the first", async () => {
    const server = await startServer(0);
    const transport = new StreamableHttpUpstreamTransport({
      url: server.url,
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
      logger: silentLogger,
      openServerStream: false,
    });
    const got = collect(transport);
    await transport.start();
    cleanups.push(() => transport.close());
    await transport.send(call(1), { forwardHeaders: { "mcp-protocol-version": "1999-01-01" } });
    await transport.send(call(2), { forwardHeaders: { "mcp-protocol-version": "2026-07-28" } });
    await transport.send(call(3));
    await got.response(3, 3_000);
    expect(server.arrivals.filter((a) => a.rpc === "tools/call").map((a) => a.version)).toEqual([
      "1999-01-01",
      "2026-07-28",
      "2026-07-28",
    ]);
  }, 10_000);

  it("a server that accepts the GET stream and ends it at once, empty, asking no wait, is not asked again without end", async () => {
    const server = await startServer(0, [], "flap");
    const { logger, warnings } = recordingWarnings();
    const { transport, got } = await connected(server, undefined, logger);
    await transport.send(INITIALIZED);
    await transport.send(call(2));
    await got.response(2, 3_000);
    await sleep(1_500);
    // The first GET and serverStreamRetries (2) more, then it is given up, said once.
    expect(server.arrivals.filter((a) => a.method === "GET").length).toBeLessThanOrEqual(4);
    expect(warnings.filter((w) => w.msg.includes("GET stream not reopened"))).toHaveLength(1);
  }, 10_000);

  it("closed while notifications/initialized waits for the GET stream, its send settles without an error", async () => {
    const server = await startServer(0, [], "silent");
    const { transport } = await connected(server);
    const initialized = transport.send(INITIALIZED).then(
      () => "sent",
      (error: Error) => error.message,
    );
    await waitFor(() => server.arrivals.some((a) => a.method === "GET"), 3_000);
    await transport.close();
    expect(await initialized).toBe("sent");
    expect(server.arrivals.some((a) => a.rpc === "notifications/initialized")).toBe(false);
    expect(transport.queuedBytes).toBe(0);
  }, 10_000);
});
