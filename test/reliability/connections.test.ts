/**
 * The listener's connection limits against real sockets: half-sent request headers are closed
 * after `limits.headersTimeoutMs` (900 of them under `ulimit -n 1024`, then a real client is
 * served), a stalled body after `limits.requestBodyTimeoutMs`, an idle keep-alive connection
 * after `limits.keepAliveTimeoutMs`; `limits.maxConnections` closes the connections over it;
 * running out of file descriptors (EMFILE on accept) neither crashes nor wedges the listener.
 */
import { connect as tcpConnect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { connect, hostTransport, raw, type ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, serveConfig, waitForStderr } from "./helpers.js";

const fx = { fx: { command: process.execPath, args: [FAULT_SERVER] } };

interface Probe {
  readonly socket: Socket;
  /** Everything the server sent. */
  received(): string;
  /** Resolves when the server closed the connection, with ms since the probe connected. */
  readonly closed: Promise<number>;
}

/** A raw connection that sends `data` and then nothing more. */
function probe(url: string, data: string): Promise<Probe> {
  const { port } = new URL(url);
  const socket = tcpConnect(Number(port), "127.0.0.1");
  let received = "";
  const started = Date.now();
  socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
  socket.on("error", () => {});
  const closed = new Promise<number>((resolve) => socket.on("close", () => resolve(Date.now() - started)));
  return new Promise((resolve, reject) => {
    socket.once("connect", () => {
      if (data !== "") socket.write(data);
      resolve({ socket, received: () => received, closed });
    });
    socket.once("error", reject);
  });
}

const HALF_HEADER = "POST /mcp/fx HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";

async function served(serve: ServeProcess): Promise<void> {
  const host = await connect(hostTransport("mcp", { url: serve.url, name: "fx" }));
  expect(
    Number(((await raw(host.client, "tools/call", { name: "pid" })).content as Array<{ text: string }>)[0]!.text),
  ).toBeGreaterThan(0);
  await host.close();
}

async function untilHealthy(serve: ServeProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`/healthz not answered within ${timeoutMs} ms`);
    const ok = await fetch(`${serve.url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_resolve, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe("limits.headersTimeoutMs", () => {
  it("900 connections with half-sent headers under ulimit -n 1024 are closed with 408 near the deadline; then a real client is served", async () => {
    const serve = await serveConfig({ mcpServers: fx, limits: { headersTimeoutMs: 2000 } }, {}, [], {
      maxOpenFiles: 1024,
    });
    const probes: Probe[] = [];
    try {
      for (let i = 0; i < 900; i++) probes.push(await probe(serve.url, HALF_HEADER));
      const times = await within(Promise.all(probes.map((p) => p.closed)), 20_000, "900 half-sent headers closed");
      // Each was closed after its 2 s, within a generous margin for the sweep and a loaded machine.
      expect(Math.min(...times)).toBeGreaterThanOrEqual(1900);
      expect(Math.max(...times)).toBeLessThan(12_000);
      expect(probes.filter((p) => p.received().startsWith("HTTP/1.1 408")).length).toBe(900);
      await served(serve);
      expect(serve.child.exitCode).toBeNull();
    } finally {
      for (const p of probes) p.socket.destroy();
      await serve.stop();
    }
  });
});

describe("limits.requestBodyTimeoutMs and limits.keepAliveTimeoutMs", () => {
  it("a body that stalls is closed with 408; an idle keep-alive connection is closed", async () => {
    const serve = await serveConfig({
      mcpServers: fx,
      limits: { headersTimeoutMs: 1000, requestBodyTimeoutMs: 2000, keepAliveTimeoutMs: 1000 },
    });
    try {
      const stalled = await probe(serve.url, `${HALF_HEADER}Content-Length: 100\r\n\r\n{"jsonrpc":`);
      const stalledAfter = await within(stalled.closed, 10_000, "stalled body closed");
      expect(stalledAfter).toBeGreaterThanOrEqual(1900);
      expect(stalled.received()).toMatch(/^HTTP\/1\.1 408/);

      const idle = await probe(serve.url, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n");
      const idleAfter = await within(idle.closed, 10_000, "idle keep-alive connection closed");
      expect(idle.received()).toMatch(/^HTTP\/1\.1 200/);
      expect(idleAfter).toBeGreaterThanOrEqual(900);
    } finally {
      await serve.stop();
    }
  });
});

describe("limits.maxConnections", () => {
  it("connections over the cap are closed as they arrive and logged; once others close, clients are served", async () => {
    const serve = await serveConfig({
      mcpServers: fx,
      // All from one client here: its own cap (half of maxConnections by default) raised to the listener's.
      limits: { maxConnections: 3, maxConnectionsPerClient: 3, headersTimeoutMs: 30_000, requestBodyTimeoutMs: 30_000 },
    });
    const held: Probe[] = [];
    try {
      for (let i = 0; i < 3; i++) held.push(await probe(serve.url, HALF_HEADER));
      const over = await probe(serve.url, "");
      expect(await within(over.closed, 5000, "the fourth connection closed")).toBeLessThan(5000);
      expect(over.received()).toBe("");
      await waitForStderr(serve, /limits\.maxConnections are open/);
      for (const p of held) p.socket.destroy();
      await Promise.all(held.map((p) => p.closed));
      // The server frees a slot when it sees the close, a moment after the client did.
      await untilHealthy(serve, 5000);
      await served(serve);
    } finally {
      for (const p of held) p.socket.destroy();
      await serve.stop();
    }
  });
});

describe("out of file descriptors", () => {
  it("a maxConnections above ulimit -n is warned about at start; EMFILE on accept neither crashes nor wedges the listener", async () => {
    const serve = await serveConfig({ mcpServers: fx, limits: { headersTimeoutMs: 2000 } }, {}, [], {
      maxOpenFiles: 150,
    });
    const probes: Probe[] = [];
    try {
      await waitForStderr(
        serve,
        /"openFileLimit":150.*limits\.maxConnections is above what the open-file limit allows/,
      );
      // More connections than descriptors: those past the limit are dropped (EMFILE), the
      // others closed with 408 after headersTimeoutMs.
      for (let i = 0; i < 250; i++) probes.push(await probe(serve.url, HALF_HEADER));
      await within(Promise.all(probes.map((p) => p.closed)), 20_000, "every probe closed");
      expect(probes.filter((p) => p.received().startsWith("HTTP/1.1 408")).length).toBeGreaterThan(0);
      expect(probes.filter((p) => p.received() === "").length).toBeGreaterThan(0);
      expect(serve.child.exitCode).toBeNull();
      await served(serve);
    } finally {
      for (const p of probes) p.socket.destroy();
      await serve.stop();
    }
  });
});
