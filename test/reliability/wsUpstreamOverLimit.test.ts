/**
 * A WebSocket upstream's message over `limits.maxMessageBytes` ends that connection (1009) and
 * the session: the host's waiting call is told so by the limit's name — what to raise — not by
 * the WebSocket library's words.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fixture, startWebSocketFixture } from "../fixtures/upstream-servers/httpFixtures.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { initializedWs, serveConfig } from "./helpers.js";

describe("a WebSocket upstream's answer over limits.maxMessageBytes", () => {
  let upstream: Fixture;
  let serve: ServeProcess;
  beforeAll(async () => {
    upstream = await startWebSocketFixture();
    serve = await serveConfig({
      mcpServers: { up: { url: `${upstream.url}/ws` } },
      limits: { maxMessageBytes: 100_000 },
    });
  });
  afterAll(async () => {
    await serve?.stop();
    await upstream?.close();
  });

  it("answers the waiting call -32001 naming the limit and its size", async () => {
    const host = await initializedWs(serve.url, "up");
    const answer = await host.request(2, "tools/call", { name: "big", arguments: { bytes: 150_000 } });
    expect(answer.error).toMatchObject({ code: -32001 });
    const message = (answer.error as { message: string }).message;
    expect(message).toContain("over limits.maxMessageBytes (100000 bytes)");
    expect(message).not.toContain("Max payload size exceeded");
    await host.close();
  });
});
