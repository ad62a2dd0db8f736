/**
 * A streamable HTTP session whose opening `initialize` failed, or whose host went away before
 * the answer (it never learned the session id), is ended at once: its slot is freed and its
 * upstream child stopped, instead of both being held until `limits.sessionIdleMs`. A host that
 * retries is never locked out by its own failed attempts.
 */
import { connect as netConnect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post, rpc } from "../badInput/mcpHttp.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { join } from "node:path";
import { tempDir } from "../helpers/tempDir.js";
import { getJson, serveConfig } from "./helpers.js";

/** A stdio upstream that answers `initialize` with an error, or slowly, as UPSTREAM_INIT says. */
const UPSTREAM = `
const mode = process.env.UPSTREAM_INIT;
// "flaky": the first one started dies at once (the next waits out limits.restartBackoffMs).
const fs = require("node:fs");
if (mode === "flaky" && !fs.existsSync(process.env.UPSTREAM_MARK)) {
  fs.writeFileSync(process.env.UPSTREAM_MARK, "died");
  process.exit(3);
}
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  const write = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id, ...m }) + "\\n");
  if (msg.method !== "initialize") return write({ result: {} });
  if (mode === "error") return write({ error: { code: -32603, message: "not today" } });
  const result = { protocolVersion: msg.params.protocolVersion, capabilities: {}, serverInfo: { name: "slow", version: "1" } };
  setTimeout(() => write({ result }), 400);
});
`;
const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "retrying-host", version: "1" } };
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let serve: ServeProcess;
beforeAll(async () => {
  const mark = join(tempDir("mcpn-unopened-"), "died");
  const server = (mode: string): Record<string, unknown> => ({
    command: process.execPath,
    args: ["-e", UPSTREAM],
    env: { UPSTREAM_INIT: mode, UPSTREAM_MARK: mark },
  });
  serve = await serveConfig({
    mcpServers: { failing: server("error"), slow: server("slow"), flaky: server("flaky") },
    limits: { maxSessionsPerClient: 2, restartBackoffMs: 1500 },
  });
});
afterAll(async () => {
  await serve?.stop();
});

async function sessions(name: string): Promise<number> {
  const health = (await getJson(`${serve.url}/healthz`)).body as { servers: Record<string, { sessions: number }> };
  return health.servers[name]?.sessions ?? -1;
}

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await sleep(50);
  }
  return check();
}

describe("a session that never started for its host", () => {
  it("is ended when its initialize is answered with an error: the host can try again, past the per-client limit", async () => {
    const url = `${serve.url}/mcp/failing`;
    for (let attempt = 0; attempt < 4; attempt++) {
      const answer = await post(url, rpc(1, "initialize", INIT));
      expect(answer.status, `attempt ${attempt}`).toBe(200);
      expect(answer.messages[0]).toMatchObject({ id: 1, error: { message: "not today" } });
      const id = answer.headers.get("mcp-session-id");
      if (id !== null) {
        expect(await until(async () => (await post(url, rpc(2, "ping"), id)).status === 404, 3000)).toBe(true);
      }
    }
    expect(await until(async () => (await sessions("failing")) === 0, 3000)).toBe(true);
  });

  /** POSTs an initialize to /mcp/NAME on a raw socket and drops the connection `afterMs` later. */
  async function initializeAndLeave(name: string, afterMs: number): Promise<void> {
    const { port } = new URL(serve.url);
    const body = rpc(1, "initialize", INIT);
    const socket = netConnect(Number(port), "127.0.0.1", () =>
      socket.write(
        `POST /mcp/${name} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      ),
    );
    socket.on("error", () => {});
    await sleep(afterMs);
    socket.destroy();
  }

  it("is ended when its host went away before the initialize answer", async () => {
    for (let attempt = 0; attempt < 3; attempt++) await initializeAndLeave("slow", 100);
    expect(await until(async () => (await sessions("slow")) === 0, 5000)).toBe(true);
    const again = await post(`${serve.url}/mcp/slow`, rpc(1, "initialize", INIT));
    expect(again.status).toBe(200);
    expect(again.messages[0]).toMatchObject({ id: 1, result: { serverInfo: { name: "slow" } } });
  });

  it("is ended when its host went away while the session was still being opened (a restart back-off)", async () => {
    // The first upstream dies at once: the next session waits limits.restartBackoffMs before its own.
    const died = await post(`${serve.url}/mcp/flaky`, rpc(1, "initialize", INIT));
    expect(died.status).toBeGreaterThanOrEqual(200);
    await initializeAndLeave("flaky", 200);
    await sleep(2500);
    expect(await until(async () => (await sessions("flaky")) === 0, 5000)).toBe(true);
  });
});
