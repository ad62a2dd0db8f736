/**
 * `limits.upstreamIdleConnections` reaches the connections to a streamable HTTP server: with the
 * default, a session's sequential requests reuse one kept-alive connection; with 0, no idle
 * connection is kept and each request opens its own. The upstream is the SDK's own server behind
 * a node:http listener that records which connection carried each POST; the host is the SDK's
 * client through `stdio`, configured by a config file.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { connectStdioWithConfig } from "../helpers/proxyProcess.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A stateless SDK server with an `echo` tool; `toolCallSockets` lists the connection of each tools/call POST. */
async function startEchoServer(): Promise<{ url: string; toolCallSockets: number[] }> {
  const socketIds = new WeakMap<Socket, number>();
  let opened = 0;
  const toolCallSockets: number[] = [];
  const server: Server = createServer(async (req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
    if (body.method === "tools/call") toolCallSockets.push(socketIds.get(req.socket)!);
    const mcp = new McpServer({ name: "echo", version: "1.0.0" });
    mcp.registerTool("echo", { description: "answers at once" }, () => ({ content: [{ type: "text", text: "ok" }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  server.on("connection", (socket: Socket) => socketIds.set(socket, ++opened));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, toolCallSockets };
}

describe("limits.upstreamIdleConnections", () => {
  it.each([
    { limits: {}, connections: 1, what: "the default keeps the connection for the next request" },
    { limits: { upstreamIdleConnections: 0 }, connections: 5, what: "0 keeps none: a connection per request" },
  ])(
    "$what",
    async ({ limits, connections }) => {
      const upstream = await startEchoServer();
      const { client, close } = await connectStdioWithConfig(
        { mcpServers: { echo: { url: upstream.url } }, limits },
        "echo",
      );
      cleanups.push(close);
      for (let i = 0; i < 5; i++) {
        const result = await client.callTool({ name: "echo", arguments: {} }, undefined, { timeout: 5_000 });
        expect(result.content).toEqual([{ type: "text", text: "ok" }]);
      }
      expect(upstream.toolCallSockets).toHaveLength(5);
      expect(new Set(upstream.toolCallSockets).size).toBe(connections);
    },
    20_000,
  );
});
