/**
 * The workloads of the proxy benchmark and how each is run.
 *
 * "calls" workloads (small reads, 1 MiB reads, tools/call) keep one live connection per path and
 * run them in batches, interleaved A B C … A B C … with the order rotated each round, so machine
 * drift hits every path alike. "big" workloads (10 and 50 MiB) start a fresh proxy per read — so
 * each read's peak RSS is its own — and interleave the paths per repetition the same way.
 */
import { RESOURCES } from "./content.mjs";
import { firstContentShape, resultBytes } from "./hostClient.mjs";
import { measureProcess } from "./procStats.mjs";
import { median, quantile, round } from "./stats.mjs";

const read = (uri) => ({ method: "resources/read", params: { uri } });
const echo = { method: "tools/call", params: { name: "echo", arguments: { text: "ping" } } };

/** `count` names the option (see options.mjs) that sets how many calls or reads the workload makes. */
export const WORKLOADS = [
  {
    id: "read-text-1k",
    kind: "calls",
    label: "resources/read, 1 KiB text",
    count: "small",
    batch: 50,
    request: read(RESOURCES.text1k.uri),
    resource: RESOURCES.text1k,
  },
  {
    id: "read-text-12k",
    kind: "calls",
    label: "resources/read, 12 KiB text",
    count: "small",
    batch: 50,
    request: read(RESOURCES.text12k.uri),
    resource: RESOURCES.text12k,
  },
  {
    id: "read-blob-76",
    kind: "calls",
    label: "resources/read, 76-byte text-in-base64 blob",
    count: "small",
    batch: 50,
    request: read(RESOURCES.blob76.uri),
    resource: RESOURCES.blob76,
  },
  {
    id: "read-blob-1m",
    kind: "calls",
    label: "resources/read, 1 MiB text-in-base64 blob",
    count: "mib1",
    batch: 5,
    request: read(RESOURCES.blob1m.uri),
    resource: RESOURCES.blob1m,
  },
  {
    id: "tools-call",
    kind: "calls",
    label: "tools/call echo (no resources, pure pass-through)",
    count: "tools",
    batch: 50,
    request: echo,
    resource: null,
  },
  {
    id: "read-blob-10m",
    kind: "big",
    label: "resources/read, 10 MiB text-in-base64 blob",
    count: "big10",
    request: read(RESOURCES.blob10m.uri),
    resource: RESOURCES.blob10m,
  },
  {
    id: "read-blob-50m",
    kind: "big",
    label: "resources/read, 50 MiB text-in-base64 blob",
    count: "big50",
    request: read(RESOURCES.blob50m.uri),
    resource: RESOURCES.blob50m,
  },
  // Backpressure (bench/suite/flood.mjs): its own upstream and raw hosts, on direct and mcp-normalizer paths only.
  // Whole-process start-up (bench/suite/startup.mjs): --help against node -e 0, stdio initialize against direct.
  {
    id: "startup",
    kind: "startup",
    label:
      "start-up: mcp-normalizer --help vs node -e 0; initialize through stdio in front of the everything server vs direct",
    count: "startup",
    request: { method: "initialize", params: {} },
    resource: null,
  },
  // Fairness under a burst (bench/burst/): N sessions at once over /mcp and /ws in front of a streamable HTTP upstream.
  {
    id: "burst",
    kind: "burst",
    label:
      "N host sessions opened at once, sequential 1 KiB text reads each, over /mcp and /ws to a streamable HTTP upstream vs the same clients direct",
    count: "burstReads",
    request: { method: "resources/read", params: { uri: RESOURCES.text1k.uri } },
    resource: RESOURCES.text1k,
  },
  {
    id: "flood",
    kind: "flood",
    label: "an upstream floods notifications/message while the host reads nothing, then everything",
    count: "flood",
    request: { method: "tools/call", params: { name: "flood" } },
    resource: null,
  },
];

/** A path's row before figures: what failed and why, if anything did. */
function emptyRow(path) {
  return {
    path: path.id,
    status: "ok",
    error: null,
    calls: 0,
    latenciesMs: [],
    bytes: [],
    shape: null,
    proxy: null,
    truncated: false,
    hostCpuMs: 0,
    readErrors: [],
  };
}

function fail(row, stage, error) {
  row.status = "failed";
  row.error = `${stage}: ${String(error?.message ?? error).slice(0, 2000)}`;
}

/** One checked call: records the latency, payload bytes and shape of what came back. */
async function timedCall(handle, workload, row, timeoutMs) {
  const { result, ms } = await handle.call(workload.request, timeoutMs);
  row.latenciesMs.push(ms);
  row.calls++;
  if (row.bytes.length < 3 || workload.kind === "big") row.bytes.push(resultBytes(result));
  if (workload.resource !== null && row.shape === null) row.shape = firstContentShape(result);
  return result;
}

/**
 * Runs every "calls" workload over one live connection per path (started once: start-up is not
 * what is measured, and on 2 cores it would dominate a quick run). A path whose connection died
 * in one workload is restarted for the next.
 */
export async function runCallsWorkloads(workloads, paths, opts, log, onDone) {
  const ctx = { upstreamArgs: [], startTimeoutMs: opts.startTimeoutMs, big: false };
  const live = new Map();
  const startErrors = new Map();
  const ensureStarted = async (path) => {
    if (live.has(path.id)) return;
    try {
      live.set(path.id, await path.start(ctx));
      startErrors.delete(path.id);
    } catch (error) {
      startErrors.set(path.id, error);
      log(`  ${path.id}: failed to start: ${error.message}`);
    }
  };
  try {
    for (const workload of workloads) {
      for (const path of paths) await ensureStarted(path);
      const t0 = performance.now();
      const rows = new Map(paths.map((p) => [p.id, emptyRow(p)]));
      for (const [id, error] of startErrors) fail(rows.get(id), "start", error);
      await runCalls(workload, live, rows, opts);
      for (const [id, row] of rows) {
        if (row.status !== "ok" && live.has(id)) {
          await live.get(id).close();
          live.delete(id);
        }
      }
      onDone(summarize(workload, paths, rows, opts.counts[workload.count]), performance.now() - t0);
    }
  } finally {
    for (const handle of live.values()) await handle.close();
  }
}

async function runCalls(workload, live, rows, opts) {
  const count = opts.counts[workload.count];
  // Warm-up: JIT, connection pools, the upstream's content cache. Not measured.
  const warmup = Math.min(opts.warmupCalls, count);
  for (const [id, handle] of live) {
    try {
      for (let i = 0; i < warmup; i++) await handle.call(workload.request, opts.callTimeoutMs);
    } catch (error) {
      fail(rows.get(id), "warm-up", error);
    }
  }
  const order = [...live.keys()].filter((id) => rows.get(id).status === "ok");
  const meters = new Map(order.map((id) => [id, measureProcess(live.get(id).proxyPid)]));
  const spentMs = new Map(order.map((id) => [id, 0]));
  for (let round = 0; ; round++) {
    const active = order.filter(
      (id) => rows.get(id).status === "ok" && !rows.get(id).truncated && rows.get(id).calls < count,
    );
    if (active.length === 0) break;
    const rotated = active.map((_, i) => active[(i + round) % active.length]);
    for (const id of rotated) {
      const row = rows.get(id);
      const n = Math.min(workload.batch, count - row.calls);
      const start = performance.now();
      const hostCpu = process.cpuUsage();
      try {
        for (let i = 0; i < n; i++) await timedCall(live.get(id), workload, row, opts.callTimeoutMs);
      } catch (error) {
        fail(row, `call ${row.calls + 1}`, error);
      }
      spentMs.set(id, spentMs.get(id) + performance.now() - start);
      const used = process.cpuUsage(hostCpu);
      row.hostCpuMs += (used.user + used.system) / 1000;
      // Bound every run in time: a path too slow for its budget keeps what it measured.
      if (row.status === "ok" && row.calls < count && spentMs.get(id) > opts.pathBudgetMs) row.truncated = true;
    }
  }
  for (const [id, meter] of meters) rows.get(id).proxy = meter.stop();
}

/**
 * `failedBefore` maps a path to the error it failed a smaller big read with: such a path is not
 * tried again on a bigger one (mcp-proxy fails at 10 MiB; at 50 MiB it would only burn the
 * timeout) and is recorded as failed, with the reason.
 */
export async function runBigWorkload(workload, paths, opts, log, failedBefore = new Map()) {
  const reps = opts.counts[workload.count];
  const rows = new Map(paths.map((p) => [p.id, emptyRow(p)]));
  for (const [id, reason] of failedBefore)
    if (rows.has(id)) fail(rows.get(id), "not attempted", new Error(`failed a smaller read: ${reason}`));
  const ctx = {
    upstreamArgs: ["--prepare", String(workload.resource.bytes)],
    startTimeoutMs: opts.startTimeoutMs,
    big: true,
  };
  const perRead = new Map(paths.map((p) => [p.id, []]));
  for (let rep = 0; rep < reps; rep++) {
    const order = paths.filter((p) => rows.get(p.id).status === "ok" && !rows.get(p.id).truncated);
    const rotated = order.map((_, i) => order[(i + rep) % order.length]);
    for (const path of rotated) {
      const row = rows.get(path.id);
      let handle;
      try {
        handle = await path.start(ctx);
      } catch (error) {
        fail(row, "start", error);
        continue;
      }
      try {
        // One small round trip first, so the read below is timed on a settled connection.
        await handle.call(
          { method: "tools/call", params: { name: "echo", arguments: { text: "ready" } } },
          opts.callTimeoutMs,
        );
        const meter = measureProcess(handle.proxyPid);
        const hostCpu = process.cpuUsage();
        let proxy;
        try {
          await timedCall(handle, workload, row, opts.bigTimeoutMs);
        } finally {
          proxy = meter.stop();
          const used = process.cpuUsage(hostCpu);
          row.hostCpuMs += (used.user + used.system) / 1000;
        }
        perRead.get(path.id).push(proxy);
        log(
          `  ${path.id} rep ${rep + 1}/${reps}: ${row.latenciesMs.at(-1).toFixed(0)} ms${proxy === null ? "" : `, proxy cpu ${proxy.cpuSeconds} s, peak rss ${mib(proxy.peakRssBytes)} MiB`}`,
        );
      } catch (error) {
        if (row.calls === 0) {
          fail(row, `read ${rep + 1}`, error);
        } else {
          // Earlier reads succeeded: keep their figures, record this one's error, try no more.
          row.readErrors.push(`read ${rep + 1}: ${String(error?.message ?? error).slice(0, 500)}`);
          row.truncated = true;
        }
        log(`  ${path.id} rep ${rep + 1}/${reps}: failed: ${row.error ?? row.readErrors.at(-1)}`);
      } finally {
        await handle.close();
      }
      if (row.status === "ok" && row.latenciesMs.reduce((a, b) => a + b, 0) > opts.pathBudgetMs) row.truncated = true;
    }
  }
  for (const [id, reads] of perRead) rows.get(id).proxy = worstOf(reads);
  return summarize(workload, paths, rows, reps);
}

/** Per-read proxy figures of a big workload → the worst (highest) CPU and RSS of its reads. */
function worstOf(reads) {
  const known = reads.filter((r) => r !== null);
  if (known.length === 0) return null;
  const max = (key) => {
    const values = known.map((r) => r[key]).filter((v) => v !== null);
    return values.length === 0 ? null : Math.max(...values);
  };
  return {
    cpuSeconds: max("cpuSeconds"),
    peakRssBytes: max("peakRssBytes"),
    rssBeforeBytes: max("rssBeforeBytes"),
    rssMethod: known[0].rssMethod,
    reads: known.length,
  };
}

function mib(bytes) {
  return bytes === null ? "?" : (bytes / 1048576).toFixed(0);
}

function summarize(workload, paths, rows, count) {
  return {
    id: workload.id,
    kind: workload.kind,
    label: workload.label,
    uri: workload.request.params.uri ?? null,
    contentBytes: workload.resource?.bytes ?? null,
    count,
    results: paths.map((path) => {
      const row = rows.get(path.id);
      const medianMs = median(row.latenciesMs);
      const totalMs = row.latenciesMs.reduce((a, b) => a + b, 0);
      return {
        path: path.id,
        status: row.status,
        error: row.error,
        calls: row.calls,
        truncated: row.truncated,
        medianMs: round(medianMs),
        p90Ms: round(quantile(row.latenciesMs, 0.9)),
        minMs: round(row.latenciesMs.length === 0 ? null : Math.min(...row.latenciesMs)),
        readsMs: workload.kind === "big" ? row.latenciesMs.map((ms) => round(ms, 1)) : undefined,
        // Big reads that failed after others had succeeded (the figures are the successful reads').
        readErrors: workload.kind === "big" ? row.readErrors : undefined,
        // Calls per second of back-to-back calls on one connection; MiB/s of content for big reads.
        throughputPerS: row.calls === 0 ? null : round((row.calls * 1000) / totalMs, 2),
        contentMiBPerS:
          workload.resource === null || row.calls === 0
            ? null
            : round((row.calls * workload.resource.bytes) / 1048576 / (totalMs / 1000), 2),
        // CPU the host (this process: SDK client + transport) spent per call: what a path costs the host.
        hostCpuMsPerCall: row.calls === 0 ? null : round(row.hostCpuMs / row.calls, 3),
        bytesPerCall: row.bytes.length === 0 ? null : median(row.bytes),
        bytesDelivered: row.bytes.length === 0 ? null : median(row.bytes) * row.calls,
        delivered: row.shape,
        proxy: row.proxy,
      };
    }),
  };
}
