#!/usr/bin/env node
/**
 * The burst workload's upstream: a streamable HTTP MCP server (the SDK's
 * `StreamableHTTPServerTransport`, one session per initialize, GET streams offered) serving the
 * same resources and tool as bench/upstream.mjs. Prints `listening on http://…/mcp` when ready.
 *
 *   node bench/burst/httpUpstream.mjs [--port P]
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ReadResourceRequestSchema,
  isInitializeRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { base64OfTextBytes, parseBenchUri, textOfBytes } from "../suite/content.mjs";

const { values } = parseArgs({ options: { port: { type: "string" } } });
const cache = new Map();
function contentsOf(uri) {
  const parsed = parseBenchUri(uri);
  if (parsed === null) return null;
  let body = cache.get(uri);
  if (body === undefined) {
    body = parsed.form === "text" ? textOfBytes(parsed.bytes) : base64OfTextBytes(parsed.bytes);
    cache.set(uri, body);
  }
  return { uri, mimeType: "text/plain", [parsed.form]: body };
}

function mcpServer() {
  const server = new Server(
    { name: "bench-http-upstream", version: "1.0.0" },
    { capabilities: { resources: {}, tools: {} } },
  );
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const contents = contentsOf(request.params.uri);
    if (contents === null) throw new Error(`unknown resource ${request.params.uri}`);
    return { contents: [contents] };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) => ({
    content: [{ type: "text", text: String(request.params.arguments?.text ?? "") }],
  }));
  return server;
}

const sessions = new Map();

async function readJson(req) {
  const parts = [];
  for await (const part of req) parts.push(part);
  const text = Buffer.concat(parts).toString("utf8");
  return text === "" ? undefined : JSON.parse(text);
}

const http = createServer(async (req, res) => {
  try {
    if (!req.url.startsWith("/mcp")) {
      res.writeHead(404).end();
      return;
    }
    const id = req.headers["mcp-session-id"];
    if (req.method === "POST") {
      const body = await readJson(req);
      let transport = typeof id === "string" ? sessions.get(id) : undefined;
      if (transport === undefined && !Array.isArray(body) && isInitializeRequest(body)) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => sessions.set(sid, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
        };
        await mcpServer().connect(transport);
      }
      if (transport === undefined) {
        res
          .writeHead(404, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "unknown session" } }));
        return;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    const transport = typeof id === "string" ? sessions.get(id) : undefined;
    if ((req.method === "GET" || req.method === "DELETE") && transport !== undefined) {
      await transport.handleRequest(req, res);
      return;
    }
    res.writeHead(req.method === "OPTIONS" ? 204 : 404).end();
  } catch (error) {
    if (!res.headersSent) res.writeHead(500).end(String(error?.message ?? error));
  }
});
http.keepAliveTimeout = 60_000;
http.headersTimeout = 65_000;
http.listen(Number(values.port ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`);
});
