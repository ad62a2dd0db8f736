/**
 * A `/mcp` host ends its session (DELETE) while its JSON POSTs still wait: each gets an error under
 * its own id — as written, for an id past 2^53 — and a batch keeps the answers it already had.
 * The session ending just after its POSTs were answered (its upstream died) ends its streams.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, serveConfig, waitForStderr } from "./helpers.js";

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({ mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } } });
});
afterAll(async () => {
  await serve?.stop();
});

const JSON_ONLY = { "content-type": "application/json", accept: "application/json" };

async function session(): Promise<string> {
  const response = await fetch(`${serve.url}/mcp/fx`, {
    method: "POST",
    headers: { ...JSON_ONLY, accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  });
  await response.text();
  const id = response.headers.get("mcp-session-id")!;
  await fetch(`${serve.url}/mcp/fx`, {
    method: "POST",
    headers: { ...JSON_ONLY, "mcp-session-id": id, "mcp-protocol-version": "2025-03-26" },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  return id;
}

const sleep = (id: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"sleep","arguments":{"ms":20000}}}`;
const pid = (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"pid"}}`;

describe("DELETE of a /mcp session with JSON POSTs still waiting", () => {
  it("each waiting POST gets -32001 under its own id; a batch keeps what was already answered", async () => {
    const id = await session();
    const headers = { ...JSON_ONLY, "mcp-session-id": id, "mcp-protocol-version": "2025-03-26" };
    const post = (body: string) =>
      fetch(`${serve.url}/mcp/fx`, { method: "POST", headers, body, signal: AbortSignal.timeout(10_000) }).then(
        async (response) => response.text(),
      );
    const single = post(sleep("12345678901234567891"));
    const batch = post(`[${pid('"p"')},${sleep('"s"')}]`);
    await waitForStderr(serve, /fault: sleeping/);
    // The batch's call reaches the upstream right after the single one (the line is logged once).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const ended = await fetch(`${serve.url}/mcp/fx`, { method: "DELETE", headers });
    expect(ended.status).toBeLessThan(300);
    const singleText = await single;
    expect(singleText).toContain('"id":12345678901234567891');
    expect(JSON.parse(singleText)).toMatchObject({ error: { code: -32001 } });
    const answers = JSON.parse(await batch) as Array<{ id: string; result?: unknown; error?: { code: number } }>;
    expect(answers.map((a) => a.id)).toEqual(["p", "s"]);
    expect(answers[0]!.result).toBeDefined();
    expect(answers[1]!.error?.code).toBe(-32001);
  });
});

describe("a /mcp session whose upstream dies with JSON POSTs waiting and its GET stream open", () => {
  it("each POST gets -32001, the GET stream ends, and nothing is written twice", async () => {
    const id = await session();
    const headers = { ...JSON_ONLY, "mcp-session-id": id, "mcp-protocol-version": "2025-03-26" };
    const stream = await fetch(`${serve.url}/mcp/fx`, {
      headers: { ...headers, accept: "text/event-stream" },
      signal: AbortSignal.timeout(10_000),
    });
    const streamEnded = stream.text().then(
      () => "ended",
      (error: unknown) => `not ended: ${String(error)}`,
    );
    const post = (body: string) =>
      fetch(`${serve.url}/mcp/fx`, { method: "POST", headers, body, signal: AbortSignal.timeout(10_000) }).then(
        async (response) => response.text(),
      );
    const sleeping = post(sleep("5"));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const crashed = await post(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"crash"}}`);
    expect(JSON.parse(crashed)).toMatchObject({ id: 6, error: { code: -32001 } });
    expect(JSON.parse(await sleeping)).toMatchObject({ id: 5, error: { code: -32001 } });
    expect(await streamEnded).toBe("ended");
    expect(serve.stderr()).not.toContain("Cannot write headers");
  });
});
