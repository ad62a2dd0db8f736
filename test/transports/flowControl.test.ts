/**
 * The transports' flow control (FlowControl in src/transports/types.ts) on real pipes and
 * sockets: a peer that stops reading shows as `queuedBytes`, every send while it is behind gets
 * one shared drain waiter (never a listener per message: thousands of them made removal
 * quadratic and froze the proxy), `whenDrained` settles once the peer reads again, and
 * `pauseReading` really stops what a transport reads.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough, Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { StdioHostTransport } from "../../src/transports/host/stdioHost.js";
import { SseWriter } from "../../src/transports/host/sseWriter.js";
import { WsHostSession } from "../../src/transports/host/wsHost.js";
import { StdioUpstreamTransport } from "../../src/transports/upstream/stdioUpstream.js";
import type { JSONRPCMessage } from "../../src/transports/types.js";
import { READ_TURN_BYTES, ReadYield } from "../../src/transports/readYield.js";
import { TickCork } from "../../src/transports/tickCork.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { signalProcess } from "../helpers/pids.js";

const FLOOD_SERVER = fileURLToPath(new URL("../fixtures/servers/flood-server.mjs", import.meta.url));
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const note = (i: number): JSONRPCMessage =>
  ({
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "info", data: { seq: i, pad: "z".repeat(1000) } },
  }) as JSONRPCMessage;

/** Settles with "pending" if `promise` has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | "pending"> {
  return Promise.race([promise, new Promise<"pending">((resolve) => setTimeout(() => resolve("pending"), ms))]);
}

/** Sends `count` messages; returns the distinct promises the sends returned. */
function sendMany(send: (message: JSONRPCMessage) => Promise<void>, count: number): Set<Promise<void>> {
  const promises = new Set<Promise<void>>();
  for (let i = 0; i < count; i++) promises.add(send(note(i)));
  return promises;
}

describe("stdio upstream: a child that does not read its stdin", () => {
  it("is one drain waiter however many messages wait, and settles once the child reads", async () => {
    const transport = new StdioUpstreamTransport({
      command: process.execPath,
      args: [FLOOD_SERVER],
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    const progress: JSONRPCMessage[] = [];
    transport.onmessage = (message) => void progress.push(message);
    await transport.start();
    cleanups.push(() => transport.close());
    transport.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "stall", arguments: { ms: 60_000 } },
    } as JSONRPCMessage);
    await waitFor(() => progress.length > 0, "the stall answer");

    const stdin = (transport as unknown as { child: { stdin: PassThrough; pid: number } }).child.stdin;
    const baseline = stdin.listenerCount("drain");
    const promises = sendMany((m) => transport.send(m), 5000);
    expect(transport.queuedBytes).toBeGreaterThan(4 * 1024 * 1024);
    // The settled promise of the messages taken at once, and the one waiter of all the others.
    expect(promises.size).toBeLessThanOrEqual(2);
    expect(stdin.listenerCount("drain")).toBeLessThanOrEqual(baseline + 1);
    const drained = transport.whenDrained();
    expect(await within(drained, 300)).toBe("pending");

    signalProcess((transport as unknown as { child: { pid: number } }).child.pid, "SIGUSR2");
    await drained;
    expect(transport.queuedBytes).toBe(0);
    expect(stdin.listenerCount("drain")).toBe(baseline);
  });

  it("pauseReading stops reading the child's stdout; its writes block; resumeReading takes them all, in order", async () => {
    const transport = new StdioUpstreamTransport({
      command: process.execPath,
      args: [FLOOD_SERVER],
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    const seqs: number[] = [];
    let answered = false;
    transport.onmessage = (message) => {
      const m = message as { id?: number; params?: { data?: { seq: number } } };
      if (m.id === 1) answered = true;
      else if (m.params?.data !== undefined) seqs.push(m.params.data.seq);
    };
    await transport.start();
    cleanups.push(() => transport.close());
    transport.pauseReading();
    await transport.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "flood", arguments: { count: 50_000 } },
    } as JSONRPCMessage);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(seqs.length).toBe(0);
    expect(answered).toBe(false);

    transport.resumeReading();
    await waitFor(() => answered, "the flood answer", 30_000);
    expect(seqs.length).toBe(50_000);
    expect(seqs.every((seq, i) => seq === i)).toBe(true);
  });
});

describe("SSE stream: a host that stops reading", () => {
  it("is one drain waiter on the response, and settles once the host reads", async () => {
    let writer: SseWriter | undefined;
    let response: ServerResponse | undefined;
    const server: Server = createServer((_req, res) => {
      response = res;
      writer = new SseWriter(res, {}, 0);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const body = await new Promise<IncomingMessage>((resolve) =>
      request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, resolve).end(),
    );
    cleanups.push(() => void body.destroy());
    body.pause();
    await waitFor(() => writer !== undefined, "the stream");

    const baseline = response!.listenerCount("drain");
    const promises = new Set<Promise<void>>();
    // Enough to fill the loopback socket buffers (several MiB) and then some.
    for (let i = 0; i < 40_000; i++) promises.add(writer!.write("message", JSON.stringify(note(i))));
    await new Promise((resolve) => setImmediate(resolve));
    expect(writer!.queuedBytes).toBeGreaterThan(1024 * 1024);
    expect(promises.size).toBeLessThanOrEqual(2);
    expect(response!.listenerCount("drain")).toBeLessThanOrEqual(baseline + 1);
    const drained = writer!.drained();
    expect(await within(drained, 300)).toBe("pending");

    let received = 0;
    body.on("data", (chunk: Buffer) => (received += chunk.length));
    body.resume();
    await drained;
    expect(received).toBeGreaterThan(0);
    expect(response!.listenerCount("drain")).toBe(baseline);
  });
});

describe("WebSocket host session: a host that stops reading", () => {
  it("is one drain waiter on the socket; pauseReading stops reading the host's frames", async () => {
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => wss.close(() => resolve())));
    const accepted = new Promise<WebSocket>((resolve) => wss.once("connection", resolve));
    const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`);
    cleanups.push(() => client.terminate());
    const session = new WsHostSession(await accepted, {}, 64 * 1024 * 1024, 2000);
    const received: unknown[] = [];
    session.onmessage = (message) => void received.push(message);
    await session.start();
    await new Promise<void>((resolve) =>
      client.readyState === WebSocket.OPEN ? resolve() : client.once("open", () => resolve()),
    );
    client.pause();

    const raw = (session as unknown as { rawSocket: PassThrough }).rawSocket;
    const baseline = raw.listenerCount("drain");
    const promises = sendMany((m) => session.send(m), 20_000);
    expect(session.queuedBytes).toBeGreaterThan(1024 * 1024);
    expect(promises.size).toBeLessThanOrEqual(2);
    expect(raw.listenerCount("drain")).toBeLessThanOrEqual(baseline + 1);
    const drained = session.whenDrained();
    expect(await within(drained, 300)).toBe("pending");
    let frames = 0;
    client.on("message", () => frames++);
    client.resume();
    await drained;
    expect(frames).toBeGreaterThan(0);

    // The other way: paused, the host's frames are not taken; resumed, all of them are.
    session.pauseReading();
    for (let i = 0; i < 100; i++)
      client.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/flood", params: { seq: i } }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received.length).toBe(0);
    session.resumeReading();
    await waitFor(() => received.length === 100, "the host's frames");
    await session.close();
  });
});

describe("stdio host: a host that does not read the proxy's stdout", () => {
  it("is one drain waiter on stdout; pauseReading stops reading stdin", async () => {
    const input = new Readable({ read() {} });
    const output = new PassThrough({ highWaterMark: 16 * 1024 });
    const transport = new StdioHostTransport({ input, output, maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes });
    const received: unknown[] = [];
    transport.onmessage = (message) => void received.push(message);
    await transport.start();
    cleanups.push(() => transport.close());

    const baseline = output.listenerCount("drain");
    const promises = sendMany((m) => transport.send(m), 2000);
    expect(transport.queuedBytes).toBeGreaterThan(1024 * 1024);
    expect(promises.size).toBeLessThanOrEqual(2);
    expect(output.listenerCount("drain")).toBeLessThanOrEqual(baseline + 1);
    const drained = transport.whenDrained();
    expect(await within(drained, 200)).toBe("pending");
    let lines = 0;
    output.on("data", (chunk: Buffer) => {
      for (const byte of chunk) if (byte === 0x0a) lines++;
    });
    await drained;
    await waitFor(() => lines === 2000, "every line");

    transport.pauseReading();
    input.push(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/flood", params: { seq: 0 } })}\n`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(received.length).toBe(0);
    transport.resumeReading();
    await waitFor(() => received.length === 1, "the host's line");
  });
});

describe("TickCork and ReadYield", () => {
  it("TickCork: the first write of a tick goes out at once, the rest of the tick in one writev", async () => {
    const calls: string[][] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        calls.push([chunk.toString()]);
        done();
      },
      writev(chunks, done) {
        calls.push(chunks.map((c) => (c.chunk as Buffer).toString()));
        done();
      },
    });
    const tick = new TickCork(sink);
    for (const text of ["a", "b", "c", "d"]) {
      tick.beforeWrite();
      sink.write(text);
    }
    expect(calls).toEqual([["a"]]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual([["a"], ["b", "c", "d"]]);
    // The next tick starts afresh.
    tick.beforeWrite();
    sink.write("e");
    expect(calls.at(-1)).toEqual(["e"]);
  });

  it("ReadYield: past its share of a turn the stream pauses until the next turn; a hold outlasts the turn", async () => {
    const events: string[] = [];
    const turns = new ReadYield(
      () => events.push("pause"),
      () => events.push("resume"),
    );
    turns.took(READ_TURN_BYTES);
    expect(events).toEqual([]);
    turns.took(1);
    expect(events).toEqual(["pause"]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(["pause", "resume"]);

    turns.hold();
    turns.took(READ_TURN_BYTES + 1);
    await new Promise((resolve) => setImmediate(resolve));
    // Held: the next turn does not resume it; release does.
    expect(events.at(-1)).toBe("pause");
    turns.release();
    expect(events.at(-1)).toBe("resume");
  });
});

async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not seen in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
