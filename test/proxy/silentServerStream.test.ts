/**
 * A streamable HTTP server that sends its GET stream's headers only with its first event (Node's
 * `writeHead` without a write or `flushHeaders`) must not hold every session's start for long:
 * `notifications/initialized`, which waits for the GET stream's answer, goes after
 * `limits.upstreamStreamWaitMs` (its default here, from a real config file without it), and the
 * log says so. The host is the SDK's client through `mcp-normalizer stdio`.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { logLinesAt } from "../helpers/logRecords.js";
import { connectStdioWithConfig } from "../helpers/proxyProcess.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Answers initialize and tools/list, acknowledges notifications, and never flushes a GET's headers. */
async function startUnflushedGetServer(): Promise<{ url: string; gets: () => number }> {
  let gets = 0;
  const server: Server = createServer(async (req, res) => {
    if (req.method === "GET") {
      gets++;
      res.writeHead(200, { "content-type": "text/event-stream" }); // held by Node until a first write
      return;
    }
    if (req.method !== "POST") return void res.writeHead(405).end();
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as { id?: number; method: string };
    if (body.id === undefined) return void res.writeHead(202).end();
    const result =
      body.method === "initialize"
        ? {
            protocolVersion: "2025-06-18",
            capabilities: { tools: {} },
            serverInfo: { name: "unflushed", version: "1" },
          }
        : { tools: [{ name: "ping", inputSchema: { type: "object" } }] };
    res
      .writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" })
      .end(JSON.stringify({ jsonrpc: "2.0", id: body.id, result }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, gets: () => gets };
}

describe("a streamable HTTP server that never flushes its GET stream's headers", () => {
  it("holds a session's start for limits.upstreamStreamWaitMs only, and the log says why", async () => {
    const upstream = await startUnflushedGetServer();
    const { client, close, stderr } = await connectStdioWithConfig(
      { mcpServers: { slow: { url: upstream.url } } },
      "slow",
    );
    cleanups.push(close);
    const started = performance.now();
    const tools = await client.listTools(undefined, { timeout: 8_000 });
    const waited = performance.now() - started;
    expect(tools.tools.map((tool) => tool.name)).toEqual(["ping"]);
    expect(upstream.gets()).toBe(1);
    // The default wait, not the 10 s of limits.upstreamAckTimeoutMs.
    expect(waited).toBeLessThan(DEFAULT_LIMITS.upstreamStreamWaitMs + 3_000);
    const warnings = (): Array<Record<string, unknown>> => logLinesAt(stderr(), "warn");
    await expect.poll(warnings, { timeout: 5_000 }).toContainEqual(
      expect.objectContaining({
        msg: "upstream has not answered the GET stream; notifications/initialized goes on",
        waitedMs: DEFAULT_LIMITS.upstreamStreamWaitMs,
        limit: "limits.upstreamStreamWaitMs",
      }),
    );
  }, 20_000);
});
