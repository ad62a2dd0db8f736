/**
 * What a streamable HTTP server sends on a request's own response stream (its logs, progress,
 * questions to the client) reaches the host on that same request's stream, in order — also when
 * two requests are in flight at once, in one session or as two stateless POSTs served by one
 * pooled upstream. A host reads each request's stream on its own, so a message put on another
 * request's stream would arrive out of order (or after the answer it belongs before). The
 * upstream is the SDK's own server; the host speaks raw HTTP to `serve`'s `/mcp`, so each
 * response stream is read exactly as sent.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { post } from "../badInput/mcpHttp.js";
import { startStreamableHttpFixture } from "../fixtures/upstream-servers/httpFixtures.js";
import { serveConfig } from "../reliability/helpers.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const chatter = (id: number, tag: string, count = 6) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "chatter", arguments: { tag, count, gapMs: 15 } },
  });

const logsOf = (messages: Array<Record<string, unknown>>) =>
  messages.filter((m) => m.method === "notifications/message").map((m) => (m.params as { data: string }).data);

const expected = (tag: string) => Array.from({ length: 6 }, (_, i) => `${tag}:${i}`);

/**
 * A stateless server of the 2026-07-28 protocol (no session, no initialize; the SDK's server does
 * not speak it yet): `chatter` answers on an SSE stream, its log notifications `gapMs` apart,
 * and sends one more (`tag:after`) on the same stream after its answer.
 */
async function startChatteringStatelessServer(): Promise<string> {
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    if (req.method !== "POST") return void res.writeHead(405).end();
    const message = JSON.parse(Buffer.concat(parts).toString("utf8"));
    if (message.id === undefined) return void res.writeHead(202).end();
    if (message.method !== "tools/call") {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: {} }));
    }
    const { tag, count, gapMs } = message.params.arguments;
    res.writeHead(200, { "content-type": "text/event-stream" });
    const event = (data: unknown) => res.write(`event: message\ndata: ${JSON.stringify(data)}\n\n`);
    for (let i = 0; i < count; i++) {
      event({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `${tag}:${i}` } });
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    event({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: `${tag} done` }] } });
    event({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `${tag}:after` } });
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

async function proxyInFront(limits: Record<string, unknown> = {}): Promise<string> {
  const upstream = await startStreamableHttpFixture();
  cleanups.push(upstream.close);
  const proxy = await serveConfig({ mcpServers: { up: { url: upstream.url } }, limits });
  cleanups.push(proxy.stop);
  return `${proxy.url}/mcp/up`;
}

describe("messages on a streamable HTTP upstream's request streams", () => {
  it("reach the host on the same request's stream, in order, with two requests of a session in flight", async () => {
    const endpoint = await proxyInFront();
    const init = await post(
      endpoint,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-host", version: "1" } },
      }),
    );
    const session = init.headers.get("mcp-session-id") ?? undefined;
    expect(session).toBeTruthy();
    await post(endpoint, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), session);

    const [a, b] = await Promise.all([
      post(endpoint, chatter(2, "A"), session),
      post(endpoint, chatter(3, "B"), session),
    ]);
    expect(logsOf(a.messages)).toEqual(expected("A"));
    expect(logsOf(b.messages)).toEqual(expected("B"));
    // Each stream ends with its own answer.
    expect(a.messages.at(-1)).toMatchObject({ id: 2, result: { content: [{ text: "A done" }] } });
    expect(b.messages.at(-1)).toMatchObject({ id: 3, result: { content: [{ text: "B done" }] } });
  });

  it("reach each stateless POST on its own stream when one pooled upstream serves both, never another's", async () => {
    const upstream = await startChatteringStatelessServer();
    const proxy = await serveConfig({ mcpServers: { up: { url: upstream } }, limits: { statelessPoolSize: 1 } });
    cleanups.push(proxy.stop);
    const endpoint = `${proxy.url}/mcp/up`;
    const stateless = { "mcp-protocol-version": "2026-07-28" };
    // A ends first: what its stream sends after its answer must not go to B, still in flight.
    const [a, b] = await Promise.all([
      post(endpoint, chatter(1, "A", 2), undefined, stateless),
      post(endpoint, chatter(1, "B"), undefined, stateless),
    ]);
    expect(logsOf(a.messages)).toEqual(["A:0", "A:1"]);
    expect(logsOf(b.messages)).toEqual(expected("B"));
    expect(a.messages.at(-1)).toMatchObject({ id: 1, result: { content: [{ text: "A done" }] } });
    expect(b.messages.at(-1)).toMatchObject({ id: 1, result: { content: [{ text: "B done" }] } });
  });
});
