/**
 * A streamable HTTP server that never answers a request: the host gets the proxy's timeout error
 * after `limits.requestTimeoutMs`, the server gets `notifications/cancelled`, and the request's
 * POST is ended then — not left open, holding a connection, for the rest of the session — both
 * when the server holds back the response headers (JSON responses) and when it has opened the
 * response's SSE stream and sends nothing on it (the SDK server's default). Nothing more is said:
 * no error for the cancelled request, no warning in the proxy's log. The upstream is the SDK's
 * own server (a tool that never returns) behind a node:http listener that records when each
 * POST's connection ends; the host is the SDK's client through `stdio`.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { connectStdioWithConfig } from "../helpers/proxyProcess.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface HangingServer {
  url: string;
  /** JSON-RPC requests (method and id) whose POST ended before it was answered. */
  endedUnanswered: Array<{ method: string; id: unknown }>;
  /** Whether a tools/call POST's response headers (an SSE stream's) had been sent. */
  headersSent: boolean[];
  cancelled: unknown[];
}

async function startHangingServer(enableJsonResponse: boolean): Promise<HangingServer> {
  const state: HangingServer = { url: "", endedUnanswered: [], headersSent: [], cancelled: [] };
  const server: Server = createServer(async (req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
    if (body.method === "notifications/cancelled") state.cancelled.push(body.params?.requestId);
    let answered = false;
    const write = res.write.bind(res);
    // A message written on the response (an SSE event) answers it.
    res.write = ((...args: Parameters<typeof res.write>) => {
      answered = true;
      return write(...args);
    }) as typeof res.write;
    res.on("finish", () => (answered = true));
    res.on("close", () => {
      if (body.method === "tools/call") state.headersSent.push(res.headersSent);
      if (!answered) state.endedUnanswered.push({ method: body.method, id: body.id });
    });
    const mcp = new McpServer({ name: "hanging", version: "1.0.0" });
    mcp.registerTool("hang", { description: "never returns" }, () => new Promise(() => {}));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return state;
}

describe("a streamable HTTP server that never answers a request", () => {
  it.each([
    { answer: "JSON responses (no headers yet)", enableJsonResponse: true },
    { answer: "an SSE stream that sends nothing", enableJsonResponse: false },
  ])(
    "with $answer gets the cancel at the proxy's deadline, and the request's POST is ended with it",
    async ({ enableJsonResponse }) => {
      const upstream = await startHangingServer(enableJsonResponse);
      const { client, close, stderr } = await connectStdioWithConfig(
        { mcpServers: { hanging: { url: upstream.url } }, limits: { requestTimeoutMs: 500 } },
        "hanging",
      );
      cleanups.push(close);
      const outcome = await client.callTool({ name: "hang", arguments: {} }, undefined, { timeout: 5_000 }).then(
        () => "answered",
        (error: Error) => error.message,
      );
      expect(outcome).toMatch(/did not answer tools\/call within 500 ms \(limits\.requestTimeoutMs\)/);
      await expect.poll(() => upstream.cancelled, { timeout: 5_000 }).toHaveLength(1);
      await expect
        .poll(() => upstream.endedUnanswered, { timeout: 5_000 })
        .toContainEqual({ method: "tools/call", id: upstream.cancelled[0] });
      // The SSE case really had its stream open when it was ended; the JSON case had no headers.
      expect(upstream.headersSent).toEqual([!enableJsonResponse]);
      // Give a late error for the cancelled request time to show, then check only the timeout was told.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(stderr()).not.toMatch(/response stream failed|upstream request failed|"level":"error"/);
      expect(stderr().match(/"level":"warn".*/g)).toEqual([
        expect.stringMatching(
          /"method":"tools\/call".*"upstream did not answer a request within limits.requestTimeoutMs/,
        ),
      ]);
    },
    20_000,
  );
});
