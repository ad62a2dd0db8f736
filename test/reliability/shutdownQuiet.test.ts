/**
 * A proxy and its upstream sidecar stopped together: the upstream goes away while the proxy
 * drains. What the upstream does then (a request cut, the GET stream gone, connections
 * refused) is expected and logged at debug only: after "shutting down" the operator's log has
 * no warning, and the server is not counted as failed. The host still gets an answer.
 */
import { describe, expect, it } from "vitest";
import { initializedWs, serveConfig, waitForStderr } from "./helpers.js";
import { startRemoteUpstream } from "../fixtures/upstream-servers/remoteUpstream.js";

describe("serve and its upstream stopped together", () => {
  it("no warning after SIGTERM while the upstream goes away mid-request; exit 0", async () => {
    const remote = await startRemoteUpstream();
    const serve = await serveConfig({ mcpServers: { remote: { url: remote.url } }, limits: { shutdownGraceMs: 5000 } });
    try {
      const host = await initializedWs(serve.url, "remote");
      const slow = host.request(1, "tools/call", { name: "slow", arguments: { ms: 3000 } }, 15_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const exited = new Promise<number | null>((resolve) => serve.child.once("exit", (code) => resolve(code)));
      serve.child.kill("SIGTERM");
      await waitForStderr(serve, /"msg":"shutting down"/);
      await remote.stop();
      const answer = await slow;
      expect(answer.error).toMatchObject({ code: -32001 });
      expect(await exited).toBe(0);
      const afterSignal = serve.stderr().slice(serve.stderr().indexOf('"msg":"shutting down"'));
      const warnings = afterSignal
        .split("\n")
        .filter((line) => line.includes('"level":"warn"') || line.includes('"level":"error"'));
      expect(warnings).toEqual([]);
      expect(afterSignal).toContain('"msg":"stopped"');
    } finally {
      await serve.stop();
      await remote.stop().catch(() => {});
    }
  });
});
