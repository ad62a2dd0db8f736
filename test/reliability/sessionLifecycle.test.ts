/**
 * Sessions the host left behind are ended: a streamable HTTP session with no request and no
 * open stream for `limits.sessionIdleMs` (its upstream child ends, its slot is freed, its next
 * request gets 404), and a WebSocket host that stopped answering pings (half-open) within
 * `limits.pingIntervalMs`. Sessions in use — a stream open, pongs coming — are kept.
 */
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post, rpc } from "../badInput/mcpHttp.js";
import { connect, hostTransport, raw, type ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, getJson, initializedWs, serveConfig, toolText, untilGone, waitForStderr } from "./helpers.js";

const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "idle-host", version: "1" } };

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
    limits: { sessionIdleMs: 1500, pingIntervalMs: 500 },
  });
});
afterAll(async () => {
  await serve?.stop();
});

async function sessions(): Promise<number> {
  const health = (await getJson(`${serve.url}/healthz`)).body as {
    servers: Record<string, { sessions: number }>;
    hostSessions: number;
  };
  return health.servers.fx!.sessions;
}

describe("limits.sessionIdleMs", () => {
  it("a streamable HTTP session with no request and no open stream is ended: child gone, slot freed, next request 404, logged", async () => {
    const url = `${serve.url}/mcp/fx`;
    const init = await post(url, rpc(0, "initialize", INIT));
    const session = init.headers.get("mcp-session-id")!;
    expect(session).toBeTruthy();
    await post(url, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), session);
    const pid = Number(toolText((await post(url, rpc(1, "tools/call", { name: "pid" }), session)).messages[0]!));
    expect(pid).toBeGreaterThan(0);
    // Requests keep it alive.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await post(url, rpc(2, "ping"), session)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await post(url, rpc(3, "ping"), session)).status).toBe(200);

    await waitForStderr(
      serve,
      /"reason":"no request and no open stream for 1500 ms \(limits\.sessionIdleMs\)".*"msg":"session reaped"/,
      10_000,
    );
    expect(await untilGone(pid)).toBe(true);
    const after = await post(url, rpc(4, "ping"), session);
    expect(after.status).toBe(404);
    expect(await sessions()).toBe(0);
  });

  it("a session whose host keeps a stream open (an SDK client's GET stream) is kept past the idle time", async () => {
    const host = await connect(hostTransport("mcp", { url: serve.url, name: "fx" }));
    const pid = Number(
      ((await raw(host.client, "tools/call", { name: "pid" })).content as Array<{ text: string }>)[0]!.text,
    );
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(
      Number(((await raw(host.client, "tools/call", { name: "pid" })).content as Array<{ text: string }>)[0]!.text),
    ).toBe(pid);
    await host.close();
  });
});

describe("limits.pingIntervalMs", () => {
  it("a WebSocket host that answers pings stays; one that stops reading (half-open) is dropped, its child ended, logged", async () => {
    const healthy = await initializedWs(serve.url, "fx");
    const stuck = await initializedWs(serve.url, "fx");
    const stuckPid = Number(toolText(await stuck.request(1, "tools/call", { name: "pid" })));
    // The stuck host reads nothing more: pings reach its socket, no pong goes back.
    (stuck.ws as unknown as { _socket: Socket })._socket.pause();
    await waitForStderr(
      serve,
      /"reason":"no answer to a WebSocket ping within 500 ms \(limits\.pingIntervalMs\)".*"msg":"session reaped"/,
      10_000,
    );
    expect(await untilGone(stuckPid)).toBe(true);
    // The healthy one answered every ping meanwhile and is still served.
    expect(Number(toolText(await healthy.request(1, "tools/call", { name: "pid" })))).toBeGreaterThan(0);
    await healthy.close();
    stuck.ws.terminate();
  });
});
