/**
 * SIGTERM while a session is still reaching a remote upstream that accepts connections and never
 * answers: the host's first request is answered with an error naming the shutdown (a POST's 502,
 * a WebSocket's message and close 1011), not dropped, and the proxy exits 0 without waiting out
 * the connect timeout or the grace.
 */
import { createServer, type Socket } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { openLegacyStream, serveConfig, waitForStderr } from "./helpers.js";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

/** A TCP server that takes every connection and never writes a byte. */
const held: Socket[] = [];
const silent = createServer((socket) => held.push(socket));
await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
const silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}/mcp`;
afterAll(() => {
  for (const socket of held) socket.destroy();
  silent.close();
});

async function proxyReachingSilentServer() {
  const serve = await serveConfig({
    mcpServers: { far: { url: silentUrl } },
    limits: { connectTimeoutMs: 30_000, shutdownGraceMs: 20_000 },
  });
  const exited = new Promise<number | null>((resolve) => serve.child.once("exit", resolve));
  return { serve, exited };
}

describe("serve on SIGTERM, a session still reaching its remote upstream", () => {
  it("a streamable HTTP host's initialize gets 502 -32001 naming the shutdown at once; exit 0", async () => {
    const { serve, exited } = await proxyReachingSilentServer();
    const answer = fetch(`${serve.url}/mcp/far`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(INITIALIZE),
      signal: AbortSignal.timeout(15_000),
    }).then(
      async (response) => ({ status: response.status, body: await response.text() }),
      (error: unknown) => ({ status: 0, body: String(error) }),
    );
    // The upstream has the proxy's connection and sits on it.
    await until(() => held.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const sent = Date.now();
    serve.child.kill("SIGTERM");
    const { status, body } = await answer;
    expect(status).toBe(502);
    expect(JSON.parse(body)).toMatchObject({ id: 1, error: { code: -32001 } });
    expect(body).toContain('Could not connect server \\"far\\": the proxy is shutting down (SIGTERM)');
    expect(await exited).toBe(0);
    expect(Date.now() - sent).toBeLessThan(5000);
    await waitForStderr(serve, /"inFlight":1/);
  });

  it("a WebSocket host gets -32001 naming the shutdown, then a close 1011 saying it; exit 0", async () => {
    const { serve, exited } = await proxyReachingSilentServer();
    const before = held.length;
    const socket = new WebSocket(`${serve.url.replace("http", "ws")}/ws/far`, "mcp");
    const messages: string[] = [];
    socket.on("message", (data) => messages.push(String(data)));
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.on("close", (code, reason) => resolve({ code, reason: String(reason) })),
    );
    await new Promise<void>((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    socket.send(JSON.stringify(INITIALIZE));
    await until(() => held.length > before);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const sent = Date.now();
    serve.child.kill("SIGTERM");
    const { code, reason } = await closed;
    expect(code).toBe(1011);
    expect(reason).toContain("the proxy is shutting down (SIGTERM)");
    expect(messages.map((m) => JSON.parse(m))).toMatchObject([{ id: 1, error: { code: -32001 } }]);
    expect(messages[0]).toContain("the proxy is shutting down (SIGTERM)");
    expect(await exited).toBe(0);
    expect(Date.now() - sent).toBeLessThan(5000);
  });

  it("a legacy SSE host: its initialize gets the error as an event, a POST waiting behind it a 502 saying it", async () => {
    const { serve, exited } = await proxyReachingSilentServer();
    const before = held.length;
    const stream = await openLegacyStream(`${serve.url}/sse/far`);
    const endpoint = new URL(await stream.endpoint, serve.url);
    const post = (body: unknown) =>
      fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      }).then(async (response) => ({ status: response.status, body: await response.text() }));
    expect((await post(INITIALIZE)).status).toBe(202);
    const second = post({ jsonrpc: "2.0", id: 2, method: "ping" });
    await until(() => held.length > before);
    await new Promise((resolve) => setTimeout(resolve, 200));
    serve.child.kill("SIGTERM");
    const text = await stream.text;
    const events = [...text.matchAll(/event: message\ndata: (.+)\n/g)].map((m) => JSON.parse(m[1]!));
    expect(events).toMatchObject([{ id: 1, error: { code: -32001 } }]);
    expect(events[0].error.message).toContain("the proxy is shutting down (SIGTERM)");
    const { status, body } = await second;
    expect(status).toBe(502);
    expect(JSON.parse(body)).toMatchObject({ error: { code: -32001 } });
    expect(body).toContain("the proxy is shutting down (SIGTERM)");
    expect(await exited).toBe(0);
  });
});

/** Resolves once `done()` holds, checked every 20 ms; fails after 10 s. */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
