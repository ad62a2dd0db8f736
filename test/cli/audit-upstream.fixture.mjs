#!/usr/bin/env node
/**
 * A small real stdio MCP upstream for `audit` tests: its resource list spans two pages, and of
 * its resources one reads fine (text wrapped in base64), one answers a JSON-RPC error and one
 * answers a result without `contents`.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ListResourcesRequestSchema, ReadResourceRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "audit-fixture", version: "1.0.0" }, { capabilities: { resources: {} } });
const pages = [
  {
    resources: [
      { uri: "audit://ok.txt", name: "ok", size: 13 },
      { uri: "audit://gone", name: "gone" },
    ],
    nextCursor: "page-2",
  },
  { resources: [{ uri: "audit://empty", name: "empty" }] },
];
server.setRequestHandler(ListResourcesRequestSchema, async (request) =>
  request.params?.cursor === "page-2" ? pages[1] : pages[0],
);
server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
  switch (request.params.uri) {
    case "audit://ok.txt":
      return {
        contents: [
          { uri: "audit://ok.txt", mimeType: "text/plain", blob: Buffer.from("hello, audit\n").toString("base64") },
        ],
      };
    case "audit://gone":
      throw Object.assign(new Error("Resource gone: audit://gone"), { code: -32002 });
    default:
      return { nothing: true };
  }
});
await server.connect(new StdioServerTransport());
