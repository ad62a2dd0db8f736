/**
 * `limits.maxMessageContainers` on a real `serve`: a host's message of more objects and arrays
 * than the limit is refused before it is parsed (a message of millions of tiny containers holds
 * the proxy's one thread for seconds), over `/mcp` with 413 before any session opens and over
 * `/ws` with `-32600` to its id, the session going on; one at the limit is served.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, INIT, initializedWs, serveConfig } from "../reliability/helpers.js";

const LIMIT = 1000;
let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
    limits: { maxMessageContainers: LIMIT },
  });
});
afterAll(async () => {
  await serve?.stop();
});

/** Arrays nested `depth` deep: `depth` containers. */
const nested = (depth: number): unknown => JSON.parse("[".repeat(depth) + "]".repeat(depth));

/** An initialize of `total` containers: the message, params, capabilities, experimental, clientInfo and the rest nested. */
function initializeOf(total: number): string {
  const params = { ...INIT, capabilities: { experimental: { x: nested(total - 5) } } };
  return JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params });
}

function post(body: string): Promise<Response> {
  return fetch(`${serve.url}/mcp/fx`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body,
  });
}

describe("limits.maxMessageContainers", () => {
  it("/mcp: one container over the limit gets 413 naming it, no session; at the limit the session opens", async () => {
    const before = ((await (await fetch(`${serve.url}/healthz`)).json()) as { hostSessions?: number }).hostSessions;
    expect(before).toBeTypeOf("number");
    const over = await post(initializeOf(LIMIT + 1));
    expect(over.status).toBe(413);
    expect(await over.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: `Invalid Request: a body of more than limits.maxMessageContainers (${LIMIT}) objects and arrays; nothing of it was forwarded`,
      },
    });
    expect(((await (await fetch(`${serve.url}/healthz`)).json()) as { hostSessions?: number }).hostSessions).toBe(
      before,
    );
    const at = await post(initializeOf(LIMIT));
    expect(at.status).toBe(200);
    expect(at.headers.get("mcp-session-id")).toBeTruthy();
    await at.body?.cancel();
  });

  it("/ws: a request over the limit gets -32600 under its id and the session goes on", async () => {
    const host = await initializedWs(serve.url, "fx");
    try {
      // The message, params and the rest nested.
      host.send(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping", params: { x: nested(LIMIT - 1) } }));
      const refused = await host.answerTo(7, 10_000);
      expect(refused).toEqual({
        jsonrpc: "2.0",
        id: 7,
        error: {
          code: -32600,
          message: expect.stringMatching(
            /^Invalid Request: a message of more objects and arrays than limits\.maxMessageContainers \(\d+ bytes\); not forwarded$/,
          ),
        },
      });
      const served = await host.request(8, "ping", { x: nested(LIMIT - 2) }, 10_000);
      expect(served).toMatchObject({ jsonrpc: "2.0", id: 8, result: {} });
    } finally {
      await host.close();
    }
  });
});
