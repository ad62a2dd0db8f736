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

  // Small reads: ≤ 0.5× the fastest peer on the same transport kind; stdio ≤ 1.3× direct.
  for (const w of ["read-text-1k", "read-text-12k", "read-blob-76"]) {
    for (const p of ["mcpn-mcp", "mcpn-sse", "mcpn-ws"]) {
      const r = find(w, p);
      add({
        id: `${w}/${p}/vs-peer`,
        text: `${p} ${w}: median ≤ 0.5× fastest peer on ${byId.get(p).kind}`,
        workload: w,
        path: p,
        limit: 0.5,
        unit: "× peer",
        baseline: r?.fastestPeer ?? null,
        ...judge(r, (x) => x.ratioVsFastestPeer, 0.5),
      });
    }
    const r = find(w, "mcpn-stdio");
    add({
      id: `${w}/mcpn-stdio/vs-direct`,
      text: `mcpn-stdio ${w}: median ≤ 1.3× direct`,
      workload: w,
      path: "mcpn-stdio",
      limit: 1.3,
      unit: "× direct",
      baseline: "direct",
      ...judge(r, (x) => x.ratioVsDirect, 1.3),
    });
  }

  // Big reads: 50 MiB via /mcp or /ws ≤ 0.25× supergateway on the same transport, and faster than direct stdio.
  for (const [p, peer] of [
    ["mcpn-mcp", "sg-mcp"],
    ["mcpn-ws", "sg-ws"],
  ]) {
    const r = find("read-blob-50m", p);
    const sg = find("read-blob-50m", peer);
    add({
      id: `read-blob-50m/${p}/vs-supergateway`,
      text: `${p} 50 MiB read: ≤ 0.25× ${peer}`,
      workload: "read-blob-50m",
      path: p,
      limit: 0.25,
      unit: `× ${peer}`,
      baseline: peer,
      ...judge(r, (x) => (ok(sg) ? ratio(x.medianMs, sg.medianMs) : null), 0.25),
      ...(r !== undefined && !ok(sg) && r.status === "ok"
        ? { met: true, note: `${peer} failed or was not run: ${sg?.error ?? "not measured"}` }
        : {}),
    });
    add({
      id: `read-blob-50m/${p}/vs-direct`,
      text: `${p} 50 MiB read: faster than direct SDK stdio (raised cap)`,
      workload: "read-blob-50m",
      path: p,
      limit: 1,
      unit: "× direct",
      baseline: "direct",
      ...judge(r, (x) => x.ratioVsDirect, 1),
    });
  }

  // Proxy memory and CPU on the 50 MiB read, every mcp-normalizer path. (At 10 MiB, 4× the message
  // is below what an idle Node process holds, so the 10 MiB figures are reported, not judged.)
  for (const w of ["read-blob-50m"]) {
    const workload = workloads.find((x) => x.id === w);
    if (workload === undefined) continue;
    const message = upstreamMessageBytes(workload);
    for (const p of ["mcpn-stdio", "mcpn-mcp", "mcpn-sse", "mcpn-ws"]) {
      const r = find(w, p);
      add({
        id: `${w}/${p}/rss`,
        text: `${p} ${w}: proxy peak RSS ≤ 4× the upstream message (${(message / 1048576).toFixed(1)} MiB)`,
        workload: w,
        path: p,
        limit: 4,
        unit: "× message",
        baseline: null,
        ...judge(r, (x) => (x.proxy?.peakRssBytes == null ? null : round(x.proxy.peakRssBytes / message, 2)), 4),
      });
      add({
        id: `${w}/${p}/cpu`,
        text: `${p} ${w}: proxy CPU ≤ 2 s per read`,
        workload: w,
        path: p,
        limit: 2,
        unit: "s",
        baseline: null,
        ...judge(r, (x) => x.proxy?.cpuSeconds ?? null, 2),
      });
    }
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
