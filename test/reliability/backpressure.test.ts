/**
 * Backpressure, end to end, against real processes and sockets: a flooding upstream (the
 * flood fixture, which honours its own stdout's backpressure and reports how much it could
 * write) behind a real proxy, and raw hosts that stop reading — a WebSocket that pauses its
 * socket, an SSE reader and a streamable HTTP reader that stop consuming, a stdio host that does
 * not read the proxy's stdout. And the reverse: a host that floods an upstream that does not
 * read its stdin.
 *
 * What is asserted: the upstream is held back (the flooder's count of written messages stops
 * far below the flood), the proxy's memory stays bounded, `/healthz` and another session answer
 * meanwhile, and once the host reads again every message arrives, in order.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openHost, rssBytes, timedGet, type HostKind, type RawHost } from "../fixtures/hosts/rawHosts.mjs";
import {
  expectFloodDelivered,
  FLOOD_COUNT,
  FLOOD_SERVER,
  floodCollector,
  holdFlood,
  notifyFlood,
  readProgress,
  releaseUpstream,
  RSS_GROWTH_BOUND,
  stallUpstream,
  untilHostHeld,
} from "../helpers/flood.js";
import { CLI } from "../helpers/paths.js";
import { startServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";

const dir = tempDir("mcpn-bp-");
const serveFlood = (): Promise<ServeProcess> => startServe(["--name", "fl", "--", process.execPath, FLOOD_SERVER]);

/** A raw host of `kind` on the proxy (stdio: a proxy of its own), and the proxy's pid. */
async function openFor(kind: HostKind, serve: ServeProcess): Promise<{ host: RawHost; proxyPid: number }> {
  if (kind === "stdio") {
    const host = await openHost("stdio", {
      command: process.execPath,
      args: [CLI, "stdio", "--", process.execPath, FLOOD_SERVER],
    });
    return { host, proxyPid: host.pid };
  }
  return { host: await openHost(kind, { url: serve.url, name: "fl" }), proxyPid: serve.child.pid! };
}

/** The proxy is not stuck behind a held session: `/healthz` and a new session on it answer. */
async function expectListenerServes(serve: ServeProcess): Promise<void> {
  expect((await timedGet(`${serve.url}/healthz`, 5000)).status).toBe(200);
  const other = await openHost("ws", { url: serve.url, name: "fl" });
  try {
    await other.initialize(5000);
    const listed = await other.request("tools/list", {}, 5000);
    expect(listed.result.tools.map((t: { name: string }) => t.name)).toContain("flood");
  } finally {
    await other.close();
  }
}

describe("a host that stops reading holds its session's upstream back", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await serveFlood();
  });
  afterAll(() => serve?.stop());

  it.each(["ws", "sse", "mcp", "stdio"] as const)(
    `%s: the flooder blocks, memory stays bounded, others are served, and all ${FLOOD_COUNT} arrive in order after`,
    async (kind) => {
      const { host, proxyPid } = await openFor(kind, serve);
      try {
        await host.initialize();
        await host.request("tools/list");
        const seen = floodCollector(host);
        const idleRss = rssBytes(proxyPid)!;
        const progressFile = join(dir, `${kind}.json`);

        host.pause();
        const flood = await holdFlood(host, progressFile);
        // Held back: what the flooder could write is what the buffers on the way hold.
        expect(flood.held.flooding).toBe(true);
        expect(flood.held.written).toBeLessThan(FLOOD_COUNT / 2);
        expect(flood.answered()).toBe(false);
        expect(rssBytes(proxyPid)! - idleRss).toBeLessThan(RSS_GROWTH_BOUND);
        // A stdio host has a proxy of its own, with no listener to ask.
        if (kind !== "stdio") await expectListenerServes(serve);
        // Still held after all that.
        expect(readProgress(progressFile)!.written).toBeLessThan(FLOOD_COUNT / 2);

        await expectFloodDelivered(host, flood, seen);
      } finally {
        await host.close();
      }
    },
  );
});

/** The fixture as a streamable HTTP server on port 0; resolves with its URL. */
function startHttpFlood(): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(process.execPath, [FLOOD_SERVER, "--http"], { stdio: ["ignore", "pipe", "inherit"] });
  const url = new Promise<string>((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error("the HTTP flood server did not start")), 10_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening (http:\/\/\S+)/.exec(text);
      if (match === null) return;
      clearTimeout(timer);
      resolve(match[1]!);
    });
  });
  return { child, url };
}

describe("a host that stops reading holds back an HTTP upstream's response stream", () => {
  let upstream: ChildProcess;
  let serve: ServeProcess;
  beforeAll(async () => {
    const started = startHttpFlood();
    upstream = started.child;
    serve = await startServe(["--name", "fl", "--url", await started.url]);
  });
  afterAll(async () => {
    await serve?.stop();
    upstream?.kill();
  });

  it("streamable HTTP upstream, WebSocket host: the upstream's SSE writes block, and all arrive in order after", async () => {
    const host = await openHost("ws", { url: serve.url, name: "fl" });
    try {
      await host.initialize();
      const seen = floodCollector(host);
      host.pause();
      const flood = await holdFlood(host, join(dir, "http.json"));
      expect(flood.held.written).toBeLessThan(FLOOD_COUNT / 2);
      await expectFloodDelivered(host, flood, seen);
    } finally {
      await host.close();
    }
  });
});

describe("an upstream that stops reading its stdin holds its host back", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await serveFlood();
  });
  afterAll(() => serve?.stop());

  /** Host → upstream floods: many ~1 KiB notifications on sockets and pipes; fewer, bigger POSTs on HTTP. */
  it.each([
    // host kind, notifications, bytes each
    ["ws", 60_000, 1000],
    ["stdio", 60_000, 1000],
    ["sse", 40, 1024 * 1024],
    ["mcp", 40, 1024 * 1024],
  ] as const)(
    "%s: the proxy stops reading the host, memory stays bounded, and all %i reach the upstream in order after",
    async (kind, count, padBytes) => {
      const { host, proxyPid } = await openFor(kind, serve);
      const progressFile = join(dir, `rev-${kind}.json`);
      try {
        await host.initialize();
        const upstreamPid = await stallUpstream(host, progressFile);
        const idleRss = rssBytes(proxyPid)!;

        notifyFlood(host, count, padBytes);
        // The proxy stops reading the host: what the host could not hand over stays with the
        // host (read without backpressure, it would shrink to nothing), and the proxy took only
        // what its buffers and the upstream's stdin pipe hold.
        const backlog = await untilHostHeld(host);
        expect(backlog).toBeGreaterThan((count * (padBytes + 60)) / 2);
        expect(rssBytes(proxyPid)! - idleRss).toBeLessThan(RSS_GROWTH_BOUND);
        expect(readProgress(progressFile)!.received).toBe(0);

        await releaseUpstream(upstreamPid, progressFile, count);
        expect(host.backlogBytes).toBe(0);
      } finally {
        await host.close();
      }
    },
  );
});
