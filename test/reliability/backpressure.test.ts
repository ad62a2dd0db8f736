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
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openHost, rssBytes, timedGet, type HostKind, type RawHost } from "../fixtures/hosts/rawHosts.mjs";
import { CLI } from "../helpers/paths.js";
import { startServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { FLOOD_SERVER, floodCollector, readProgress, until, untilSteady } from "./flood.js";
import { tempDir } from "./helpers.js";

/** Messages in a flood: ~460 bytes each, ~46 MB on the wire, ten times what the socket and pipe buffers between the flooder and a stalled host hold. */
const FLOOD_COUNT = 100_000;
const PAD_BYTES = 350;
/**
 * Proxy RSS growth allowed while a host is stalled: a held session keeps `limits.hostBufferBytes`
 * (1 MiB) plus a read's worth of messages; the rest is the garbage of what went through before
 * the hold, not yet collected. Unbounded, the same flood holds the ~46 MB as parsed messages
 * (several times that in heap).
 */
const RSS_GROWTH_BOUND = 80 * 1024 * 1024;

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

describe("a host that stops reading holds its session's upstream back", () => {
  let serve: ServeProcess;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("mcpn-bp-");
    serve = await startServe(["--name", "fl", "--", process.execPath, FLOOD_SERVER]);
  });
  afterAll(async () => {
    await serve?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  for (const kind of ["ws", "sse", "mcp", "stdio"] as const) {
    it(`${kind}: the flooder blocks, memory stays bounded, others are served, and all ${FLOOD_COUNT} arrive in order after`, async () => {
      const { host, proxyPid } = await openFor(kind, serve);
      try {
        await host.initialize();
        await host.request("tools/list");
        const seen = floodCollector(host);
        const idleRss = rssBytes(proxyPid)!;
        const progressFile = join(dir, `${kind}.json`);

        host.pause();
        let answered = false;
        const flood = host
          .request(
            "tools/call",
            { name: "flood", arguments: { count: FLOOD_COUNT, padBytes: PAD_BYTES, progress: progressFile } },
            120_000,
          )
          .finally(() => (answered = true));
        // The proxy stops reading the flooder: what it could write stops growing.
        await untilSteady(
          () => readProgress(progressFile)?.written ?? 0,
          (written) => written > 0,
          1500,
          30_000,
          "the flooder's written count",
        );
        const stalled = readProgress(progressFile)!;

        // Held back: what the flooder could write is what the buffers on the way hold.
        expect(stalled.flooding).toBe(true);
        expect(stalled.written).toBeLessThan(FLOOD_COUNT / 2);
        expect(answered).toBe(false);
        const grown = rssBytes(proxyPid)! - idleRss;
        expect(grown).toBeLessThan(RSS_GROWTH_BOUND);

        if (kind !== "stdio") {
          // The proxy itself is not stuck: /healthz and another session answer.
          const health = await timedGet(`${serve.url}/healthz`, 5000);
          expect(health.status).toBe(200);
          const other = await openHost("ws", { url: serve.url, name: "fl" });
          try {
            await other.initialize(5000);
            const listed = await other.request("tools/list", {}, 5000);
            expect(listed.result.tools.map((t: { name: string }) => t.name)).toContain("flood");
          } finally {
            await other.close();
          }
        }
        // Still held after all that.
        expect(readProgress(progressFile)!.written).toBeLessThan(FLOOD_COUNT / 2);

        host.resume();
        const answer = await flood;
        expect(answer.result.content[0].text).toBe(`flooded ${FLOOD_COUNT}`);
        // Notifications come before the answer on every transport but streamable HTTP's, where
        // they share the answer's stream and so are in before it too.
        await until(
          () => seen.count,
          (n) => n >= FLOOD_COUNT,
          10_000,
          "flood notifications",
        );
        expect(seen).toEqual({ count: FLOOD_COUNT, next: FLOOD_COUNT, outOfOrder: 0 });
      } finally {
        await host.close();
      }
    });
  }
});

describe("a host that stops reading holds back an HTTP upstream's response stream", () => {
  let upstream: ChildProcess;
  let serve: ServeProcess;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("mcpn-bp-http-");
    upstream = spawn(process.execPath, [FLOOD_SERVER, "--http"], { stdio: ["ignore", "pipe", "inherit"] });
    const url = await new Promise<string>((resolve, reject) => {
      let text = "";
      const timer = setTimeout(() => reject(new Error("the HTTP flood server did not start")), 10_000);
      upstream.stdout!.on("data", (chunk: Buffer) => {
        text += chunk.toString();
        const match = /listening (http:\/\/\S+)/.exec(text);
        if (match !== null) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    });
    serve = await startServe(["--name", "fl", "--url", url]);
  });
  afterAll(async () => {
    await serve?.stop();
    upstream?.kill();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("streamable HTTP upstream, WebSocket host: the upstream's SSE writes block, and all arrive in order after", async () => {
    const host = await openHost("ws", { url: serve.url, name: "fl" });
    try {
      await host.initialize();
      const seen = floodCollector(host);
      const progressFile = join(dir, "http.json");
      host.pause();
      const flood = host.request(
        "tools/call",
        { name: "flood", arguments: { count: FLOOD_COUNT, padBytes: PAD_BYTES, progress: progressFile } },
        120_000,
      );
      await untilSteady(
        () => readProgress(progressFile)?.written ?? 0,
        (written) => written > 0,
        1500,
        30_000,
        "the flooder's written count",
      );
      expect(readProgress(progressFile)!.written).toBeLessThan(FLOOD_COUNT / 2);
      host.resume();
      expect((await flood).result.content[0].text).toBe(`flooded ${FLOOD_COUNT}`);
      await until(
        () => seen.count,
        (n) => n >= FLOOD_COUNT,
        10_000,
        "flood notifications",
      );
      expect(seen).toEqual({ count: FLOOD_COUNT, next: FLOOD_COUNT, outOfOrder: 0 });
    } finally {
      await host.close();
    }
  });
});

describe("an upstream that stops reading its stdin holds its host back", () => {
  let serve: ServeProcess;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("mcpn-bp-rev-");
    serve = await startServe(["--name", "fl", "--", process.execPath, FLOOD_SERVER]);
  });
  afterAll(async () => {
    await serve?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** Host → upstream floods: many ~1 KiB notifications on sockets and pipes; fewer, bigger POSTs on HTTP. */
  const FLOODS = {
    ws: { count: 60_000, padBytes: 1000 },
    stdio: { count: 60_000, padBytes: 1000 },
    sse: { count: 40, padBytes: 1024 * 1024 },
    mcp: { count: 40, padBytes: 1024 * 1024 },
  } as const;

  for (const kind of ["ws", "stdio", "sse", "mcp"] as const) {
    const { count, padBytes } = FLOODS[kind];
    it(`${kind}: the proxy stops reading the host, memory stays bounded, and all ${count} reach the upstream in order after`, async () => {
      const { host, proxyPid } = await openFor(kind, serve);
      const progressFile = join(dir, `${kind}.json`);
      let upstreamPid: number;
      try {
        await host.initialize();
        await host.request("tools/call", { name: "stall", arguments: { ms: 60_000, progress: progressFile } });
        upstreamPid = (await until(
          () => readProgress(progressFile),
          (p) => p?.stalled === true,
          10_000,
          "stall",
        ))!.pid;
        const idleRss = rssBytes(proxyPid)!;

        const pad = "y".repeat(padBytes);
        for (let seq = 0; seq < count; seq++) host.notify("notifications/flood", { seq, pad });
        const total = count * (padBytes + 60);
        // The proxy stops reading the host: what the host could not hand over stays with the
        // host (read without backpressure, it would shrink to nothing), and the proxy took only
        // what its buffers and the upstream's stdin pipe hold.
        const backlog = await untilSteady(
          () => host.backlogBytes,
          () => true,
          1500,
          30_000,
          "the host's backlog",
        );
        expect(backlog).toBeGreaterThan(total / 2);
        expect(rssBytes(proxyPid)! - idleRss).toBeLessThan(RSS_GROWTH_BOUND);
        expect(readProgress(progressFile)!.received).toBe(0);

        process.kill(upstreamPid, "SIGUSR2");
        const done = await until(
          () => readProgress(progressFile),
          (p) => (p?.received ?? 0) >= count,
          60_000,
          "upstream received",
        );
        expect(done?.received).toBe(count);
        expect(done?.outOfOrder).toBe(0);
        expect(host.backlogBytes).toBe(0);
      } finally {
        await host.close();
      }
    });
  }
});
