/**
 * Hosts that end a streamable HTTP session by dropping it (no DELETE, as some do) must not lock
 * their client out until `limits.sessionIdleMs`: at `limits.maxSessionsPerClient`, a new session
 * takes the slot of the client's session idle the longest, once that one has been idle a tenth of
 * `sessionIdleMs`. A session with an open stream is never replaced; a replaced one gets 404.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, serveConfig, waitForStderr } from "../reliability/helpers.js";

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "leaky-host", version: "1" } },
};

describe("limits.maxSessionsPerClient with hosts that never send DELETE", () => {
  let serve: ServeProcess;
  let url: string;
  beforeAll(async () => {
    serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { maxSessionsPerClient: 2, sessionIdleMs: 10_000 },
    });
    url = `${serve.url}/mcp/fx`;
  });
  afterAll(async () => {
    await serve?.stop();
  });

  /** A session opened and left: its id, or the HTTP status it was refused with. */
  async function open(): Promise<{ status: number; session: string | null }> {
    const response = await fetch(url, { method: "POST", headers: HEADERS, body: JSON.stringify(INIT) });
    await response.text();
    return { status: response.status, session: response.headers.get("mcp-session-id") };
  }

  async function ping(session: string): Promise<number> {
    const response = await fetch(url, {
      method: "POST",
      headers: { ...HEADERS, "mcp-session-id": session },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }),
    });
    await response.text();
    return response.status;
  }

  it("a new session takes the slot of the one idle the longest, not of one with an open stream, nor of one idle briefly", async () => {
    const busy = await open();
    expect(busy.status).toBe(200);
    // Its host holds the GET stream open: never idle.
    const stream = new AbortController();
    const get = await fetch(url, {
      headers: { accept: "text/event-stream", "mcp-session-id": busy.session! },
      signal: stream.signal,
    });
    expect(get.status).toBe(200);
    try {
      const left = await open();
      expect(left.status).toBe(200);
      // Idle for less than a tenth of sessionIdleMs: the client is at its limit.
      expect((await open()).status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 1300));
      const next = await open();
      expect(next.status).toBe(200);
      expect(await ping(left.session!)).toBe(404);
      expect(await ping(busy.session!)).toBe(200);
      expect(await ping(next.session!)).toBe(200);
      await waitForStderr(
        serve,
        /"reason":"replaced: idle for \d+ s when its client opened a new session past limits\.maxSessionsPerClient \(2\)"/,
      );
      // Both held now: the busy one streams, the new one was just used.
      expect((await open()).status).toBe(503);
    } finally {
      stream.abort();
    }
  });
});

describe("limits.maxSessions with hosts that never send DELETE", () => {
  it("at the listener's limit too, a client's new session takes the slot of its own session idle the longest", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { maxSessions: 2, sessionIdleMs: 10_000 },
    });
    try {
      const url = `${serve.url}/mcp/fx`;
      const open = async () => {
        const response = await fetch(url, { method: "POST", headers: HEADERS, body: JSON.stringify(INIT) });
        await response.text();
        return { status: response.status, session: response.headers.get("mcp-session-id") };
      };
      const first = await open();
      expect((await open()).status).toBe(200);
      expect((await open()).status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 1300));
      expect((await open()).status).toBe(200);
      const ping = await fetch(url, {
        method: "POST",
        headers: { ...HEADERS, "mcp-session-id": first.session! },
        body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }),
      });
      await ping.text();
      expect(ping.status).toBe(404);
      await waitForStderr(
        serve,
        /replaced: idle for \d+ s when its client opened a new session past limits\.maxSessions \(2\)/,
      );
    } finally {
      await serve.stop();
    }
  });
});
