import { describe, expect, it } from "vitest";
import {
  createUpstreamTransport,
  SseUpstreamTransport,
  StdioUpstreamTransport,
  StreamableHttpUpstreamTransport,
  transportKindOf,
  WebSocketUpstreamTransport,
} from "../../../src/transports/upstream/index.js";
import { startStreamableHttpFixture } from "../../fixtures/upstream-servers/httpFixtures.js";
import { collect, INITIALIZE } from "./collect.js";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";

const LIMITS = { maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes };

describe("createUpstreamTransport (mcpServers entries)", () => {
  it("picks the transport from the entry", () => {
    expect(
      createUpstreamTransport({ command: "node", args: ["x.js"], env: { A: "1" }, cwd: "/" }, LIMITS),
    ).toBeInstanceOf(StdioUpstreamTransport);
    expect(createUpstreamTransport({ url: "http://127.0.0.1:9000/mcp" }, LIMITS)).toBeInstanceOf(
      StreamableHttpUpstreamTransport,
    );
    expect(createUpstreamTransport({ url: "https://example.com/mcp", transport: "sse" }, LIMITS)).toBeInstanceOf(
      SseUpstreamTransport,
    );
    expect(createUpstreamTransport({ url: "ws://127.0.0.1:9000/ws" }, LIMITS)).toBeInstanceOf(
      WebSocketUpstreamTransport,
    );
    expect(createUpstreamTransport({ url: "http://127.0.0.1:9000/ws", transport: "websocket" }, LIMITS)).toBeInstanceOf(
      WebSocketUpstreamTransport,
    );
    expect(transportKindOf({ url: "wss://h/x" })).toBe("websocket");
    expect(transportKindOf({ url: "https://h/x" })).toBe("streamable-http");
  });

  it("builds a working transport with the given headers", async () => {
    const fixture = await startStreamableHttpFixture();
    try {
      const transport = createUpstreamTransport(
        { url: fixture.url, headers: { "X-Api-Key": "k" } },
        { maxMessageBytes: 1024 * 1024 },
      );
      const got = collect(transport);
      await transport.start();
      await transport.send(INITIALIZE(1));
      await got.response(1);
      expect(fixture.requests.filter((r) => r.method === "POST").every((r) => r.headers["x-api-key"] === "k")).toBe(
        true,
      );
      await transport.close();
    } finally {
      await fixture.close();
    }
  });
});
