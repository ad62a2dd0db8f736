#!/usr/bin/env node
/**
 * `npm run bench`: mcp-normalizer against the proxies people use today — supergateway
 * and mcp-proxy — and against no proxy at all, on the same machine, in the same run, interleaved.
 * Writes bench/results/suite.json (or quick.json with --quick); `scripts/bench-readme.mjs` turns it
 * into the table of docs/benchmarks.md. Progress goes to stderr, a summary to stdout. See notes/bench.md.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import os from "node:os";
import { addRatios, evaluateTargets } from "./suite/analysis.mjs";
import { USAGE, parseOptions } from "./suite/options.mjs";
import { ROOT, pathById } from "./suite/paths.mjs";
import { WORKLOADS, runBigWorkload, runCallsWorkloads } from "./suite/workloads.mjs";
import { runFloodWorkload } from "./suite/flood.mjs";
import { runStartupWorkload } from "./suite/startup.mjs";
import { runBurstWorkload } from "./burst/runBurst.mjs";
import { mcpnCliOf } from "./suite/paths.mjs";

/** Version of the results file's shape; bump when a field changes meaning. */
export const RESULTS_SCHEMA = "mcp-normalizer-bench/1";

const log = (line) => process.stderr.write(`${line}\n`);

function versionOf(pkg) {
  try {
    return JSON.parse(readFileSync(join(ROOT, "node_modules", pkg, "package.json"), "utf8")).version;
  } catch {
    return null;
  }
}

function gitCommit() {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return null;
  }
}

async function main() {
  let opts;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (error) {
    log(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const startedAt = new Date();
  const startLoad = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const selected = opts.paths.map(pathById);
  const workloads = [];
  const build = (complete) => ({
    schema: RESULTS_SCHEMA,
    complete,
    mode: opts.mode,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    // Load averages at start and end: the machine is shared, and a busy one widens every spread.
    loadAverage: { start: startLoad, end: os.loadavg().map((x) => Math.round(x * 100) / 100) },
    machine: {
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      arch: os.arch(),
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? null,
      totalMemBytes: os.totalmem(),
    },
    versions: {
      mcpNormalizer: JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version,
      commit: gitCommit(),
      supergateway: versionOf("supergateway"),
      mcpProxy: versionOf("mcp-proxy"),
      sdk: versionOf("@modelcontextprotocol/sdk"),
    },
    options: {
      counts: opts.counts,
      burstSessions: opts.burstSessions,
      big50Paths: opts.big50Paths,
      floodStallMs: opts.stallMs,
      warmupCalls: opts.warmupCalls,
      callTimeoutMs: opts.callTimeoutMs,
      bigTimeoutMs: opts.bigTimeoutMs,
      startTimeoutMs: opts.startTimeoutMs,
      pathBudgetMs: opts.pathBudgetMs,
    },
    paths: selected.map(({ id, product, kind, label, bigOnly }) => ({
      id,
      product,
      kind,
      label,
      bigOnly: bigOnly === true,
    })),
    workloads,
    targets: evaluateTargets(workloads),
  });
  const out = resolve(ROOT, opts.out);
  const write = (complete) => {
    const results = build(complete);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
    return results;
  };
  const report = (result, ms) => {
    workloads.push(addRatios(result));
    // Written after every workload, so a run that is stopped early still leaves what it measured.
    write(false);
    log(`  ${result.id} done in ${(ms / 1000).toFixed(1)} s`);
    for (const r of result.results) {
      log(
        `  ${r.path.padEnd(19)} ${r.status === "ok" ? `median ${String(r.medianMs).padStart(9)} ms  ×direct ${String(r.ratioVsDirect ?? "-").padStart(6)}  ×peer ${String(r.ratioVsFastestPeer ?? "-").padStart(6)}` : `FAILED ${r.error}`}`,
      );
    }
  };
  const chosen = WORKLOADS.filter((w) => opts.workloads.includes(w.id) && opts.counts[w.count] > 0);
  const calls = chosen.filter((w) => w.kind === "calls");
  if (calls.length > 0) {
    const paths = selected.filter((p) => p.bigOnly !== true);
    log(
      `calls workloads (${calls.map((w) => `${w.id} ×${opts.counts[w.count]}`).join(", ")}) on ${paths.map((p) => p.id).join(", ")}`,
    );
    await runCallsWorkloads(calls, paths, opts, log, report);
  }
  const failedBig = new Map();
  for (const workload of chosen.filter((w) => w.kind === "big")) {
    const on = workload.id === "read-blob-50m" ? selected.filter((p) => opts.big50Paths.includes(p.id)) : selected;
    log(
      `${workload.id}: ${opts.counts[workload.count]} read(s) per path, a fresh proxy for each, on ${on.map((p) => p.id).join(", ")}`,
    );
    const t0 = performance.now();
    const result = await runBigWorkload(workload, on, opts, log, failedBig);
    for (const r of result.results)
      if (r.status === "failed" && !failedBig.has(r.path)) failedBig.set(r.path, `${result.id}: ${r.error}`);
    report(result, performance.now() - t0);
  }
  for (const workload of chosen.filter((w) => w.kind === "flood")) {
    log(
      `${workload.id}: ${opts.counts.flood} notifications with the host stalled ${opts.stallMs / 1000} s, ${opts.counts.floodFast} read at full speed, on the direct and mcp-normalizer paths selected`,
    );
    const t0 = performance.now();
    const result = await runFloodWorkload(workload, selected, opts, log);
    workloads.push(result);
    write(false);
    log(`  ${result.id} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }

  const cli = mcpnCliOf("mcpn-stdio");
  for (const workload of chosen.filter((w) => w.kind === "startup" || w.kind === "burst")) {
    log(
      workload.kind === "startup"
        ? `${workload.id}: ${opts.counts.startup} paired runs each`
        : `${workload.id}: N = ${opts.burstSessions.join(", ")} sessions, ${opts.counts.burstReads} reads each, direct / mcpn-mcp / mcpn-ws`,
    );
    const t0 = performance.now();
    const run = workload.kind === "startup" ? runStartupWorkload : runBurstWorkload;
    const result = await run(workload, opts, log, { root: ROOT, cli });
    workloads.push(result);
    write(false);
    log(`  ${result.id} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }

  const results = write(true);
  const met = results.targets.filter((t) => t.met === true).length;
  const missed = results.targets.filter((t) => t.met === false);
  process.stdout.write(
    `bench: wrote ${out}\n  targets met ${met}, missed ${missed.length}, not measured ${results.targets.length - met - missed.length}\n`,
  );
  // Every target on a line of its own: PASS, FAIL, or "--" when this run did not measure it.
  for (const t of results.targets) {
    const mark = t.met === true ? "PASS" : t.met === false ? "FAIL" : "  --";
    process.stdout.write(
      `  ${mark} ${t.text}: ${t.value ?? "-"} ${t.unit} (limit ${t.limit})${t.floor == null ? "" : `; the transport's byte relay: ${t.floor}`}${t.note === null || t.note === undefined ? "" : ` — ${t.note.slice(0, 200)}`}\n`,
    );
  }
  return 0;
}

process.exitCode = await main();
