/**
 * `limits.maxMessageNodes` on a real `serve`: a host's message of more objects, arrays, members and
 * elements than the limit is refused before it is parsed (millions of tiny values, or objects of
 * ever new shapes, hold the proxy's one thread for seconds), over `/mcp` with 413 under the
 * request's id before any session opens and over `/ws` with `-32003` under its id (`method` after
 * `params` too), the session going on; one at the limit is served.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodesOf } from "../helpers/jsonNodes.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, INIT, initializedWs, serveConfig, waitForStderr } from "../reliability/helpers.js";

const LIMIT = 1000;
let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
    limits: { maxMessageNodes: LIMIT },
  });
});
afterAll(async () => {
  await serve?.stop();
});

/** Arrays nested `depth` deep: `depth` nodes. */
const nested = (depth: number): unknown => JSON.parse("[".repeat(depth) + "]".repeat(depth));

/** `message` with `params.x` filled so that it holds `total` nodes in all (`method` last when asked). */
function withNodes(message: { params: Record<string, unknown> } & Record<string, unknown>, total: number): string {
  const base = nodesOf({ ...message, params: { ...message.params, x: null } });
  return JSON.stringify({ ...message, params: { ...message.params, x: nested(total - base) } });
}

const initializeOf = (total: number): string =>
  withNodes({ jsonrpc: "2.0", id: 1, method: "initialize", params: { ...INIT } }, total);

function post(body: string): Promise<Response> {
  return fetch(`${serve.url}/mcp/fx`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body,
  });
}

describe("limits.maxMessageNodes", () => {
  it("/mcp: one node over the limit gets 413 under its id, naming the limit, no session; at the limit the session opens", async () => {
    const before = ((await (await fetch(`${serve.url}/healthz`)).json()) as { hostSessions?: number }).hostSessions;
    expect(before).toBeTypeOf("number");
    const over = await post(initializeOf(LIMIT + 1));
    expect(over.status).toBe(413);
    expect(await over.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32003,
        message: `Message too large: more than limits.maxMessageNodes (${LIMIT}) objects, arrays, members and elements in one body; nothing of it was forwarded`,
      },
    });
    expect(((await (await fetch(`${serve.url}/healthz`)).json()) as { hostSessions?: number }).hostSessions).toBe(
      before,
    );
    // The operator is told too.
    await waitForStderr(serve, /"kind":"too-complex".*"server":"fx".*"msg":"host sent a body that could not be read"/);
    const at = await post(initializeOf(LIMIT));
    expect(at.status).toBe(200);
    expect(at.headers.get("mcp-session-id")).toBeTruthy();
    await at.body?.cancel();
  });

  it("/ws: a request over the limit gets -32003 under its id and the session goes on", async () => {
    const host = await initializedWs(serve.url, "fx");
    try {
      // `method` after `params`: still a request, answered under its id.
      host.send(`{"jsonrpc":"2.0","id":7,"params":${JSON.stringify({ x: nested(LIMIT) })},"method":"ping"}`);
      const refused = await host.answerTo(7, 10_000);
      expect(refused).toEqual({
        jsonrpc: "2.0",
        id: 7,
        error: {
          code: -32003,
          message: expect.stringMatching(
            new RegExp(
              `^Message too large: more than limits\\.maxMessageNodes \\(${LIMIT}\\) objects, arrays, members and elements in one message of \\d+ bytes; not forwarded$`,
            ),
          ),
        },
      });
      const served = await host.request(
        8,
        "ping",
        JSON.parse(withNodes({ jsonrpc: "2.0", id: 8, method: "ping", params: {} }, LIMIT)).params,
        10_000,
      );
      expect(served).toMatchObject({ jsonrpc: "2.0", id: 8, result: {} });
    } finally {
      await host.close();
    }
  });

  it("/ws: its -32003 carries the id as the host wrote it (an integer past 2^53 parses rounded)", async () => {
    const host = await initializedWs(serve.url, "fx");
    try {
      const refusal = new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no -32003 within 10 s")), 10_000);
        host.ws.on("message", (data) => {
          const text = data.toString();
          if (!text.includes('"code":-32003')) return;
          clearTimeout(timer);
          resolve(text);
        });
      });
      host.send(
        `{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping","params":${JSON.stringify({ x: nested(LIMIT) })}}`,
      );
      expect(await refusal).toMatch(/^\{"jsonrpc":"2\.0","id":12345678901234567890,"error":\{"code":-32003,/);
    } finally {
      await host.close();
    }
  });
});
