/**
 * A stateless host (protocol 2026-07-28, no session) that asks to subscribe to a resource: the
 * pool's upstreams are shared between clients, and a stateless POST's exchange ends with its
 * answer, so the updates could reach only another client's POST; a log level set on a shared
 * upstream would be every client's. Such requests are refused here, named, and never reach it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVERYTHING_SERVER } from "../helpers/paths.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig } from "../reliability/helpers.js";

describe("resources/subscribe and logging/setLevel without a session", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await serveConfig({
      mcpServers: { ev: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] } },
    });
  });
  afterAll(async () => {
    await serve?.stop();
  });

  const post = async (body: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${serve.url}/mcp/ev`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", "mcp-protocol-version": "2026-07-28" },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Record<string, unknown>;
  };

  it.each(["resources/subscribe", "resources/unsubscribe", "logging/setLevel"])(
    "%s is refused with -32601 naming the session it needs",
    async (method) => {
      const answer = await post({
        jsonrpc: "2.0",
        id: 3,
        method,
        params: { uri: "demo://resource/static/document/architecture.md", level: "debug" },
      });
      expect(answer.id).toBe(3);
      expect(answer.error).toMatchObject({ code: -32601 });
      expect((answer.error as { message: string }).message).toMatch(/needs a session/);
    },
  );

  it("other requests of the same host are served", async () => {
    const answer = await post({ jsonrpc: "2.0", id: 4, method: "resources/list", params: {} });
    expect(answer.result).toHaveProperty("resources");
  });
});
