/**
 * `limits.maxUpstreamMessageNodes` on a real `serve`: an upstream's answer of more objects,
 * arrays, members and elements than the limit is not parsed (one bad server would hold every
 * session while it is), and the host's request gets `-32003` naming the limit at once; one at the
 * limit goes through whole; the session goes on. The upstream is a hand-written stdio server
 * that writes whatever it is asked to, read in one piece and (past the raw-string size) in many.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { nodesOf } from "../helpers/jsonNodes.js";
import { initializedWs, RAW_UPSTREAM, type RawWs, serveConfig } from "../reliability/helpers.js";

const LIMIT = 1000;
let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } },
    limits: { maxUpstreamMessageNodes: LIMIT },
  });
});
afterAll(async () => {
  await serve?.stop();
});

/** An answer of `total` nodes in all: the message, its result, and an array of short strings. */
function answerOf(total: number, filler = ""): string {
  const base = nodesOf({ jsonrpc: "2.0", id: 0, result: { contents: [], pad: filler, items: [] } });
  const items = Array.from({ length: total - base + 1 }, (_, k) => k.toString(36));
  return `${JSON.stringify({ jsonrpc: "2.0", id: "__ID__", result: { contents: [], pad: filler, items } })}\n`;
}

/** `answerOf`, with its members in another order: the id neither first nor last. */
function answerIdInMiddle(total: number, filler: string): string {
  const base = nodesOf({ result: { contents: [], pad: filler, items: [] }, id: 0, jsonrpc: "2.0" });
  const items = Array.from({ length: total - base + 1 }, (_, k) => k.toString(36));
  return `${JSON.stringify({ result: { contents: [], pad: filler, items }, id: "__ID__", jsonrpc: "2.0" })}\n`;
}

/** A request of the server's own over the limit, its method after its params, under the host's request id. */
function ownRequestOver(total: number, filler: string): string {
  const items = Array.from({ length: total }, (_, k) => k.toString(36));
  const params = { pad: filler, items };
  return `${JSON.stringify({ params, method: "sampling/createMessage", jsonrpc: "2.0", id: "__ID__" })}\n`;
}

const b64 = (text: string): string => Buffer.from(text).toString("base64");

/** The two ways an upstream's line reaches the proxy: one read, or pieces (a long string in it). */
const READS = [
  ["in one read", ""],
  ["read in pieces", "x".repeat(400_000)],
] as const;

/** Runs `test` with a WebSocket host of its own on the raw upstream, closed after. */
async function withHost(test: (host: RawWs) => Promise<void>): Promise<void> {
  const host = await initializedWs(serve.url, "raw");
  try {
    await test(host);
  } finally {
    await host.close();
  }
}

describe("limits.maxUpstreamMessageNodes", () => {
  it.each(READS)("the id anywhere in the answer (%s): its request is answered at once", (_, filler) =>
    withHost(async (host) => {
      const params = { uri: "x://middle", _emit: [b64(answerIdInMiddle(LIMIT + 1, filler))], _noFinal: true };
      const refused = await host.request(1, "resources/read", params, 10_000);
      expect(refused).toMatchObject({ id: 1, error: { code: -32003 } });
    }),
  );

  it.each(READS)(
    "a request of the server's own over the limit (%s), method after params, answers nothing",
    (_, filler) =>
      withHost(async (host) => {
        // Then the real answer (the fixture's final one): that is what the host gets.
        const params = { uri: "x://own", _emit: [b64(ownRequestOver(LIMIT + 1, filler))] };
        const answered = await host.request(1, "resources/read", params, 10_000);
        expect(answered).toEqual({ jsonrpc: "2.0", id: 1, result: { contents: [] } });
      }),
  );

  it.each(READS)(
    "an answer over the limit (%s): -32003 naming it, at once; at the limit it goes through",
    (_, filler) =>
      withHost(async (host) => {
        const emit = (total: number) => ({
          _emit: [b64(answerOf(total, filler))],
          _noFinal: true,
        });
        const refused = await host.request(1, "resources/read", { uri: "x://over", ...emit(LIMIT + 1) }, 10_000);
        expect(refused).toEqual({
          jsonrpc: "2.0",
          id: 1,
          error: {
            code: -32003,
            message: expect.stringMatching(
              new RegExp(
                `holds more than limits\\.maxUpstreamMessageNodes \\(${LIMIT}\\) objects, arrays, members and elements; not read$`,
              ),
            ),
          },
        });
        const served = await host.request(2, "resources/read", { uri: "x://at", ...emit(LIMIT) }, 10_000);
        expect((served.result as { items: unknown[] }).items.length).toBeGreaterThan(LIMIT - 10);
        expect(await host.request(3, "ping", {}, 10_000)).toMatchObject({ id: 3, result: {} });
      }),
  );
});
