/**
 * A stateless host (protocol 2026-07-28, no session) that posts a batch of requests with large
 * answers and never reads: once cut off (behind for `limits.statelessHoldMs`) with more than
 * `limits.hostBufferBytes` still waiting for it, its POST is ended and its requests cancelled —
 * the pooled upstream's answers are not all held in the proxy for a host that takes nothing. The
 * fixture server over stdio answers each call with 4 MiB; the host is a raw socket that never
 * reads; the proxy's memory is read from /proc while it waits.
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import { serveConfig, waitForStderr } from "./helpers.js";

const rssMiB = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

describe("a stateless host that never reads", () => {
  it("has its POST ended once it is cut off and more waits for it; the proxy does not hold every answer", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FIXTURE_SERVER] } },
      limits: { statelessHoldMs: 500 },
    });
    try {
      const pid = serve.child.pid!;
      const before = rssMiB(pid);
      const { port, hostname } = new URL(serve.url);
      const batch = JSON.stringify(
        Array.from({ length: 40 }, (_, i) => ({
          jsonrpc: "2.0",
          id: i + 1,
          method: "tools/call",
          params: { name: "big", arguments: { mib: 4 } },
        })),
      );
      const socket = connect(Number(port), hostname);
      socket.pause();
      socket.on("error", () => {});
      socket.write(
        `POST /mcp/fx HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
          "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n" +
          `Content-Length: ${Buffer.byteLength(batch)}\r\n\r\n${batch}`,
      );
      await waitForStderr(serve, /stateless host took nothing of what was sent to it: its POST is ended/, 30_000);
      // 40 answers of 4 MiB (base64: ~5.3 MiB each) held would be over 200 MiB.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(rssMiB(pid) - before).toBeLessThan(120);
      // The pool serves the next client.
      const answer = await fetch(`${serve.url}/mcp/fx`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "echo", arguments: { text: "next" } },
        }),
      });
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain("next");
      socket.destroy();
    } finally {
      await serve.stop();
    }
  }, 60_000);
});
