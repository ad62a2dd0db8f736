/**
 * The fit layer's pages and the session lifecycle, through the real proxy (`serve`) and a real
 * SDK upstream (test/fixtures/servers/image-server.mjs):
 *
 * - the pages of a cut result are let go when their session ends — reaped for idleness
 *   (limits.sessionIdleMs) or ended by the host (DELETE) — seen from outside as room in
 *   limits.spillMaxBytes: with one session's pages held the next result cannot be cut;
 * - stateless requests (the pool) are fitted too, and a page cut by one pooled upstream can be
 *   read by a POST another one serves; the pages go with the pool when its upstreams end.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSession, post, rpc } from "../badInput/mcpHttp.js";
import { IMAGE_SERVER } from "../helpers/paths.js";
import { getJson, serveConfig, waitForStderr } from "../reliability/helpers.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";

const MAX_RESULT = 1024;
/** One cut result of REPEAT bytes holds about that much in pages: one fits in SPILL_MAX, two do not. */
const REPEAT = 20_000;
const SPILL_MAX = 30_000;
const STATELESS = { "mcp-protocol-version": "2026-07-28" };
const imageServer = { command: process.execPath, args: [IMAGE_SERVER] };

type Block = { type: string; text?: string; uri?: string };

/** The content of a tools/call answer (failing with the whole answer when it is not one). */
function content(answer: { status: number; messages: Array<Record<string, unknown>> }): Block[] {
  const message = answer.messages.find((m) => "result" in m || "error" in m);
  expect(answer.status, JSON.stringify(answer.messages)).toBe(200);
  expect(message && "result" in message, JSON.stringify(message)).toBe(true);
  return (message!.result as { content: Block[] }).content;
}

const longCall = (id: number, args: Record<string, unknown> = {}) =>
  rpc(id, "tools/call", { name: "long", arguments: { unit: "x", repeat: REPEAT, ...args } });
const isCut = (blocks: Block[]): boolean => blocks.length === 2 && blocks[1]!.type === "resource_link";

/** Calls `long` in `session` until its result is cut (pages of an ended session are let go as it closes), bounded. */
async function cutWithin(url: string, session: string, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (let id = 100; ; id++) {
    if (isCut(content(await post(url, longCall(id), session)))) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("pages of a cut result end with their session", () => {
  let serve: ServeProcess;
  let url: string;
  beforeAll(async () => {
    serve = await serveConfig({
      mcpServers: { img: imageServer },
      normalize: { maxResultBytes: MAX_RESULT },
      limits: { sessionIdleMs: 1500, spillMaxBytes: SPILL_MAX },
    });
    url = `${serve.url}/mcp/img`;
  });
  afterAll(async () => {
    await serve?.stop();
  });

  it("a session reaped for idleness lets go of its pages: another session's result can be cut again", async () => {
    const first = await openSession(url);
    expect(isCut(content(await post(url, longCall(1), first)))).toBe(true);
    const second = await openSession(url);
    // The first session's pages take the room: this result goes out whole (warn-spill-full).
    const whole = content(await post(url, longCall(1), second));
    expect(whole).toHaveLength(1);
    expect(whole[0]!.text).toHaveLength(REPEAT);
    // The second session stays in use; the first, left alone, is reaped.
    const reaped = waitForStderr(serve, /"msg":"session reaped"/, 20_000);
    const keepAlive = setInterval(() => void post(url, rpc(99, "ping"), second).catch(() => {}), 300);
    try {
      await reaped;
      expect((await post(url, rpc(2, "ping"), first)).status).toBe(404);
      expect(await cutWithin(url, second)).toBe(true);
    } finally {
      clearInterval(keepAlive);
    }
    await fetch(url, { method: "DELETE", headers: { "mcp-session-id": second } });
  });

  it("a session its host ends (DELETE) lets go of its pages", async () => {
    // The previous test's sessions are gone by now (their pages with them).
    const first = await openSession(url);
    expect(await cutWithin(url, first)).toBe(true);
    const second = await openSession(url);
    expect(content(await post(url, longCall(1), second))).toHaveLength(1);
    expect((await fetch(url, { method: "DELETE", headers: { "mcp-session-id": first } })).ok).toBe(true);
    // The session's upstream ends as the DELETE is answered; its pages with it.
    expect(await cutWithin(url, second)).toBe(true);
    await fetch(url, { method: "DELETE", headers: { "mcp-session-id": second } });
  });
});

describe("stateless requests and the fit layer", () => {
  let serve: ServeProcess;
  let url: string;
  beforeAll(async () => {
    serve = await serveConfig({
      mcpServers: { img: imageServer },
      normalize: { maxResultBytes: MAX_RESULT },
      limits: { statelessPoolSize: 2, sessionIdleMs: 1500 },
    });
    url = `${serve.url}/mcp/img`;
  });
  afterAll(async () => {
    await serve?.stop();
  });

  const stateless = (body: string) => post(url, body, undefined, STATELESS);

  it("results are cut; any pooled upstream serves the pages; they go with the pool", async () => {
    // Concurrent POSTs start the second upstream of the pool; each result says which answered.
    const links = new Map<number, string>();
    for (let round = 0; round < 5 && links.size < 2; round++) {
      const answers = await Promise.all([1, 2, 3, 4].map(() => stateless(longCall(1, { pid: true }))));
      for (const answer of answers) {
        const blocks = content(answer);
        expect(isCut(blocks)).toBe(true);
        expect((blocks[1] as { description?: string }).description).toMatch(/to this client only\.$/);
        links.set(Number(/^pid (\d+)\n/.exec(blocks[0]!.text!)![1]), blocks[1]!.uri!);
      }
    }
    expect(links.size).toBe(2);
    // One after another, these POSTs are all served by the same upstream: it serves the other's pages too.
    for (const uri of links.values()) {
      const page = await stateless(rpc(1, "resources/read", { uri }));
      const message = page.messages[0]!;
      expect(message.error, JSON.stringify(message)).toBeUndefined();
      expect((message.result as { contents: Array<{ text: string }> }).contents[0]!.text).toBe("x".repeat(MAX_RESULT));
    }
    // Idle for sessionIdleMs, the pool's upstreams end, and its pages with them.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const health = await getJson(`${serve.url}/healthz`);
      if ((health.body.servers as Record<string, { statelessUpstreams: number }>).img!.statelessUpstreams === 0) break;
      if (Date.now() > deadline) throw new Error(`pool never ended: ${JSON.stringify(health.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const gone = await stateless(rpc(1, "resources/read", { uri: [...links.values()][0] }));
    expect((gone.messages[0]!.error as { message: string }).message).toMatch(/no such page for this client/);
  });
});
