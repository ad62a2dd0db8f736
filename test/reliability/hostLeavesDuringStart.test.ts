/**
 * A host that leaves while its session's upstream is still being opened (a WebSocket upstream
 * slow to accept) has not seen the upstream fail: the server stays up on `/healthz` with no
 * failure counted, and the session is let go (its count back to zero), as a host that leaves
 * later is.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type Fixture, startWebSocketFixture } from "../fixtures/upstream-servers/httpFixtures.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { sleep } from "../helpers/polling.js";
import { getJson, initializedWs, serveConfig, toolText } from "./helpers.js";

interface ServerHealth {
  status: string;
  sessions: number;
  upstreamFailures: number;
  consecutiveFailures: number;
}

describe("a host that leaves while its WebSocket upstream opens", () => {
  let upstream: Fixture;
  let serve: ServeProcess & { configFile: string };
  beforeAll(async () => {
    upstream = await startWebSocketFixture({ handshakeDelayMs: 400 });
    serve = await serveConfig({ mcpServers: { up: { url: `${upstream.url}/ws` } } });
  });
  afterAll(async () => {
    await serve?.stop();
    await upstream?.close();
  });

  const health = async (): Promise<ServerHealth & { hostSessions: number }> => {
    const { body } = await getJson(`${serve.url}/healthz`);
    return { ...(body.servers as Record<string, ServerHealth>).up!, hostSessions: body.hostSessions as number };
  };

  it("is no failure of the upstream, and its session is let go", async () => {
    for (let i = 0; i < 6; i++) {
      const socket = new WebSocket(`${serve.url.replace(/^http/, "ws")}/ws/up`, "mcp");
      await new Promise<void>((resolve, reject) => {
        socket.once("open", () => resolve());
        socket.once("error", reject);
      });
      socket.terminate();
    }
    // Every upstream handshake those sessions began has ended (accepted, then let go).
    const deadline = Date.now() + 10_000;
    let after = await health();
    while (after.sessions !== 0 && Date.now() < deadline) {
      await sleep(100);
      after = await health();
    }
    expect(after).toMatchObject({ upstreamFailures: 0, consecutiveFailures: 0, sessions: 0, hostSessions: 0 });
    expect(after.status).not.toBe("down");
    // And the next host is served at once (no restart backoff held it).
    const started = Date.now();
    const host = await initializedWs(serve.url, "up");
    try {
      const answer = await host.request(2, "tools/call", { name: "echo", arguments: { text: "still here" } });
      expect(toolText(answer)).toContain("still here");
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await host.close();
    }
    expect((await health()).upstreamFailures).toBe(0);
  });
});
