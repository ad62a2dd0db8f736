/**
 * Waits bounded by a timeout stay bounded after a garbage collection. On Node 20 a collection
 * dropped a signal of `AbortSignal.timeout` held only inside `AbortSignal.any`, and it never
 * fired: a server that accepts the connection and never answers held the start-up probe of a
 * streamable HTTP upstream (and an OAuth request) for good. A real socket that never answers,
 * a collection forced while the request waits.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StreamableHttpUpstreamTransport } from "../../../src/transports/upstream/streamableHttpUpstream.js";
import { timedFetch } from "../../../src/upstreamAuth/oauthFetch.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer(() => {});
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Settles `work` while forcing collections; fails the test if it has not settled in `withinMs`. */
async function settledDespiteGc(work: Promise<unknown>, withinMs: number): Promise<unknown> {
  const collecting = setInterval(gc, 100);
  let guard: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work.then(
        () => new Error("it did not fail"),
        (error: unknown) => error,
      ),
      new Promise(
        (_, reject) => (guard = setTimeout(() => reject(new Error(`still waiting after ${withinMs} ms`)), withinMs)),
      ),
    ]);
  } finally {
    clearInterval(collecting);
    clearTimeout(guard);
  }
}

describe("a timeout after a garbage collection", () => {
  it("ends a streamable HTTP upstream's start-up probe at limits.connectTimeoutMs", async () => {
    const upstream = new StreamableHttpUpstreamTransport({ url, connectTimeoutMs: 800, maxMessageBytes: 1 << 20 });
    const error = await settledDespiteGc(upstream.start(), 6_000);
    expect((error as Error).message).toMatch(/no answer within 800 ms \(limits\.connectTimeoutMs\)/);
  });

  it("ends an OAuth request at its timeout", async () => {
    const fetchWithin = timedFetch(fetch, { timeoutMs: 800 });
    const error = await settledDespiteGc(fetchWithin(url, { signal: new AbortController().signal }), 6_000);
    expect((error as Error).name).toBe("TimeoutError");
  });
});
