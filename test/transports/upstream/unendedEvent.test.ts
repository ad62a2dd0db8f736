/**
 * A streamable HTTP upstream answering a call with an SSE event that never ends, against a plain
 * node:http server: once it runs far past `maxMessageBytes` it is reported by its start (the
 * proxy answers its id) and the response is cancelled — not read for as long as the server sends.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { StreamableHttpUpstreamTransport } from "../../../src/transports/upstream/streamableHttpUpstream.js";
import { collect, INITIALIZE } from "./collect.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server answering tools/call with an event that never ends; `opening`: what the event starts with. */
async function floodingServer(opening: (id: number) => string) {
  const state = { sent: 0, cancelled: false, resumptions: 0 };
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    if (req.method === "GET") {
      if (req.headers["last-event-id"] !== undefined) state.resumptions++;
      return void res.writeHead(405).end();
    }
    if (req.method !== "POST") return void res.writeHead(405).end();
    const message = JSON.parse(Buffer.concat(parts).toString("utf8")) as { id?: number; method: string };
    if (message.id === undefined) return void res.writeHead(202).end();
    if (message.method !== "tools/call") {
      const result = { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "s", version: "1" } };
      return void res
        .writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: message.method === "ping" ? {} : result }));
    }
    res.on("close", () => (state.cancelled = true));
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(opening(message.id));
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const pump = (): void => {
      while (!res.destroyed && state.sent < 1024 * 1024 * 1024) {
        state.sent += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", pump);
      }
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const transport = new StreamableHttpUpstreamTransport({
    url,
    maxMessageBytes: 100_000,
    maxSkippedMessageBytes: 8 << 20,
  });
  const got = collect(transport);
  await transport.start();
  cleanups.push(() => transport.close());
  await transport.send(INITIALIZE(1));
  await got.response(1, 5_000);
  return { state, transport, got };
}

const CALL = { jsonrpc: "2.0" as const, id: 2, method: "tools/call", params: { name: "x", arguments: {} } };

describe("a POST's SSE event without end", () => {
  it("is reported by its start with its id, and its response cancelled; the session goes on", async () => {
    const { state, transport, got } = await floodingServer((id) => `data: {"jsonrpc":"2.0","id":${id},"result":{"x":"`);
    await transport.send(CALL);
    expect(await got.nextProblem(10_000)).toMatchObject({ kind: "too-large", id: 2 });
    await expect.poll(() => state.cancelled, { timeout: 5_000 }).toBe(true);
    expect(state.sent).toBeLessThan(32 * 1024 * 1024);
    await transport.send({ jsonrpc: "2.0", id: 3, method: "ping" });
    expect(await got.response(3, 5_000)).toMatchObject({ id: 3, result: {} });
    expect(got.isClosed()).toBe(false);
  });

  it("whose id would come last (as SDK servers write it), on a stream with event ids: its request is told the proxy cut it, not resumed", async () => {
    const { state, transport, got } = await floodingServer(() => 'id: e1\ndata: {"result":{"x":"');
    await transport.send(CALL);
    const answer = await got.response(2, 10_000);
    expect(answer.error?.message).toMatch(
      /^upstream http:\/\/127\.0\.0\.1:\d+\/mcp's response to POST tools\/call: an event ran on for \d+ bytes without end \(limits\.maxMessageBytes is 100000, limits\.maxSkippedMessageBytes 8388608\): the proxy cut the stream$/,
    );
    await expect.poll(() => state.cancelled, { timeout: 5_000 }).toBe(true);
    expect(state.resumptions).toBe(0);
  });
});
