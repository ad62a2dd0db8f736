/**
 * Session lifecycle and backpressure together, against the flood fixture behind a real proxy:
 *
 * - the WebSocket heartbeat does not drop a host the proxy itself stopped reading (its upstream
 *   is behind: the host's pongs wait unread), and does drop one that reads nothing for whole
 *   intervals — ending its held upstream, process group included;
 * - limits.sessionIdleMs does not end a streamable HTTP session whose host is stalled on an open
 *   stream, nor one whose POSTs wait for their turn while the upstream is behind;
 * - a POST that waited for its turn until limits.requestBodyTimeoutMs closed it is not delivered
 *   after all, and does not wedge the session's later POSTs;
 * - the stateless pool holds an upstream back while the POST it answers is not read.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openHost, rssBytes, type RawHost } from "../fixtures/hosts/rawHosts.mjs";
import {
  expectFloodDelivered,
  FLOOD_COUNT,
  FLOOD_SERVER,
  floodCall,
  floodCollector,
  holdFlood,
  notifyFlood,
  readProgress,
  releaseUpstream,
  RSS_GROWTH_BOUND,
  stallUpstream,
  untilFlooderHeld,
  untilHostHeld,
} from "../helpers/flood.js";
import { sleep, until } from "../helpers/polling.js";
import { signalProcess } from "../helpers/pids.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";
import { serveConfig, untilGone } from "./helpers.js";

const REAPED = /"msg":"session reaped"/;
const dir = tempDir("mcpn-lifebp-");

/** A proxy serving the flood fixture as `fl`, with `limits`. */
const serveFlood = (limits: Record<string, number>): Promise<ServeProcess> =>
  serveConfig({ mcpServers: { fl: { command: process.execPath, args: [FLOOD_SERVER] } }, limits });

/** What the proxy has logged since `mark` (the length of its stderr then). */
function loggedSince(serve: ServeProcess, mark: number): string {
  return serve.stderr().slice(mark);
}

/** Closes a raw streamable HTTP host and DELETEs its session, so no idle expiry of it shows in a later test's log. */
async function closeMcp(host: RawHost, url: string): Promise<void> {
  await host.close();
  const session = (host as unknown as { session?: string }).session;
  if (session !== undefined)
    await fetch(`${url}/mcp/fl`, {
      method: "DELETE",
      headers: { "mcp-session-id": session },
      signal: AbortSignal.timeout(5000),
    }).catch(() => {});
}

describe("heartbeat and idle expiry while backpressure holds a session", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await serveFlood({ pingIntervalMs: 1000, sessionIdleMs: 1500 });
  });
  afterAll(() => serve?.stop());

  it("ws: a host the proxy stopped reading (its upstream is behind) is not dropped for the pongs it cannot see", async () => {
    const mark = serve.stderr().length;
    const host = await openHost("ws", { url: serve.url, name: "fl" });
    const progressFile = join(dir, "ws-behind.json");
    const count = 60_000;
    try {
      await host.initialize();
      const upstreamPid = await stallUpstream(host, progressFile);
      notifyFlood(host, count, 1000);
      // The proxy stops reading the host, then four ping intervals go by.
      expect(await untilHostHeld(host)).toBeGreaterThan(0);
      await sleep(4000);
      expect(loggedSince(serve, mark)).not.toMatch(REAPED);

      await releaseUpstream(upstreamPid, progressFile, count, 30_000);
      const listed = await host.request("tools/list", {}, 10_000);
      expect(listed.result.tools.map((t: { name: string }) => t.name)).toContain("flood");
      expect(loggedSince(serve, mark)).not.toMatch(REAPED);
    } finally {
      await host.close();
    }
  });

  it("ws: a host that reads nothing for whole intervals is dropped, and its held upstream ends", async () => {
    const host = await openHost("ws", { url: serve.url, name: "fl" });
    const progressFile = join(dir, "ws-stalled.json");
    try {
      await host.initialize();
      host.pause();
      void host.request("tools/call", floodCall(progressFile), 60_000).catch(() => {});
      const held = await until(
        () => readProgress(progressFile),
        (p) => (p?.written ?? 0) > 0,
        10_000,
        "flood started",
      );
      await until(
        () => serve.stderr(),
        (text) => /no answer to a WebSocket ping within 1000 ms.*"msg":"session reaped"/.test(text),
        15_000,
        "session reaped",
      );
      // The flooder was blocked on a pipe nobody read: it is ended with the session.
      expect(readProgress(progressFile)!.written).toBeLessThan(FLOOD_COUNT / 2);
      expect(await untilGone(held!.pid, 10_000)).toBe(true);
    } finally {
      await host.close();
    }
  });

  it("streamable HTTP: a host stalled on an open response stream is not idle; everything arrives after", async () => {
    const mark = serve.stderr().length;
    const host = await openHost("mcp", { url: serve.url, name: "fl" });
    try {
      await host.initialize();
      const seen = floodCollector(host);
      host.pause();
      const flood = await holdFlood(host, join(dir, "mcp-stalled.json"));
      expect(flood.held.written).toBeLessThan(FLOOD_COUNT / 2);
      await sleep(3500);
      expect(loggedSince(serve, mark)).not.toMatch(REAPED);
      await expectFloodDelivered(host, flood, seen);
    } finally {
      await closeMcp(host, serve.url);
    }
  });

  it("streamable HTTP: POSTs waiting for their turn while the upstream is behind keep the session; all arrive after", async () => {
    const mark = serve.stderr().length;
    const host = await openHost("mcp", { url: serve.url, name: "fl" });
    const progressFile = join(dir, "mcp-behind.json");
    const count = 12;
    try {
      await host.initialize();
      const upstreamPid = await stallUpstream(host, progressFile);
      notifyFlood(host, count, 2 * 1024 * 1024);
      expect(await untilHostHeld(host)).toBeGreaterThan(0);
      await sleep(3500);
      expect(loggedSince(serve, mark)).not.toMatch(REAPED);

      await releaseUpstream(upstreamPid, progressFile, count, 30_000);
      expect((await host.request("tools/list", {}, 10_000)).result.tools).toHaveLength(3);
    } finally {
      await closeMcp(host, serve.url);
    }
  });
});

describe("a POST that waited for its turn past limits.requestBodyTimeoutMs", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await serveFlood({ requestBodyTimeoutMs: 1500, headersTimeoutMs: 1000 });
  });
  afterAll(() => serve?.stop());

  it("is closed (408) and never delivered, and the session's next POSTs are still read once the upstream catches up", async () => {
    const host = await openHost("mcp", { url: serve.url, name: "fl" });
    const progressFile = join(dir, "timeout.json");
    try {
      await host.initialize();
      const upstreamPid = await stallUpstream(host, progressFile);
      notifyFlood(host, 8, 2 * 1024 * 1024);
      // Bodies held unread are closed by the request timeout: the host's backlog empties.
      await until(
        () => host.backlogBytes,
        (bytes) => bytes === 0,
        15_000,
        "the held POSTs closed",
      );
      signalProcess(upstreamPid, "SIGUSR2");
      expect((await host.request("tools/list", {}, 10_000)).result.tools).toHaveLength(3);
      // The first body went through before the hold; the ones answered 408 are not delivered after all.
      await until(
        () => readProgress(progressFile)?.received ?? 0,
        (n) => n >= 1,
        5000,
        "the first body received",
      );
      await sleep(500);
      expect(readProgress(progressFile)!.received).toBe(1);
    } finally {
      await host.close();
    }
  });
});

/** A stateless POST (protocol 2026-07-28, no session) whose response is not read until `resume()`. */
function statelessPost(url: string, message: unknown): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
        },
      },
      (res) => {
        res.pause();
        resolve(res);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(message));
  });
}

/** The JSON messages of an SSE response, read to its end. */
// biome-ignore lint/suspicious/noExplicitAny: raw JSON-RPC from a test peer; tests index into it freely.
type RawMessage = Record<string, any>;

function sseMessages(res: IncomingMessage): Promise<RawMessage[]> {
  return new Promise((resolve, reject) => {
    const messages: RawMessage[] = [];
    let rest = "";
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      rest += chunk;
      for (let at = rest.indexOf("\n\n"); at >= 0; at = rest.indexOf("\n\n")) {
        const data = rest
          .slice(0, at)
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart());
        rest = rest.slice(at + 2);
        if (data.length > 0) messages.push(JSON.parse(data.join("\n")));
      }
    });
    res.on("end", () => resolve(messages));
    res.on("error", reject);
    res.resume();
  });
}

describe("the stateless pool under backpressure", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await serveFlood({ statelessPoolSize: 1 });
  });
  afterAll(() => serve?.stop());

  it("a POST whose host does not read holds its pooled upstream back; everything arrives, in order, after", async () => {
    const progressFile = join(dir, "stateless.json");
    const idleRss = rssBytes(serve.child.pid!)!;
    const res = await statelessPost(`${serve.url}/mcp/fl`, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: floodCall(progressFile),
    });
    expect(res.statusCode).toBe(200);
    expect((await untilFlooderHeld(progressFile)).written).toBeLessThan(FLOOD_COUNT / 2);
    expect(rssBytes(serve.child.pid!)! - idleRss).toBeLessThan(RSS_GROWTH_BOUND);

    const messages = await sseMessages(res);
    const seqs = messages.filter((m) => m.method === "notifications/message").map((m) => m.params.data.seq as number);
    expect(seqs).toHaveLength(FLOOD_COUNT);
    expect(seqs.every((seq, i) => seq === i)).toBe(true);
    expect(messages.at(-1)).toMatchObject({ id: 1, result: { content: [{ text: `flooded ${FLOOD_COUNT}` }] } });
  });
});
