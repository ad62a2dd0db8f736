/**
 * A streamable HTTP host's `MCP-Protocol-Version` header that is no protocol version, or a past
 * date that was never one, gets 400 (as the spec wants of a server) on POST, GET and DELETE, in
 * front of a stdio server that never sees the header; nothing of it is sent on, and the session
 * goes on. An `initialize` is served whatever the header says, and a later date (a revision newer
 * than the proxy's SDK) goes on to the server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig } from "../reliability/helpers.js";

const HEADERS = { "content-type": "application/json", accept: "application/json" };
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

let serve: ServeProcess;
let url: string;
beforeAll(async () => {
  serve = await serveConfig({ mcpServers: { sdk: { command: process.execPath, args: [FIXTURE_SERVER] } } });
  url = `${serve.url}/mcp/sdk`;
});
afterAll(async () => {
  await serve?.stop();
});

async function session(initializeVersion?: string): Promise<Record<string, string>> {
  const headers = initializeVersion === undefined ? HEADERS : { ...HEADERS, "mcp-protocol-version": initializeVersion };
  const init = await fetch(url, { method: "POST", headers, body: JSON.stringify(INITIALIZE) });
  expect(init.status).toBe(200);
  expect(await init.json()).toHaveProperty("result.protocolVersion", "2025-06-18");
  const inSession = { ...HEADERS, "mcp-session-id": init.headers.get("mcp-session-id")! };
  const initialized = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
  expect((await fetch(url, { method: "POST", headers: inSession, body: initialized })).status).toBe(202);
  return inSession;
}

function ping(headers: Record<string, string>, id: number): Promise<Response> {
  return fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }) });
}

describe("the MCP-Protocol-Version header", () => {
  it.each([
    ["not-a-version", /is not a protocol version \(YYYY-MM-DD\)/],
    ["1900-01-01", /unsupported protocol version 1900-01-01 in MCP-Protocol-Version \(supported: 2025-11-25, /],
    ["2025-01-01", /unsupported protocol version 2025-01-01/],
  ])("%s: a POST, a GET and a DELETE get 400 naming it; the session goes on", async (version, why) => {
    const inSession = await session();
    const bad = { ...inSession, "mcp-protocol-version": version };
    const post = await ping(bad, 2);
    expect(post.status).toBe(400);
    // Under the request's own id: a client matching answers by id finds it.
    expect(await post.json()).toMatchObject({ jsonrpc: "2.0", id: 2, error: { code: -32000, message: why } });
    const get = await fetch(url, { headers: { ...bad, accept: "text/event-stream" } });
    expect(get.status).toBe(400);
    expect(((await get.json()) as { error: { message: string } }).error.message).toMatch(why);
    const del = await fetch(url, { method: "DELETE", headers: bad });
    expect(del.status).toBe(400);
    await del.text();
    // Not ended by the refused DELETE, and the refused ping reached no one.
    const next = await ping({ ...inSession, "mcp-protocol-version": "2025-06-18" }, 3);
    expect(next.status).toBe(200);
    expect(await next.json()).toEqual({ jsonrpc: "2.0", id: 3, result: {} });
  });

  it("an initialize is served whatever the header says, and a date past every known revision goes on", async () => {
    const inSession = await session("not-a-version");
    const later = await ping({ ...inSession, "mcp-protocol-version": "2099-01-01" }, 2);
    expect(later.status).toBe(200);
    expect(await later.json()).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    for (const version of ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]) {
      const known = await ping({ ...inSession, "mcp-protocol-version": version }, 3);
      expect(known.status, version).toBe(200);
      await known.text();
    }
  });
});
