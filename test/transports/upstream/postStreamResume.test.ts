/**
 * A POST's event stream the server ends before answering, each time with a new event and
 * `retry: 0`, against a plain node:http server: it is resumed from its last id, but never sooner
 * than the shortest reconnection wait — without one, a single call asked hundreds of GETs a second
 * for as long as it waited.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";
import { StreamableHttpUpstreamTransport } from "../../../src/transports/upstream/streamableHttpUpstream.js";
import { waitFor } from "../../helpers/polling.js";
import { collect, INITIALIZE } from "./collect.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const note = JSON.stringify({
  jsonrpc: "2.0",
  method: "notifications/message",
  params: { level: "info", data: "tick" },
});

async function resumingServer() {
  const lastIds: string[] = [];
  let events = 0;
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const polled = () =>
      void res
        .writeHead(200, { "content-type": "text/event-stream" })
        .end(`retry: 0\nid: e${++events}\ndata: ${note}\n\n`);
    if (req.method === "GET") {
      const last = req.headers["last-event-id"];
      if (typeof last !== "string") return void res.writeHead(405).end();
      lastIds.push(last);
      return polled();
    }
    if (req.method !== "POST") return void res.writeHead(204).end();
    const message = JSON.parse(Buffer.concat(parts).toString("utf8")) as { id?: number; method: string };
    if (message.id === undefined) return void res.writeHead(202).end();
    if (message.method === "initialize") {
      const result = { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "s", version: "1" } };
      return void res
        .writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    }
    polled();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, lastIds };
}

describe("a POST's stream ended with retry: 0 and a new event each time", () => {
  it("is resumed from its last id, at most every 250 ms", async () => {
    const server = await resumingServer();
    const transport = new StreamableHttpUpstreamTransport({
      url: server.url,
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    const got = collect(transport);
    await transport.start();
    cleanups.push(() => transport.close());
    await transport.send(INITIALIZE(1));
    await got.response(1, 5_000);
    await transport.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x", arguments: {} } });
    await waitFor(() => server.lastIds.length >= 1, 5_000);
    const from = server.lastIds.length;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const resumed = server.lastIds.length - from;
    // 1.5 s at 250 ms a resumption: six, one more for the timers' slack.
    expect(resumed).toBeGreaterThanOrEqual(3);
    expect(resumed).toBeLessThanOrEqual(7);
    expect(server.lastIds.slice(0, 3)).toEqual(["e1", "e2", "e3"]);
  });
});
