/**
 * `limits.maxHostRequests`: a host asking without end of an upstream that never answers is
 * answered at once past the limit, so the proxy does not remember requests without bound.
 */
import { describe, expect, it } from "vitest";
import { FAULT_SERVER, initializedWs, serveConfig, toolText, waitForStderr } from "./helpers.js";

describe("limits.maxHostRequests", () => {
  it("answers a host's request past the limit at once with -32000 naming it, and forwards again once fewer wait", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { maxHostRequests: 3 },
    });
    try {
      const host = await initializedWs(serve.url, "fx");
      // Three calls that sleep past the test fill the limit.
      const sleeping = [1, 2].map((id) =>
        host.request(id, "tools/call", { name: "sleep", arguments: { ms: 60_000 } }, 30_000),
      );
      void sleeping.map((answer) => answer.catch(() => {}));
      const third = host.request(3, "tools/call", { name: "sleep", arguments: { ms: 60_000 } }, 30_000);
      void third.catch(() => {});
      const started = Date.now();
      const refused = await host.request(4, "tools/call", { name: "pid" }, 5_000);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(refused.error).toMatchObject({ code: -32000 });
      expect((refused.error as { message: string }).message).toMatch(
        /tools\/call not forwarded: too many requests waiting for the upstream: limits\.maxHostRequests \(3\)/,
      );
      // The log line is written with the answer; it reaches this process on another pipe, maybe later.
      expect(await waitForStderr(serve, /host has too many requests waiting for the upstream/)).toBeTruthy();

      // The host cancels one: the next request goes through.
      host.send(
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3, reason: "x" } }),
      );
      const answered = await host.request(5, "tools/call", { name: "pid" }, 10_000);
      expect(Number(toolText(answered))).toBeGreaterThan(0);
      await host.close();
    } finally {
      await serve.stop();
    }
  });
});
