/**
 * A WebSocket host whose upstream cannot be reached: the session is refused, and the host's
 * first request — sent as the connection opened, arriving after the refusal — still gets the
 * cause as a `-32001` error before the connection closes with 1011 and a reason that keeps the
 * cause (its end), however long the upstream's URL.
 */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { sleep } from "../helpers/polling.js";
import { rawWs, serveConfig } from "./helpers.js";

/** A port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("a WebSocket host of an upstream that cannot be reached", () => {
  it("gets its initialize, sent after the refusal, answered with the cause; then 1011 naming it", async () => {
    const port = await closedPort();
    const longPath = `/mcp/${"segment/".repeat(12)}end`;
    const serve = await serveConfig({ mcpServers: { up: { url: `ws://127.0.0.1:${port}${longPath}` } } });
    try {
      const host = await rawWs(serve.url, "up");
      let reason = "";
      host.ws.once("close", (_code, why) => {
        reason = why.toString();
      });
      // The refusal has come by now: the request arrives after it, as a slow client's would.
      await sleep(300);
      const answer = await host.request(1, "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      });
      expect(answer.error).toMatchObject({ code: -32001 });
      expect((answer.error as { message: string }).message).toContain("ECONNREFUSED");
      expect(await host.closed).toBe(1011);
      expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(123);
      expect(reason).toMatch(/^Could not connect server "up"/);
      expect(reason).toContain("ECONNREFUSED");
    } finally {
      await serve.stop();
    }
  });
});
