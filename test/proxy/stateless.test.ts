/**
 * A host and a server speaking the stateless 2026-07-28 revision (no initialize, no session)
 * work through `serve`: the proxy neither blocks the unknown version nor demands a
 * handshake, and still normalizes the result.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startServe, type ServeProcess } from "../helpers/proxyProcess.js";
// @ts-expect-error -- a plain .mjs fixture without types
import { startStatelessServer } from "../fixtures/servers/stateless-server.mjs";

let upstream: { url: string; seen: Array<Record<string, unknown>>; close(): Promise<void> };
let serve: ServeProcess;

beforeAll(async () => {
  upstream = await startStatelessServer();
  serve = await startServe(["--name", "st", "--url", upstream.url]);
});
afterAll(async () => {
  await serve?.stop();
  await upstream?.close();
});

async function post(body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${serve.url}/mcp/st`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": (body as { method: string }).method,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const ct = res.headers.get("content-type") ?? "";
  const json = ct.includes("text/event-stream") ? JSON.parse(/^data: (.*)$/m.exec(text)![1]!) : JSON.parse(text);
  return { status: res.status, json };
}

it("a stateless resources/read passes through without initialize and comes back normalized", async () => {
  const { status, json } = await post({
    jsonrpc: "2.0",
    id: 1,
    method: "resources/read",
    params: { uri: "x://a.txt", _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
  });
  expect(status).toBe(200);
  expect(json).toEqual({
    jsonrpc: "2.0",
    id: 1,
    result: { contents: [{ uri: "x://a.txt", mimeType: "text/plain", text: "stateless x://a.txt" }] },
  });
  expect(upstream.seen.at(-1)).toMatchObject({ version: "2026-07-28", method: "resources/read" });
  expect(upstream.seen.every((s) => s.session === undefined)).toBe(true);
});

it("unknown result fields of the new revision (ttl) pass untouched, request after request", async () => {
  for (const id of [2, 3]) {
    const { json } = await post({ jsonrpc: "2.0", id, method: "tools/list", params: {} });
    expect(json).toEqual({
      jsonrpc: "2.0",
      id,
      result: { tools: [{ name: "noop", inputSchema: { type: "object" } }], ttl: 60 },
    });
  }
});
