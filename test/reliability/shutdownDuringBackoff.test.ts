/**
 * SIGTERM while a host's session waits out the restart backoff of an upstream that keeps dying:
 * the host is answered with an error naming the shutdown, not left without an answer.
 */
import { describe, expect, it } from "vitest";
import { openLegacyStream, serveConfig } from "./helpers.js";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

describe("serve on SIGTERM, a session waiting to restart its upstream", () => {
  it("the waiting initialize gets -32001 naming the shutdown at once, and the proxy exits 0", async () => {
    const serve = await serveConfig({
      mcpServers: { dies: { command: process.execPath, args: ["-e", "process.exit(3)"] } },
      limits: { restartBackoffMs: 20_000, shutdownGraceMs: 10_000 },
    });
    const initialize = () =>
      fetch(`${serve.url}/mcp/dies`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(INITIALIZE),
        signal: AbortSignal.timeout(15_000),
      });
    // The first start fails: the next waits restartBackoffMs.
    expect(await (await initialize()).text()).toContain('"code":-32001');
    const waiting = initialize().then(
      async (response) => ({ status: response.status, body: await response.text() }),
      (error: unknown) => ({ status: 0, body: String(error) }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exited = new Promise<number | null>((resolve) => serve.child.once("exit", resolve));
    const sent = Date.now();
    serve.child.kill("SIGTERM");
    const answer = await waiting;
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body)).toMatchObject({ id: 1, error: { code: -32001 } });
    expect(answer.body).toContain("shutting down (SIGTERM)");
    expect(Date.now() - sent).toBeLessThan(3000);
    expect(await exited).toBe(0);
  });
});

describe("serve on SIGTERM, a legacy SSE session waiting to restart its upstream", () => {
  it("the initialize POSTed while it waits is answered on the stream with -32001 naming the shutdown", async () => {
    const serve = await serveConfig({
      mcpServers: { dies: { command: process.execPath, args: ["-e", "process.exit(3)"] } },
      limits: { restartBackoffMs: 20_000, shutdownGraceMs: 10_000 },
    });
    // The first start fails: the next waits restartBackoffMs.
    const first = await openLegacyStream(`${serve.url}/sse/dies`);
    await first.text;
    const stream = await openLegacyStream(`${serve.url}/sse/dies`);
    const endpoint = await stream.endpoint;
    const posted = await fetch(new URL(endpoint, serve.url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(INITIALIZE),
      signal: AbortSignal.timeout(15_000),
    });
    expect(posted.status).toBe(202);
    await posted.body?.cancel();
    // A second POST waits unread behind the first (the stream takes one body at a time, and none
    // before its upstream starts): it is told why too, not that its session is gone.
    const queued = fetch(new URL(endpoint, serve.url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }),
      signal: AbortSignal.timeout(15_000),
    }).then(async (response) => ({ status: response.status, body: await response.text() }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exited = new Promise<number | null>((resolve) => serve.child.once("exit", resolve));
    const sent = Date.now();
    serve.child.kill("SIGTERM");
    const text = await stream.text;
    const answers = [...text.matchAll(/event: message\ndata: (.+)\n/g)].map((m) => JSON.parse(m[1]!));
    expect(answers).toMatchObject([{ id: 1, error: { code: -32001 } }]);
    expect(answers[0].error.message).toContain("shutting down (SIGTERM)");
    const second = await queued;
    expect(second.status).toBe(502);
    expect(JSON.parse(second.body)).toMatchObject({ error: { code: -32001 } });
    expect(second.body).toContain("shutting down (SIGTERM)");
    expect(Date.now() - sent).toBeLessThan(3000);
    expect(await exited).toBe(0);
  });
});
