/**
 * A streamable HTTP host's `MCP-Protocol-Version` header goes to the upstream with its request;
 * one the server refuses fails that request only — later requests without the header carry the
 * version the session negotiated, as going direct.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { startAskingServer, type AskingServer } from "../fixtures/upstream-servers/askingServer.js";

const BASE_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe("a host's MCP-Protocol-Version header", () => {
  let upstream: AskingServer;
  let serve: ServeProcess;
  beforeAll(async () => {
    upstream = await startAskingServer();
    serve = await startServe(["--name", "asking", "--url", upstream.url]);
  });
  afterAll(async () => {
    await serve?.stop();
    await upstream?.close();
  });

  it("one the server refuses fails that request only, and does not stick to the session's later requests", async () => {
    const url = `${serve.url}/mcp/asking`;
    const send = async (body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(url, {
        method: "POST",
        headers: { ...BASE_HEADERS, ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      return { response, text: await response.text() };
    };
    const init = await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    const session = init.response.headers.get("mcp-session-id")!;
    expect(session).toBeTruthy();
    const inSession = { "mcp-session-id": session };
    expect((await send({ jsonrpc: "2.0", method: "notifications/initialized" }, inSession)).response.status).toBe(202);
    const refused = await send(
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { ...inSession, "mcp-protocol-version": "garbage" },
    );
    expect(refused.text).toMatch(/garbage/);
    const later = await send({ jsonrpc: "2.0", id: 3, method: "tools/list" }, inSession);
    expect(later.text).toContain('"tools"');
    expect(later.text).not.toMatch(/garbage/);
  });
});
