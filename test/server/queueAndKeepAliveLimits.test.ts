/**
 * `limits.maxQueuedMessages`, `limits.maxQueuedBytes` and `limits.sseKeepAliveMs` reach `serve` from its config file. The
 * upstream is the hand-written raw upstream, which emits notifications that belong to no request
 * (so they wait for the host's GET stream); the host is plain HTTP, so what the stream carries is
 * seen byte for byte.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";
import { ROOT } from "../helpers/paths.js";

const RAW_UPSTREAM = join(ROOT, "test", "fixtures", "servers", "raw-upstream.mjs");
const running: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((serve) => serve.stop()));
});

async function serveWith(limits: Record<string, number>): Promise<ServeProcess> {
  const file = join(tempDir(), "proxy.config.json");
  writeFileSync(
    file,
    JSON.stringify({ mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } }, limits }),
  );
  const serve = await startServe(["--config", file]);
  running.push(serve);
  return serve;
}

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

async function post(url: string, session: string | undefined, body: unknown): Promise<Response> {
  const headers = session === undefined ? HEADERS : { ...HEADERS, "mcp-session-id": session };
  return fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(5_000) });
}

/** An initialized session on `/mcp/raw`: its id. */
async function openSession(base: string): Promise<string> {
  const init = await post(`${base}/mcp/raw`, undefined, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  });
  const session = init.headers.get("mcp-session-id")!;
  await init.text();
  expect((await post(`${base}/mcp/raw`, session, { jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(
    202,
  );
  return session;
}

/** Reads the GET stream until `done` holds for what arrived, or fails after 5 s. */
async function readStream(base: string, session: string, done: (seen: string) => boolean): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 5_000);
  const res = await fetch(`${base}/mcp/raw`, {
    headers: { accept: "text/event-stream", "mcp-session-id": session },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  try {
    while (!done(seen)) seen += (await reader.read()).value ?? "";
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return seen;
}

const line = (message: unknown) => Buffer.from(`${JSON.stringify(message)}\n`).toString("base64");
// The answer first: notifications sent while no request is in flight belong to the GET stream.
const ANSWER = line({ jsonrpc: "2.0", id: "__ID__", result: { contents: [] } });
const notification = (n: number) => line({ jsonrpc: "2.0", method: "notifications/message", params: { n } });

describe("serve: the queue of a session without a GET stream, and SSE keep-alives, from the config", () => {
  it("limits.maxQueuedMessages: 2 keeps the last two of 2000 notifications; the drops are two log lines, counted", async () => {
    const serve = await serveWith({ maxQueuedMessages: 2 });
    const base = new URL(serve.url).origin;
    const session = await openSession(base);
    const call = await post(`${base}/mcp/raw`, session, {
      jsonrpc: "2.0",
      id: 2,
      method: "resources/read",
      params: {
        uri: "x:/",
        _noFinal: true,
        _emit: [ANSWER, ...Array.from({ length: 2000 }, (_, i) => notification(i))],
      },
    });
    expect(await call.text()).toContain('"contents":[]');
    // The notifications may still be on their way from the upstream: the stream opens once the first drop is logged.
    const drops = () => serve.stderr().split("limits.maxQueuedMessages (2)").length - 1;
    for (const deadline = Date.now() + 5_000; drops() < 1 && Date.now() < deadline; )
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(serve.stderr()).toContain("Dropped a server message: more than limits.maxQueuedMessages (2)");
    await new Promise((resolve) => setTimeout(resolve, 500));
    const seen = await readStream(base, session, (text) => text.includes('"n":1999'));
    const delivered = [...seen.matchAll(/"n":(\d+)/g)].map((m) => Number(m[1]));
    // Opening the stream reports what was dropped since the first line (all of it but the last
    // two, unless the stream opened while the upstream was still sending: then those came on it).
    await new Promise((resolve) => setTimeout(resolve, 200));
    const more = Number(/Dropped (\d+) more server messages/.exec(serve.stderr())?.[1] ?? 0);
    expect(delivered.length + 1 + more).toBe(2000);
    expect(delivered.at(-1)).toBe(1999);
    expect(drops()).toBe(more === 0 ? 1 : 2);
    expect(more).toBeGreaterThan(1000);
  });

  it("limits.maxQueuedBytes bounds what the queue holds in memory (two bytes a character past Latin-1), the newest kept", async () => {
    const serve = await serveWith({ maxQueuedBytes: 50_000 });
    const base = new URL(serve.url).origin;
    const session = await openSession(base);
    // Each notification holds 10,000+ bytes: 5,000 characters of two bytes each.
    const big = (n: number) =>
      line({ jsonrpc: "2.0", method: "notifications/message", params: { n, data: "\u20ac".repeat(5000) } });
    const call = await post(`${base}/mcp/raw`, session, {
      jsonrpc: "2.0",
      id: 2,
      method: "resources/read",
      params: { uri: "x:/", _noFinal: true, _emit: [ANSWER, ...Array.from({ length: 200 }, (_, i) => big(i))] },
    });
    expect(await call.text()).toContain('"contents":[]');
    for (let deadline = Date.now() + 5_000; !serve.stderr().includes("limits.maxQueuedBytes (50000 bytes)"); ) {
      if (Date.now() > deadline) throw new Error("no drop was logged");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const seen = await readStream(base, session, (text) => text.includes('"n":199'));
    const delivered = [...seen.matchAll(/"n":(\d+)/g)].map((m) => Number(m[1]));
    expect(delivered.at(-1)).toBe(199);
    expect(delivered.length).toBeLessThanOrEqual(5);
    expect(delivered.length).toBeGreaterThanOrEqual(4);
  });

  it("limits.maxQueuedBytes: a message larger than the whole limit is still kept when it is the newest", async () => {
    const serve = await serveWith({ maxQueuedBytes: 1000 });
    const base = new URL(serve.url).origin;
    const session = await openSession(base);
    const big = (n: number) =>
      line({ jsonrpc: "2.0", method: "notifications/message", params: { n, data: "x".repeat(5000) } });
    const call = await post(`${base}/mcp/raw`, session, {
      jsonrpc: "2.0",
      id: 2,
      method: "resources/read",
      params: { uri: "x:/", _noFinal: true, _emit: [ANSWER, big(0), big(1), big(2)] },
    });
    expect(await call.text()).toContain('"contents":[]');
    for (let deadline = Date.now() + 5_000; !serve.stderr().includes("limits.maxQueuedBytes (1000 bytes)"); ) {
      if (Date.now() > deadline) throw new Error("no drop was logged");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const seen = await readStream(base, session, (text) => text.includes('"n":2'));
    expect([...seen.matchAll(/"n":(\d+)/g)].map((m) => Number(m[1]))).toEqual([2]);
  });

  it("limits.sseKeepAliveMs: 100 sends keep-alive comments on an idle GET stream", async () => {
    const serve = await serveWith({ sseKeepAliveMs: 100 });
    const base = new URL(serve.url).origin;
    const session = await openSession(base);
    const seen = await readStream(base, session, (text) => text.split(": keepalive").length > 3);
    expect(seen.split(": keepalive").length).toBeGreaterThan(3);
  });

  it("refuses a negative keep-alive and a zero queue, naming the field", async () => {
    for (const [limits, field] of [
      [{ sseKeepAliveMs: -1 }, "limits.sseKeepAliveMs"],
      [{ sseKeepAliveMs: 5 }, "limits.sseKeepAliveMs"],
      [{ maxQueuedMessages: 0 }, "limits.maxQueuedMessages"],
      [{ maxQueuedBytes: 0 }, "limits.maxQueuedBytes"],
    ] as const) {
      await expect(serveWith(limits)).rejects.toThrow(field);
    }
  });
});
