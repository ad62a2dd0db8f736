/**
 * A session's GET stream given up on is asked for again after a POST the server answers (at most
 * every 30 s), whatever came between: here a host's `ping` opened it, its reconnections were
 * refused and given up on, and `notifications/initialized` then asked twice more, refused too. The
 * server then serves GETs again, and the next answered POST past 30 s opens the stream. Against a
 * plain node:http server; only `Date` is faked, to pass the 30 s.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";
import { StreamableHttpUpstreamTransport } from "../../../src/transports/upstream/streamableHttpUpstream.js";
import { waitFor } from "../../helpers/polling.js";
import { collect, INITIALIZE, INITIALIZED } from "./collect.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startServer() {
  let refusing = true;
  let gets = 0;
  let open = 0;
  const server: Server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    if (req.method === "GET") {
      gets++;
      if (refusing) return void res.writeHead(503).end();
      open++;
      return void res.writeHead(200, { "content-type": "text/event-stream" }).write(": open\n\n");
    }
    if (req.method !== "POST") return void res.writeHead(204).end();
    const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as { id?: number; method: string };
    if (body.id === undefined) return void res.writeHead(202).end();
    const result =
      body.method === "initialize"
        ? { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "s", version: "1" } }
        : {};
    res
      .writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" })
      .end(JSON.stringify({ jsonrpc: "2.0", id: body.id, result }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    gets: () => gets,
    open: () => open,
    serve: () => (refusing = false),
  };
}

describe("a GET stream given up on", () => {
  it("is asked for again after an answered POST past 30 s, also when notifications/initialized came after the give-up", async () => {
    const server = await startServer();
    const transport = new StreamableHttpUpstreamTransport({
      url: server.url,
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
      serverStreamRetries: 0,
    });
    const got = collect(transport);
    await transport.start();
    cleanups.push(() => transport.close());
    await transport.send(INITIALIZE(1));
    await got.response(1, 5_000);
    // A ping first: its GET is refused and, with no retries, given up on.
    await transport.send({ jsonrpc: "2.0", id: 2, method: "ping" });
    await got.response(2, 5_000);
    await waitFor(() => server.gets() === 1, 5_000);
    // The notification asks again, and once more after that is refused.
    await transport.send(INITIALIZED);
    await waitFor(() => server.gets() === 3, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.gets()).toBe(3);
    // The server serves GETs again; 30 s on, an answered POST brings one more try.
    server.serve();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 31_000);
    await transport.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "x", arguments: {} } });
    await got.response(3, 5_000);
    // The answered POST has been judged by now; the waits below need a clock that moves.
    vi.useRealTimers();
    await waitFor(() => server.open() === 1, 5_000);
    expect(server.gets()).toBe(4);
  });
});
