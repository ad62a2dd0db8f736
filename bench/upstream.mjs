#!/usr/bin/env node
/**
 * The benchmark's upstream: a stdio MCP server on the SDK's low-level `Server`, so every
 * path through every proxy talks to the same server with the same cost.
 *
 *   resources/read bench://text/N   → {uri, mimeType: "text/plain", text}  (N bytes of UTF-8)
 *   resources/read bench://blob/N   → {uri, mimeType: "text/plain", blob}  (base64 of N bytes of UTF-8 text:
 *                                      the "text wrapped in base64" the proxy exists to unwrap)
 *   tools/call echo {text}          → {content: [{type: "text", text}]}  (no resources: pure pass-through)
 *
 * `--prepare N[,N…]` builds (and flattens) those blob strings before serving, so a fresh upstream's
 * first big read costs the same as its second and no path is billed for the upstream's own work.
 */
import { parseArgs } from "node:util";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { RESOURCES, base64OfTextBytes, parseBenchUri, textOfBytes } from "./suite/content.mjs";

const { values } = parseArgs({ options: { prepare: { type: "string" } } });

/** Built contents by URI: a benchmark reads the same few resources many times. */
const cache = new Map();

function contentsOf(uri) {
  let body = cache.get(uri);
  if (body === undefined) {
    const parsed = parseBenchUri(uri);
    if (parsed === null) return null;
    body = parsed.form === "text" ? textOfBytes(parsed.bytes) : base64OfTextBytes(parsed.bytes);
    // Flatten the rope `repeat` built now, not inside the first timed read.
    body.charCodeAt(body.length >> 1);
    JSON.stringify(body).length;
    cache.set(uri, body);
  }
  const form = uri.startsWith("bench://text/") ? "text" : "blob";
  return { uri, mimeType: "text/plain", [form]: body };
}

for (const bytes of (values.prepare ?? "").split(",").filter((s) => s !== "")) contentsOf(`bench://blob/${bytes}`);

const server = new Server({ name: "bench-upstream", version: "1.0.0" }, { capabilities: { resources: {}, tools: {} } });

server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: Object.values(RESOURCES).map(({ uri, bytes }) => ({
    uri,
    name: uri,
    mimeType: "text/plain",
    size: bytes,
  })),
}));

server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
  const contents = contentsOf(request.params.uri);
  if (contents === null)
    throw new Error(
      `bench upstream: unknown resource ${request.params.uri} (expected bench://text/N or bench://blob/N)`,
    );
  return { contents: [contents] };
});

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "echo",
      description: "Returns its text argument",
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
    },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const text = typeof request.params.arguments?.text === "string" ? request.params.arguments.text : "";
  return { content: [{ type: "text", text }] };
});

await server.connect(new StdioServerTransport());
