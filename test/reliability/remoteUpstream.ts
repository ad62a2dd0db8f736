/**
 * A remote streamable HTTP upstream the tests can make slow, drop connections, stop and start
 * again on the same port: the SDK's real `McpServer` behind its `StreamableHTTPServerTransport`.
 * Tools: `ok` (answers "ok"), `slow {ms}`; a `tools/call` of `drop` has its socket destroyed
 * before any answer (a connection dropped mid-request).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

export interface RemoteUpstream {
  readonly url: string;
  readonly port: number;
  /** Stops listening and drops every connection and session. */
  stop(): Promise<void>;
}

function mcpServer(): McpServer {
  const server = new McpServer({ name: "mcpn-remote", version: "1.0.0" });
  server.registerTool("ok", { description: "answers ok" }, () => ({ content: [{ type: "text", text: "ok" }] }));
  server.registerTool("slow", { description: "answers after ms", inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: [{ type: "text", text: "slow done" }] };
  });
  server.registerTool("drop", { description: "never answered: the connection is dropped" }, () => ({ content: [] }));
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString("utf8");
  return text === "" ? undefined : JSON.parse(text);
}

/** Starts on 127.0.0.1:`port` (0: any free port). */
export async function startRemoteUpstream(port = 0): Promise<RemoteUpstream> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method === "OPTIONS") return void res.writeHead(204).end();
    const body = req.method === "POST" ? await readJson(req) : undefined;
    if ((body as { method?: string; params?: { name?: string } } | undefined)?.params?.name === "drop") {
      req.socket.destroy();
      return;
    }
    const sessionId = req.headers["mcp-session-id"] as string | undefined;
    let transport = sessionId === undefined ? undefined : transports.get(sessionId);
    if (transport === undefined && req.method === "POST" && isInitializeRequest(body)) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, created),
      });
      created.onclose = () => {
        if (created.sessionId !== undefined) transports.delete(created.sessionId);
      };
      await mcpServer().connect(created);
      transport = created;
    }
    if (transport === undefined)
      return void res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "no such session" } }));
    await transport.handleRequest(req, res, body);
  };
  const server: Server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    port: bound,
    stop: async () => {
      await Promise.allSettled([...transports.values()].map((t) => t.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
