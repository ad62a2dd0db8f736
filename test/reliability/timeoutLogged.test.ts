/**
 * A request the upstream does not answer within `limits.requestTimeoutMs` is answered with
 * `-32002` and logged, naming the method: the operator sees the upstream hang, not only the host.
 */
import { describe, expect, it } from "vitest";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import { INITIALIZE_PARAMS } from "../helpers/rawStdio.js";
import { STATELESS_HEADERS } from "../helpers/statelessHeaders.js";
import { serveConfig, waitForStderr } from "./helpers.js";

const SLEEP = {
  jsonrpc: "2.0",
  id: 7,
  method: "tools/call",
  params: { name: "sleep", arguments: { ms: 20_000 } },
};

describe("a request past limits.requestTimeoutMs", () => {
  it("is answered -32002 and logged, for a session's upstream and a stateless host's pooled one", async () => {
    const serve = await serveConfig({
      mcpServers: { slow: { command: process.execPath, args: [FIXTURE_SERVER] } },
      // Long enough for the upstream's own start (initialize is bound by it too) on a busy machine.
      limits: { requestTimeoutMs: 3000 },
    });
    try {
      // A stateless host: its POST goes to the pool's upstream.
      const stateless = await fetch(`${serve.url}/mcp/slow`, {
        method: "POST",
        headers: STATELESS_HEADERS,
        body: JSON.stringify(SLEEP),
        signal: AbortSignal.timeout(10_000),
      });
      expect(await stateless.text()).toContain('"code":-32002');
      const pooled = await waitForStderr(serve, /\{[^\n]*"msg":"pooled upstream did not answer a request within[^\n]*/);
      expect(pooled).toContain('"method":"tools/call"');
      // A session's upstream (the bridge every host transport shares), here behind /mcp.
      const init = await fetch(`${serve.url}/mcp/slow`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE_PARAMS }),
        signal: AbortSignal.timeout(10_000),
      });
      const session = init.headers.get("mcp-session-id")!;
      await init.text();
      const called = await fetch(`${serve.url}/mcp/slow`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": session,
          "mcp-protocol-version": "2025-06-18",
        },
        body: JSON.stringify(SLEEP),
        signal: AbortSignal.timeout(10_000),
      });
      expect(await called.text()).toContain('"code":-32002');
      const line = await waitForStderr(serve, /\{[^\n]*"msg":"upstream did not answer a request within[^\n]*/);
      expect(line).toContain('"method":"tools/call"');
      expect(line).toContain('"level":"warn"');
      expect(line).toContain('"server":"slow"');
    } finally {
      serve.child.kill("SIGKILL");
    }
  });
});
