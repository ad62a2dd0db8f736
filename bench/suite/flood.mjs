/**
 * The flood workload (backpressure): an upstream (test/fixtures/servers/flood-server.mjs) writes
 * COUNT `notifications/message` of ~150 bytes in answer to one tools/call, over each path.
 *
 *  - Stalled host: the host reads nothing for `stallMs`, then everything. Figures: the proxy's
 *    peak RSS above its idle RSS (peak over the stall and the drain after it), `/healthz`
 *    latency (max, p99) polled every 100 ms throughout from a process of its own, how many messages the upstream could
 *    write while the host read nothing (what the proxy and the buffers on the way took), and
 *    whether all COUNT arrived afterwards, in order.
 *  - Fast host: the host reads at full speed. Figure: messages per second from the tools/call
 *    to the last notification, against the same flood read directly from the upstream's stdout.
 *
 * The hosts are raw (test/fixtures/hosts/rawHosts.mjs): they must be able to stop reading, and
 * the figures must be the proxy's, not an SDK client's parser.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openHost } from "../../test/fixtures/hosts/rawHosts.mjs";
import { mcpnCliOf, ROOT } from "./paths.mjs";
import { trackPeakRss } from "./procStats.mjs";
import { startProxyProcess } from "./proxyProcess.mjs";
import { quantile, round } from "./stats.mjs";

const NODE = process.execPath;
export const FLOOD_SERVER = join(ROOT, "test", "fixtures", "servers", "flood-server.mjs");
const POLLER = join(ROOT, "bench", "suite", "healthzPoller.mjs");
/** Bytes of padding per notification: ~150 bytes on the wire with the JSON-RPC envelope. */
export const FLOOD_PAD_BYTES = 42;
/** Interval of the `/healthz` poll during the stalled-host run. */
export const HEALTHZ_POLL_MS = 100;
/** Longest a single `/healthz` may take before it counts as a failure (and the poll goes on). */
const HEALTHZ_TIMEOUT_MS = 10_000;

/** The paths the flood runs on: the upstream read directly, and every mcp-normalizer build's paths. */
export const FLOOD_KINDS = {
  direct: "direct",
  "mcpn-stdio": "stdio",
  "mcpn-ws": "ws",
  "mcpn-sse": "sse",
  "mcpn-mcp": "mcp",
  "base-stdio": "stdio",
  "base-ws": "ws",
  "base-sse": "sse",
  "base-mcp": "mcp",
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes) => (bytes === null || bytes === undefined ? "?" : (bytes / 1048576).toFixed(1));

/** Starts what a path needs and opens its raw host: {host, proxyPid, healthUrl, close}. */
async function openPath(pathId, opts) {
  const kind = FLOOD_KINDS[pathId];
  if (pathId === "direct") {
    const host = await openHost("stdio", { command: NODE, args: [FLOOD_SERVER] }, opts.startTimeoutMs);
    return { host, proxyPid: null, healthUrl: null, close: () => host.close() };
  }
  const cli = mcpnCliOf(pathId);
  if (kind === "stdio") {
    const host = await openHost(
      "stdio",
      { command: NODE, args: [cli, "stdio", "--", NODE, FLOOD_SERVER] },
      opts.startTimeoutMs,
    );
    return { host, proxyPid: host.pid, healthUrl: null, close: () => host.close() };
  }
  const proxy = await startProxyProcess({
    command: NODE,
    args: [cli, "serve", "--name", "flood", "--host", "127.0.0.1", "--port", "0", "--", NODE, FLOOD_SERVER],
    cwd: ROOT,
    readyLine: /listening on (http:\/\/\S+)/,
    timeoutMs: opts.startTimeoutMs,
  });
  try {
    const host = await openHost(kind, { url: proxy.match, name: "flood" }, opts.startTimeoutMs);
    return {
      host,
      proxyPid: proxy.pid,
      healthUrl: `${proxy.match}/healthz`,
      async close() {
        await host.close();
        await proxy.stop();
      },
    };
  } catch (error) {
    await proxy.stop();
    throw error;
  }
}

function vmRssBytes(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}

function readProgress(file) {
  try {
    return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null;
  } catch {
    return null;
  }
}

/** Counts the flood notifications a host receives and whether they came 0, 1, 2, … */
function collect(host) {
  const seen = { count: 0, next: 0, outOfOrder: 0, last: performance.now(), waiters: [] };
  host.onmessage = (message) => {
    if (message.method !== "notifications/message") return;
    const seq = message.params?.data?.seq;
    if (seq !== seen.next) seen.outOfOrder++;
    seen.next = seq + 1;
    seen.count++;
    seen.last = performance.now();
  };
  return seen;
}

async function untilCount(seen, count, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (seen.count < count) {
    if (Date.now() > deadline)
      throw new Error(`only ${seen.count} of ${count} notifications arrived within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/**
 * Polls `url` every HEALTHZ_POLL_MS from a process of its own (healthzPoller.mjs) until stopped;
 * `stop()` resolves {count, failures, maxMs, p99Ms}.
 */
function pollHealth(url) {
  if (url === null) return { stop: async () => null };
  const child = spawn(NODE, [POLLER, url, String(HEALTHZ_POLL_MS), String(HEALTHZ_TIMEOUT_MS)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    async stop() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), HEALTHZ_TIMEOUT_MS + 5000);
      await exited;
      clearTimeout(timer);
      const { latenciesMs, failures } = JSON.parse(out);
      return {
        count: latenciesMs.length,
        failures,
        maxMs: round(Math.max(...latenciesMs), 1),
        p99Ms: round(quantile(latenciesMs, 0.99), 1),
      };
    },
  };
}

/** The stalled-host run on one path. */
async function stalledRun(pathId, opts, dir, log) {
  const count = opts.counts.flood;
  const opened = await openPath(pathId, opts);
  const { host, proxyPid } = opened;
  try {
    await host.initialize(opts.startTimeoutMs);
    await host.request("tools/list", {}, opts.callTimeoutMs);
    await sleep(500);
    const idleRssBytes = vmRssBytes(proxyPid);
    const progress = join(dir, `${pathId}-stalled.json`);
    const seen = collect(host);
    const rss = trackPeakRss(proxyPid, { pollMs: 50 });
    const health = pollHealth(opened.healthUrl);

    host.pause();
    const started = performance.now();
    const answer = host.request(
      "tools/call",
      { name: "flood", arguments: { count, padBytes: FLOOD_PAD_BYTES, progress } },
      opts.stallMs + opts.bigTimeoutMs,
    );
    answer.catch(() => {});
    await sleep(opts.stallMs);
    const atResume = readProgress(progress);
    const receivedWhileStalled = seen.count;
    const resumed = performance.now();
    host.resume();
    const answered = await answer;
    await untilCount(seen, count, opts.bigTimeoutMs);
    const drainMs = performance.now() - resumed;
    const healthz = await health.stop();
    const { peakRssBytes, method } = rss.stop();
    const ok =
      answered.result?.content?.[0]?.text === `flooded ${count}` && seen.count === count && seen.outOfOrder === 0;
    const row = {
      count,
      stallMs: opts.stallMs,
      idleRssBytes,
      peakRssBytes,
      rssAboveIdleBytes: peakRssBytes === null || idleRssBytes === null ? null : peakRssBytes - idleRssBytes,
      rssMethod: method,
      healthz,
      writtenWhileStalled: atResume?.written ?? null,
      upstreamWaits: atResume?.waits ?? null,
      receivedWhileStalled,
      drainMs: round(drainMs, 0),
      totalMs: round(performance.now() - started, 0),
      delivered: seen.count,
      outOfOrder: seen.outOfOrder,
      allInOrder: ok,
    };
    log(
      `  ${pathId} stalled ${opts.stallMs / 1000} s: rss +${mib(row.rssAboveIdleBytes)} MiB over idle ${mib(idleRssBytes)} MiB; upstream wrote ${row.writtenWhileStalled} of ${count} while stalled; /healthz ${healthz === null ? "n/a" : `max ${healthz.maxMs} ms, p99 ${healthz.p99Ms} ms (${healthz.count} polls, ${healthz.failures} failed)`}; then all ${seen.count} in ${(drainMs / 1000).toFixed(1)} s, ${seen.outOfOrder} out of order`,
    );
    return row;
  } finally {
    await opened.close();
  }
}

/** The fast-host run on one path: messages per second. */
async function fastRun(pathId, opts, log) {
  const count = opts.counts.floodFast;
  const opened = await openPath(pathId, opts);
  const { host } = opened;
  try {
    await host.initialize(opts.startTimeoutMs);
    const seen = collect(host);
    const started = performance.now();
    const answered = await host.request(
      "tools/call",
      { name: "flood", arguments: { count, padBytes: FLOOD_PAD_BYTES } },
      opts.bigTimeoutMs,
    );
    await untilCount(seen, count, opts.bigTimeoutMs);
    const seconds = (Math.max(seen.last, performance.now()) - started) / 1000;
    const row = {
      count,
      seconds: round(seconds, 3),
      messagesPerS: round(count / seconds, 0),
      outOfOrder: seen.outOfOrder,
      allInOrder: answered.result !== undefined && seen.count === count && seen.outOfOrder === 0,
    };
    log(`  ${pathId} fast host: ${count} in ${seconds.toFixed(2)} s = ${row.messagesPerS} msg/s`);
    return row;
  } finally {
    await opened.close();
  }
}

/** Runs the flood on every path it applies to; returns a workload result like the others'. */
export async function runFloodWorkload(workload, paths, opts, log) {
  const dir = mkdtempSync(join(tmpdir(), "mcpn-flood-"));
  const chosen = paths.filter((p) => FLOOD_KINDS[p.id] !== undefined);
  const rows = new Map(
    chosen.map((p) => [p.id, { path: p.id, status: "ok", error: null, medianMs: null, stalled: null, fast: null }]),
  );
  try {
    for (const path of chosen) {
      const row = rows.get(path.id);
      if (path.id !== "direct") {
        try {
          row.stalled = await stalledRun(path.id, opts, dir, log);
          if (!row.stalled.allInOrder) {
            row.status = "failed";
            row.error = `stalled host: ${row.stalled.delivered} of ${row.stalled.count} delivered, ${row.stalled.outOfOrder} out of order`;
          }
        } catch (error) {
          row.status = "failed";
          row.error = `stalled host: ${String(error?.message ?? error).slice(0, 1000)}`;
          log(`  ${path.id} stalled host failed: ${row.error}`);
        }
      }
      if (opts.counts.floodFast > 0) {
        try {
          row.fast = await fastRun(path.id, opts, log);
        } catch (error) {
          row.fast = { error: String(error?.message ?? error).slice(0, 1000) };
          log(`  ${path.id} fast host failed: ${row.fast.error}`);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const direct = rows.get("direct")?.fast?.messagesPerS ?? null;
  for (const row of rows.values()) {
    if (row.fast?.messagesPerS !== undefined)
      row.fast.ratioVsDirect = direct === null ? null : round(row.fast.messagesPerS / direct, 3);
  }
  return {
    id: workload.id,
    kind: workload.kind,
    label: workload.label,
    uri: null,
    contentBytes: null,
    count: opts.counts.flood,
    results: [...rows.values()],
  };
}
