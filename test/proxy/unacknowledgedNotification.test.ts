/**
 * A streamable HTTP server that never acknowledges a notification (no 202, no answer at all) must
 * not stall the session: `mcp-normalizer stdio` sends what the host sent after the notification
 * once `limits.upstreamAckTimeoutMs` has passed, and says so in its log; the notification's own POST
 * is ended at `limits.requestTimeoutMs`, logged too. The upstream is the SDK's
 * own server behind a node:http listener that swallows every notification POST; the host is the
 * SDK's client; the limit comes from a real config file.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { logLinesAt } from "../helpers/logRecords.js";
import { connectStdioWithConfig } from "../helpers/proxyProcess.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The SDK's server, statelessly, except that notification POSTs are read and never answered. */
async function startSilentOnNotifications(): Promise<{ url: string; swallowed: () => number }> {
  let swallowed = 0;
  const server: Server = createServer(async (req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
    if (body.id === undefined) {
      swallowed++;
      return; // never acknowledged
    }
    const mcp = new McpServer({ name: "silent-on-notifications", version: "1.0.0" });
    mcp.registerTool("ping", { description: "answers pong" }, async () => ({
      content: [{ type: "text", text: "pong" }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await mcp.connect(transport);
    res.on("close", () => void transport.close());
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, swallowed: () => swallowed };
}

describe("a streamable HTTP server that never acknowledges a notification", () => {
  it("does not stall the session past limits.upstreamAckTimeoutMs, and the log says why", async () => {
    const upstream = await startSilentOnNotifications();
    const { client, close, stderr } = await connectStdioWithConfig(
      { mcpServers: { silent: { url: upstream.url } }, limits: { upstreamAckTimeoutMs: 400, requestTimeoutMs: 1500 } },
      "silent",
    );
    cleanups.push(close);
    const started = performance.now();
    // Sent right behind notifications/initialized, which the server never acknowledges.
    const tools = await client.listTools(undefined, { timeout: 5_000 });
    const waited = performance.now() - started;
    expect(tools.tools.map((tool) => tool.name)).toEqual(["ping"]);
    expect(upstream.swallowed()).toBeGreaterThanOrEqual(1);
    // Held for the limit from the config (400 ms), not the 10 s default.
    expect(waited).toBeLessThan(4_000);
    const warnings = (): Array<Record<string, unknown>> => logLinesAt(stderr(), "warn");
    await expect.poll(warnings, { timeout: 5_000 }).toContainEqual(
      expect.objectContaining({
        msg: "upstream has not acknowledged a message; what the host sent after it goes on",
        message: "notifications/initialized",
        waitedMs: 400,
        limit: "limits.upstreamAckTimeoutMs",
      }),
    );
    // The notification's own POST is ended at limits.requestTimeoutMs, not held for the session.
    await expect.poll(warnings, { timeout: 5_000 }).toContainEqual(
      expect.objectContaining({
        msg: "upstream has not acknowledged a message; its POST is ended",
        message: "notifications/initialized",
        waitedMs: 1500,
        limit: "limits.requestTimeoutMs",
      }),
    );
  }, 20_000);
});
