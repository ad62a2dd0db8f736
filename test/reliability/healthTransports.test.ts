/**
 * `/healthz` names how each server is reached: `stdio` for a child, and for a `url` the
 * transport its entry uses — `streamable-http` (the default for http(s)), `sse`, `websocket`
 * (the default for ws(s)) — not one word for every remote.
 */
import { describe, expect, it } from "vitest";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import { getJson, serveConfig } from "./helpers.js";

describe("/healthz transports", () => {
  it("stdio, streamable-http, sse and websocket, as each entry has it", async () => {
    const serve = await serveConfig({
      mcpServers: {
        child: { command: process.execPath, args: [FIXTURE_SERVER] },
        http: { url: "http://127.0.0.1:9/mcp" },
        legacy: { url: "http://127.0.0.1:9/sse", transport: "sse" },
        socket: { url: "ws://127.0.0.1:9/ws" },
        named: { url: "http://127.0.0.1:9/ws", type: "websocket" },
      },
    });
    try {
      const { body } = await getJson(`${serve.url}/healthz`);
      const servers = body.servers as Record<string, { transport: string }>;
      expect(Object.fromEntries(Object.entries(servers).map(([name, health]) => [name, health.transport]))).toEqual({
        child: "stdio",
        http: "streamable-http",
        legacy: "sse",
        socket: "websocket",
        named: "websocket",
      });
    } finally {
      await serve.stop();
    }
  });
});
