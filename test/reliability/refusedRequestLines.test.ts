/**
 * An HTTP upstream that refuses every request (a 400, as a stateful server answers a POST with no
 * session) is a transport error per request: logged per session or stateless pool like the other
 * problems a peer causes — the first few of a kind in full, then counted — not two warn lines per
 * request, which any client could turn into a log flood. Every host still gets its answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post } from "../badInput/mcpHttp.js";
import { type Fixture, startStatusFixture } from "../fixtures/upstream-servers/httpFixtures.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig } from "./helpers.js";

const POSTS = 60;
let upstream: Fixture;
let serve: ServeProcess;
beforeAll(async () => {
  upstream = await startStatusFixture(400, "Bad Request: Server not initialized");
  serve = await serveConfig({ mcpServers: { remote: { url: upstream.url } } });
});
afterAll(async () => {
  await serve?.stop();
  await upstream?.close();
});

describe("an HTTP upstream refusing every stateless request", () => {
  it(`${POSTS} POSTs: each answered -32001 naming the status; a few warn lines, not one or two per POST`, async () => {
    for (let i = 0; i < POSTS; i++) {
      const answer = await post(
        `${serve.url}/mcp/remote`,
        JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/list" }),
        undefined,
        { "mcp-protocol-version": "2026-07-28" },
      );
      expect(answer.messages[0]).toMatchObject({ id: i, error: { code: -32001 } });
      expect(JSON.stringify(answer.messages[0])).toContain("HTTP 400");
    }
    const warnLines = serve
      .stderr()
      .split("\n")
      .filter((line) => line.includes('"level":"warn"'));
    expect(warnLines.filter((line) => line.includes("upstream request failed"))).toEqual([]);
    const refused = warnLines.filter((line) => line.includes("pooled upstream transport error"));
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeLessThanOrEqual(12);
    expect(warnLines.length).toBeLessThan(POSTS / 2);
  });
});
