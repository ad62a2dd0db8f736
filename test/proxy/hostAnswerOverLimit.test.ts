/**
 * A host's answer to a request of the upstream's (sampling) that is over `limits.maxMessageBytes`
 * is refused (413 to its POST) and never forwarded; the upstream is told at once, with `-32003`,
 * rather than left waiting for an answer that will not come — so the tool call that asked finishes
 * with that error. Real SDK hosts over `/mcp` and `/sse`, a real SDK upstream over stdio.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallToolResultSchema, CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { connect, hostTransport, type ServeProcess } from "../helpers/proxyProcess.js";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import { serveConfig } from "../reliability/helpers.js";

const LIMIT = 4000;
let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { fx: { command: process.execPath, args: [FIXTURE_SERVER] } },
    limits: { maxMessageBytes: LIMIT },
  });
});
afterAll(async () => {
  await serve?.stop();
});

describe("a host's answer over limits.maxMessageBytes", () => {
  // The second size is past what is read of a refused body (the limit and 8 MiB more): its
  // connection is cut before its end, and the upstream is told all the same.
  it.each([
    ["mcp", LIMIT * 2],
    ["sse", LIMIT * 2],
    ["mcp", 9 * 1024 * 1024],
    ["sse", 9 * 1024 * 1024],
  ] as const)(
    "over /%s, %i bytes: the upstream's request gets -32003 at once",
    async (kind, size) => {
      const host = await connect(hostTransport(kind, { url: serve.url, name: "fx" }), {
        capabilities: { sampling: {} },
      });
      try {
        host.client.setRequestHandler(CreateMessageRequestSchema, async () => ({
          role: "assistant",
          model: "test-model",
          content: { type: "text", text: "a".repeat(size) },
        }));
        const started = Date.now();
        const call = host.client.request(
          { method: "tools/call", params: { name: "sample", arguments: {} } },
          CallToolResultSchema,
          { timeout: 20_000 },
        );
        const outcome = await call.then(
          (result) => JSON.stringify(result),
          (error: unknown) => String(error),
        );
        expect(outcome).toMatch(/the host's answer of \d+ bytes is over limits\.maxMessageBytes/);
        // Not the upstream's own wait for the answer (60 s), nor the host's.
        expect(Date.now() - started).toBeLessThan(10_000);
      } finally {
        await host.close();
      }
    },
    30_000,
  );
});
