/**
 * Ratios and the proxy's performance targets, computed from one run's figures only:
 * every comparison is between paths measured in the same run, interleaved.
 */
import { PATHS, PEERS } from "./paths.mjs";
import { ratio, round } from "./stats.mjs";

const byId = new Map(PATHS.map((p) => [p.id, p]));
const ok = (r) => r !== undefined && r.status === "ok" && r.medianMs !== null;

/** Adds ratioVsDirect, fastestPeer and ratioVsFastestPeer to every result of a workload. */
export function addRatios(workload) {
  const direct = workload.results.find((r) => r.path === "direct");
  for (const result of workload.results) {
    const path = byId.get(result.path);
    const peers = workload.results.filter(
      (r) => ok(r) && PEERS.has(byId.get(r.path).product) && byId.get(r.path).kind === path.kind,
    );
    const fastest = peers.length === 0 ? null : peers.reduce((a, b) => (a.medianMs <= b.medianMs ? a : b));
    result.ratioVsDirect = ok(result) && ok(direct) ? ratio(result.medianMs, direct.medianMs) : null;
    result.fastestPeer = fastest === null ? null : fastest.path;
    result.ratioVsFastestPeer = ok(result) && fastest !== null ? ratio(result.medianMs, fastest.medianMs) : null;
    result.cpuMsPerCall =
      result.proxy?.cpuSeconds == null || result.calls === 0
        ? null
        : round((result.proxy.cpuSeconds * 1000) / result.calls, 3);
  }
  return workload;
}

/** Upstream message bytes of a blob read: JSON-RPC envelope + base64 of `contentBytes`. */
function upstreamMessageBytes(workload) {
  return Math.ceil(workload.contentBytes / 3) * 4 + 128;
}

/**
 * The targets, each {id, text, workload, path, value, limit, unit, met, note}. `met` is true/false,
 * or null when a figure it needs was not measured in this run (path or workload not selected).
 * A path that failed misses its target.
 */
export function evaluateTargets(workloads) {
  const targets = [];
  const find = (w, p) => workloads.find((x) => x.id === w)?.results.find((r) => r.path === p);
  const add = (t) => targets.push(t);

  const judge = (result, measure, limit) => {
    if (result === undefined) return { value: null, met: null, note: "not measured" };
    if (result.status !== "ok") return { value: null, met: false, note: `path failed: ${result.error}` };
    const value = measure(result);
    return {
      value,
      met: value === null ? null : value <= limit,
      note: value === null ? "no baseline in this run" : null,
    };
  };

  // Small reads (a text read, and a text-in-base64 read the proxy rewrites): what the proxy adds
  // over direct stdio is at most half of what the best peer of the same transport kind adds.
  const overhead = (r, direct) => (ok(r) && ok(direct) ? r.medianMs - direct.medianMs : null);
  for (const w of ["read-text-1k", "read-blob-76"]) {
    const direct = find(w, "direct");
    for (const p of ["mcpn-mcp", "mcpn-sse", "mcpn-ws"]) {
      const r = find(w, p);
      const peer = r?.fastestPeer === null || r?.fastestPeer === undefined ? undefined : find(w, r.fastestPeer);
      // The same figure for the transport's byte relay (bench/transportRelay.mjs), when it ran: what
      // the transport and the extra hop cost before any proxy does anything.
      const relayOverhead = overhead(find(w, p.replace("mcpn-", "relay-")), direct);
      const peerOverhead = overhead(peer, direct);
      const floor =
        relayOverhead === null || peerOverhead === null || peerOverhead <= 0
          ? null
          : round(relayOverhead / peerOverhead, 3);
      add({
        id: `${w}/${p}/overhead-vs-peer`,
        text: `${p} ${w}: overhead over direct stdio ≤ 0.5× the best ${byId.get(p).kind} peer's`,
        workload: w,
        path: p,
        limit: 0.5,
        unit: "× peer overhead",
        baseline: r?.fastestPeer ?? null,
        floor,
        ...judge(
          r,
          (x) => {
            const ours = overhead(x, direct);
            const theirs = overhead(peer, direct);
            return ours === null || theirs === null || theirs <= 0 ? null : round(ours / theirs, 3);
          },
          0.5,
        ),
      });
    }
    // stdio → stdio: no more than 1.15× a byte relay that parses nothing (the floor of any stdio proxy).
    const r = find(w, "mcpn-stdio");
    const relay = find(w, "relay-stdio");
    add({
      id: `${w}/mcpn-stdio/vs-relay`,
      text: `mcpn-stdio ${w}: median ≤ 1.15× the byte relay`,
      workload: w,
      path: "mcpn-stdio",
      limit: 1.15,
      unit: "× relay",
      baseline: "relay-stdio",
      ...judge(r, (x) => (ok(relay) ? ratio(x.medianMs, relay.medianMs) : null), 1.15),
    });
  }

  // 50 MiB text-in-base64 read: over /mcp and /ws ≤ 0.05× supergateway's wall time on the same
  // transport; proxy CPU ≤ 1.5 s over stdio; memory growth ≤ 4× the upstream message everywhere.
  for (const [p, peer] of [
    ["mcpn-mcp", "sg-mcp"],
    ["mcpn-ws", "sg-ws"],
  ]) {
    const r = find("read-blob-50m", p);
    const sg = find("read-blob-50m", peer);
    add({
      id: `read-blob-50m/${p}/vs-supergateway`,
      text: `${p} 50 MiB read: wall ≤ 0.05× ${peer}`,
      workload: "read-blob-50m",
      path: p,
      limit: 0.05,
      unit: `× ${peer}`,
      baseline: peer,
      ...judge(r, (x) => (ok(sg) ? ratio(x.medianMs, sg.medianMs) : null), 0.05),
    });
  }
  const big50 = workloads.find((x) => x.id === "read-blob-50m");
  if (big50 !== undefined) {
    const message = upstreamMessageBytes(big50);
    for (const p of ["mcpn-stdio", "mcpn-mcp", "mcpn-sse", "mcpn-ws"]) {
      const r = find("read-blob-50m", p);
      add({
        id: `read-blob-50m/${p}/rss-growth`,
        text: `${p} 50 MiB read: proxy RSS growth ≤ 4× the upstream message (${(message / 1048576).toFixed(1)} MiB)`,
        workload: "read-blob-50m",
        path: p,
        limit: 4,
        unit: "× message",
        baseline: null,
        ...judge(
          r,
          (x) =>
            x.proxy?.peakRssBytes == null || x.proxy?.rssBeforeBytes == null
              ? null
              : round((x.proxy.peakRssBytes - x.proxy.rssBeforeBytes) / message, 2),
          4,
        ),
      });
    }
    const r = find("read-blob-50m", "mcpn-stdio");
    add({
      id: "read-blob-50m/mcpn-stdio/cpu",
      text: "mcpn-stdio 50 MiB read: proxy CPU ≤ 1.5 s",
      workload: "read-blob-50m",
      path: "mcpn-stdio",
      limit: 1.5,
      unit: "s",
      baseline: null,
      ...judge(r, (x) => x.proxy?.cpuSeconds ?? null, 1.5),
    });
  }

  // Burst fairness: N sessions at once over /mcp and /ws against the same clients going direct.
  const burst = workloads.find((x) => x.id === "burst");
  for (const run of burst?.runs ?? []) {
    for (const p of ["mcp", "ws"]) {
      const row = run[p];
      const failed =
        row.p99Ms === null
          ? { value: null, met: false, note: `no run completed: ${row.firstError ?? "unknown"}` }
          : null;
      const direct =
        run.direct.p99Ms === null
          ? { value: null, met: null, note: `direct run failed: ${run.direct.firstError ?? "unknown"}` }
          : null;
      const what = `burst N=${run.sessions} mcpn-${p}`;
      add({
        id: `burst/${run.sessions}/mcpn-${p}/p99`,
        text: `${what}: p99 ≤ 1.5× direct`,
        workload: "burst",
        path: `mcpn-${p}`,
        limit: 1.5,
        unit: "× direct p99",
        baseline: "direct",
        ...(failed ??
          direct ?? {
            value: row.p99VsDirect,
            met: row.p99VsDirect <= 1.5,
            note: `${row.p99Ms} ms vs ${run.direct.p99Ms} ms`,
          }),
      });
      add({
        id: `burst/${run.sessions}/mcpn-${p}/throughput`,
        text: `${what}: throughput ≥ 0.9× direct`,
        workload: "burst",
        path: `mcpn-${p}`,
        limit: 0.9,
        unit: "× direct reads/s (at least)",
        baseline: "direct",
        ...(failed ??
          direct ?? {
            value: row.throughputVsDirect,
            met: row.throughputVsDirect >= 0.9,
            note: `${row.readsPerS} vs ${run.direct.readsPerS} reads/s`,
          }),
      });
      add({
        id: `burst/${run.sessions}/mcpn-${p}/errors`,
        text: `${what}: no errors`,
        workload: "burst",
        path: `mcpn-${p}`,
        limit: 0,
        unit: "errors",
        baseline: null,
        value: row.errors,
        met: row.errors === 0,
        note: row.firstError,
      });
    }
  }

  // Start-up: `--help` ≤ 2× a bare `node -e 0`; stdio initialize round trip ≤ 1.1× direct (paired medians).
  const startup = workloads.find((x) => x.id === "startup");
  if (startup !== undefined) {
    const paired = (figure, limit, id, text) =>
      add({
        id,
        text,
        workload: "startup",
        path: "mcpn-stdio",
        limit,
        unit: "× (paired median)",
        baseline: null,
        ...(figure === null
          ? { value: null, met: null, note: "not measured" }
          : figure.error !== undefined
            ? { value: null, met: false, note: figure.error }
            : {
                value: figure.ratioMedian,
                met: figure.ratioMedian <= limit,
                note: `${figure.aMedianMs} ms vs ${figure.bMedianMs} ms`,
              }),
      });
    paired(startup.help, 2, "startup/help", "mcp-normalizer --help: wall ≤ 2× node -e 0");
    paired(
      startup.initialize,
      1.1,
      "startup/initialize",
      "stdio initialize round trip (everything server): ≤ 1.1× direct",
    );
  }

  // Pass-through tools/call: no slower than the fastest peer (same transport kind).
  for (const p of ["mcpn-mcp", "mcpn-sse", "mcpn-ws"]) {
    const r = find("tools-call", p);
    add({
      id: `tools-call/${p}/vs-peer`,
      text: `${p} tools/call: median ≤ fastest peer on ${byId.get(p).kind}`,
      workload: "tools-call",
      path: p,
      limit: 1,
      unit: "× peer",
      baseline: r?.fastestPeer ?? null,
      ...judge(r, (x) => x.ratioVsFastestPeer, 1),
    });
  }
  // Backpressure (the flood workload): while the host reads nothing, the proxy's memory and
  // /healthz stay within bounds, and afterwards every message arrives, in order.
  const flood = workloads.find((x) => x.id === "flood");
  for (const p of ["mcpn-ws", "mcpn-sse", "mcpn-stdio"]) {
    const r = flood?.results.find((x) => x.path === p);
    const stalled = (measure, limit) => {
      if (r === undefined) return { value: null, met: null, note: "not measured" };
      if (r.stalled === null || r.stalled === undefined)
        return { value: null, met: false, note: `path failed: ${r.error}` };
      const value = measure(r.stalled);
      return { value, met: value === null ? null : value <= limit, note: null };
    };
    const what = `${p} flood of ${flood?.count ?? "N"}, host reading nothing`;
    add({
      id: `flood/${p}/rss`,
      text: `${what}: proxy RSS ≤ 300 MiB above idle`,
      workload: "flood",
      path: p,
      limit: 300,
      unit: "MiB",
      baseline: null,
      ...stalled((x) => (x.rssAboveIdleBytes === null ? null : round(x.rssAboveIdleBytes / 1048576, 1)), 300),
    });
    if (p !== "mcpn-stdio")
      add({
        id: `flood/${p}/healthz`,
        text: `${what}: /healthz ≤ 500 ms throughout (max)`,
        workload: "flood",
        path: p,
        limit: 500,
        unit: "ms",
        baseline: null,
        ...stalled((x) => x.healthz?.maxMs ?? null, 500),
      });
    add({
      id: `flood/${p}/delivered`,
      text: `${what}: all delivered in order afterwards`,
      workload: "flood",
      path: p,
      limit: 0,
      unit: "missing or out of order",
      baseline: null,
      ...stalled((x) => x.count - x.delivered + x.outOfOrder, 0),
    });
  }
  return targets;
}
