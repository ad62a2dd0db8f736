/**
 * When a session's GET stream is asked for again, against a plain node:http server:
 * - given up on, it is asked for again after a POST the server answers (at most every 30 s),
 *   whatever came between — here a host's `ping` opened it, its reconnections were refused and
 *   given up on, and `notifications/initialized` then asked twice more, refused too; only `Date`
 *   is faked, to pass the 30 s. Its refusals are logged once, not at every try;
 * - a stream that carries an event without an id (ids are optional) and ends has served: it is
 *   reconnected for as long as the server goes on so, never given up on;
 * - `notifications/initialized` inside a batch waits for the GET as it does alone, so what the
 *   server sends the moment it hears it has a stream to go on; sent with `initialize` in one
 *   batch, nothing goes before the answer has brought the session id;
 * - events that carry nothing (empty data) do not make a stream served, and each new kind of
 *   trouble with the GET is logged.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";
import { type Logger, silentLogger } from "../../../src/observe/logger.js";
import {
  type HttpUpstreamOptions,
  StreamableHttpUpstreamTransport,
} from "../../../src/transports/upstream/streamableHttpUpstream.js";
import { waitFor } from "../../helpers/polling.js";
import { collect, INITIALIZE, INITIALIZED } from "./collect.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const note = (data: string) => ({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data } });

/**
 * `get`: what a GET gets — 503 while `refusing` (as it arrives), else an event stream kept open (`open`), or one
 * event without an id, a `retry: 300` and the end (`poll`). GETs are answered `getDelayMs` late.
 * On hearing `notifications/initialized` (alone or in a batch) the server sends a note on its
 * GET stream, or records it as dropped.
 */
async function startServer(get: "open" | "poll" = "open", getDelayMs = 0) {
  let refusing = get === "open";
  let gets = 0;
  let polls = 0;
  let stream: ServerResponse | undefined;
  const dropped: string[] = [];
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    if (req.method === "GET") {
      gets++;
      // Refused or not as it arrives: `serve()` in between does not change this GET's answer.
      const refused = refusing;
      setTimeout(() => {
        if (refused) return void res.writeHead(503).end();
        if (get === "poll") {
          polls++;
          return void res
            .writeHead(200, { "content-type": "text/event-stream" })
            .end(`retry: 300\ndata: ${JSON.stringify(note(`poll ${polls}`))}\n\n`);
        }
        res.writeHead(200, { "content-type": "text/event-stream" }).write(": open\n\n");
        stream = res;
      }, getDelayMs);
      return;
    }
    if (req.method !== "POST") return void res.writeHead(204).end();
    const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as unknown;
    const messages = (Array.isArray(body) ? body : [body]) as Array<{ id?: number; method: string }>;
    if (messages.some((m) => m.method === "notifications/initialized")) {
      if (stream === undefined) dropped.push("on initialized");
      else stream.write(`data: ${JSON.stringify(note("on initialized"))}\n\n`);
    }
    const [first] = messages;
    if (first!.id === undefined) return void res.writeHead(202).end();
    const result =
      first!.method === "initialize"
        ? { protocolVersion: "2025-03-26", capabilities: {}, serverInfo: { name: "s", version: "1" } }
        : {};
    res
      .writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" })
      .end(JSON.stringify({ jsonrpc: "2.0", id: first!.id, result }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    gets: () => gets,
    polls: () => polls,
    open: () => stream !== undefined,
    dropped,
    serve: () => (refusing = false),
  };
}

/** A logger that keeps its warnings. */
function recordingWarnings(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const logger: Logger = { ...silentLogger, warn: (msg) => warnings.push(msg), child: () => logger };
  return { logger, warnings };
}

/** A transport to `url`, started, with what it delivers collected; closed after the test. */
async function started(url: string, more: Partial<HttpUpstreamOptions> = {}) {
  const transport = new StreamableHttpUpstreamTransport({
    url,
    maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    ...more,
  });
  const got = collect(transport);
  await transport.start();
  cleanups.push(() => transport.close());
  return { transport, got };
}

/** The same, its session begun: `initialize` answered. */
async function initialized(url: string, more: Partial<HttpUpstreamOptions> = {}) {
  const { transport, got } = await started(url, more);
  await transport.send(INITIALIZE(1));
  await got.response(1, 5_000);
  return { transport, got };
}

const call = (id: number) => ({
  jsonrpc: "2.0" as const,
  id,
  method: "tools/call",
  params: { name: "x", arguments: {} },
});

describe("a GET stream given up on", () => {
  it("is asked for again after an answered POST past 30 s, also when notifications/initialized came after the give-up; its refusals are logged once", async () => {
    const server = await startServer();
    const { logger, warnings } = recordingWarnings();
    const { transport, got } = await initialized(server.url, { serverStreamRetries: 0, logger });
    // A ping first: its GET is refused and, with no retries, given up on.
    await transport.send({ jsonrpc: "2.0", id: 2, method: "ping" });
    await got.response(2, 5_000);
    await waitFor(() => server.gets() === 1, 5_000);
    // The notification asks again, and once more after that is refused.
    await transport.send(INITIALIZED);
    // At least, then exactly: a poll that came late must not wait for a count already passed.
    await waitFor(() => server.gets() >= 3, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.gets()).toBe(3);
    // 30 s on, an answered POST brings one more try: refused again.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 31_000);
    await transport.send(call(3));
    await got.response(3, 5_000);
    vi.useRealTimers();
    await waitFor(() => server.gets() === 4, 5_000);
    // The server serves GETs again; 30 s on, the next answered POST opens the stream.
    server.serve();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 62_000);
    await transport.send(call(4));
    await got.response(4, 5_000);
    // The answered POST has been judged by now; the waits below need a clock that moves.
    vi.useRealTimers();
    await waitFor(() => server.open(), 5_000);
    expect(server.gets()).toBe(5);
    expect(warnings.filter((w) => w === "GET stream refused")).toHaveLength(1);
  });
});

describe("a GET stream that carries an event without an id and ends", () => {
  it("has served: it is reconnected as long as the server goes on so, and every event arrives", async () => {
    const server = await startServer("poll");
    const { transport, got } = await initialized(server.url);
    await transport.send(INITIALIZED);
    // Each stream asks for a 300 ms wait: ten of them in a few seconds, never given up on.
    await waitFor(() => server.polls() >= 10, 15_000);
    await waitFor(() => got.messages.length >= 1 + 10, 5_000);
    const notes = got.messages.flatMap((m) => {
      const data = (m as { params?: { data?: unknown } }).params?.data;
      return typeof data === "string" ? [data] : [];
    });
    expect(notes.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => `poll ${i + 1}`));
  });
});

describe("notifications/initialized in a batch", () => {
  it("waits for the GET stream's answer as it does alone: what the server sends on hearing it arrives", async () => {
    const server = await startServer("open", 300);
    server.serve();
    const { transport, got } = await initialized(server.url);
    await transport.send([INITIALIZED] as never);
    const heard = await got.next(
      (m) => (m as { params?: { data?: unknown } }).params?.data === "on initialized",
      5_000,
    );
    expect(heard).toMatchObject({ method: "notifications/message" });
    expect(server.dropped).toEqual([]);
    expect(server.gets()).toBe(1);
  });
});

/** A server whose GETs `onGet` answers (`n`: the how-manieth), recording each request's session id. */
async function startGetServer(
  onGet: (res: ServerResponse, n: number) => void,
  bodyDelayMs = 0,
  firstInitializeFails = false,
) {
  let initializes = 0;
  const getSessions: Array<string | undefined> = [];
  const postSessions: Array<string | undefined> = [];
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    if (req.method === "GET") {
      getSessions.push(req.headers["mcp-session-id"] as string | undefined);
      return onGet(res, getSessions.length);
    }
    if (req.method !== "POST") return void res.writeHead(204).end();
    postSessions.push(req.headers["mcp-session-id"] as string | undefined);
    const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as unknown;
    const messages = (Array.isArray(body) ? body : [body]) as Array<{ id?: number; method: string }>;
    const result = { protocolVersion: "2025-03-26", capabilities: {}, serverInfo: { name: "s", version: "1" } };
    const answers = messages.flatMap((m): Array<Record<string, unknown>> => {
      if (m.id === undefined) return [];
      if (m.method === "initialize" && ++initializes === 1 && firstInitializeFails)
        return [{ jsonrpc: "2.0", id: m.id, error: { code: -32603, message: "not now" } }];
      return [{ jsonrpc: "2.0", id: m.id, result }];
    });
    if (answers.length === 0) return void res.writeHead(202).end();
    // Its headers first, flushed; its body `bodyDelayMs` later.
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" }).flushHeaders();
    setTimeout(() => res.end(JSON.stringify(Array.isArray(body) ? answers : answers[0])), bodyDelayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, getSessions, postSessions };
}

describe("what does not make a GET stream served, and what is logged", () => {
  it("events that carry nothing (empty data) and an end: given up on after its retries, however short the retry asked", async () => {
    const server = await startGetServer(
      (res) => void res.writeHead(200, { "content-type": "text/event-stream" }).end("retry: 0\ndata:\n\n"),
    );
    const { transport } = await initialized(server.url);
    await transport.send(INITIALIZED);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    // The first and `serverStreamRetries` (2) more.
    expect(server.getSessions).toHaveLength(3);
  });

  it("a message, then an event without end (cut by the proxy), each time: not served, given up on after its retries", async () => {
    const server = await startGetServer((res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`id: g0\ndata: ${JSON.stringify(note("before the flood"))}\n\n`);
      res.write('id: g1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"x":"');
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      const pump = (): void => {
        while (!res.destroyed) if (!res.write(chunk)) return void res.once("drain", pump);
      };
      pump();
    });
    const { transport } = await initialized(server.url, { maxMessageBytes: 1000, maxSkippedMessageBytes: 8 << 20 });
    await transport.send(INITIALIZED);
    await waitFor(() => server.getSessions.length >= 3, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    // The first and `serverStreamRetries` (2) more; before, each one that carried a message served.
    expect(server.getSessions).toHaveLength(3);
  }, 40_000);

  it("a retry: past what a Node timer holds (2^31 - 1 ms) is waited as the longest one, not 1 ms, without a warning", async () => {
    const warned: string[] = [];
    const onWarning = (warning: Error) => void warned.push(warning.name);
    process.on("warning", onWarning);
    cleanups.push(async () => void process.off("warning", onWarning));
    const server = await startGetServer(
      (res, n) =>
        void res
          .writeHead(200, { "content-type": "text/event-stream" })
          .end(`id: p${n}\nretry: 99999999999\ndata:\n\n`),
    );
    const { transport } = await initialized(server.url);
    await transport.send(INITIALIZED);
    await waitFor(() => server.getSessions.length >= 1, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Run after 1 ms, the overflowed timer reconnected every 250 ms (the shortest wait), without end.
    expect(server.getSessions).toHaveLength(1);
    expect(warned).not.toContain("TimeoutOverflowWarning");
  });

  it("a priming event with a new id each time, then an end (a server polled so): served, polled on, resumed from that id", async () => {
    const lastIds: Array<string | undefined> = [];
    const server = await startGetServer((res, n) => {
      lastIds.push(res.req.headers["last-event-id"] as string | undefined);
      res.writeHead(200, { "content-type": "text/event-stream" }).end(`id: p${n}\nretry: 300\ndata:\n\n`);
    });
    const { transport } = await initialized(server.url);
    await transport.send(INITIALIZED);
    await waitFor(() => server.getSessions.length >= 6, 10_000);
    expect(lastIds.slice(0, 6)).toEqual([undefined, "p1", "p2", "p3", "p4", "p5"]);
  });

  it("initialize and its notification in one batch (which 2025-03-26 forbids): no GET without the session id; what follows carries it and opens the GET", async () => {
    const server = await startGetServer(
      (res) => void res.writeHead(200, { "content-type": "text/event-stream" }).write(": open\n\n"),
    );
    const { transport, got } = await started(server.url);
    // The request right behind the batch, not waiting for its answer.
    const batch = transport.send([INITIALIZE(1), INITIALIZED] as never);
    const ping = transport.send({ jsonrpc: "2.0", id: 2, method: "ping" });
    await Promise.all([batch, ping]);
    await got.next((m) => Array.isArray(m), 5_000);
    await got.response(2, 5_000);
    expect(server.postSessions).toEqual([undefined, "s-1"]);
    await waitFor(() => server.getSessions.length > 0, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.getSessions).toEqual(["s-1"]);
  });

  it("initialize and its notification in one batch, answered slowly, and nothing after: the GET goes once the answer is read", async () => {
    const server = await startGetServer(
      (res) => void res.writeHead(200, { "content-type": "text/event-stream" }).write(": open\n\n"),
      100,
    );
    const { transport, got } = await started(server.url);
    await transport.send([INITIALIZE(1), INITIALIZED] as never);
    await got.next((m) => Array.isArray(m), 5_000);
    await waitFor(() => server.getSessions.length > 0, 5_000);
    expect(server.getSessions).toEqual(["s-1"]);
  });

  it("a message behind an initialize that failed does not open the GET of the next one before its notification", async () => {
    const server = await startGetServer(
      (res) => void res.writeHead(200, { "content-type": "text/event-stream" }).write(": open\n\n"),
      0,
      true,
    );
    const { transport, got } = await started(server.url);
    void transport.send(INITIALIZE(1));
    void transport.send({ jsonrpc: "2.0", id: 2, method: "ping" });
    expect((await got.response(1, 5_000)).error).toMatchObject({ message: "not now" });
    await got.response(2, 5_000);
    await transport.send(INITIALIZE(3));
    expect(await got.response(3, 5_000)).toHaveProperty("result");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.getSessions).toEqual([]);
    await transport.send(INITIALIZED);
    await waitFor(() => server.getSessions.length === 1, 5_000);
  });

  it("a refusal after a failure is logged: another kind of trouble is news", async () => {
    const server = await startGetServer((res, n) => {
      if (n === 1) return void res.socket?.destroy();
      res.writeHead(401).end();
    });
    const { logger, warnings } = recordingWarnings();
    const { transport } = await initialized(server.url, { logger });
    await transport.send(INITIALIZED);
    await waitFor(() => server.getSessions.length >= 3, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(warnings).toContain("GET stream failed");
    expect(warnings.filter((w) => w === "GET stream refused")).toHaveLength(1);
  });
});
