#!/usr/bin/env node
/**
 * Summarizes proxy benchmark results (bench/results/suite.json, written by `npm run bench`) into
 * docs/benchmarks.md between `<!-- bench:start -->` and `<!-- bench:end -->`, so the published
 * figures always come from a results file, never from hand edits. It edits nothing outside the
 * markers; when they are missing it prints the block to stdout instead.
 *
 *   node scripts/bench-readme.mjs [RESULTS.json] [TARGET.md (default docs/benchmarks.md)] [--stdout]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";

export const START_MARKER = "<!-- bench:start -->";
export const END_MARKER = "<!-- bench:end -->";

const SMALL = [
  ["read-text-1k", "1 KiB text"],
  ["read-text-12k", "12 KiB text"],
  ["read-blob-76", "76 B blob"],
  ["tools-call", "tools/call"],
  ["read-blob-1m", "1 MiB blob"],
];
const BIG = [
  ["read-blob-10m", "10 MiB"],
  ["read-blob-50m", "50 MiB"],
];

const fmtMs = (ms) =>
  ms === null || ms === undefined
    ? "–"
    : ms >= 1000
      ? `${(ms / 1000).toFixed(2)} s`
      : ms >= 100
        ? `${ms.toFixed(0)} ms`
        : `${ms.toFixed(2)} ms`;
const fmtX = (x) => (x === null || x === undefined ? null : `${x < 10 ? x.toFixed(2) : x.toFixed(1)}×`);
const fmtMiB = (bytes) =>
  bytes === null || bytes === undefined ? "–" : `${(bytes / 1048576).toFixed(bytes < 10 * 1048576 ? 1 : 0)} MiB`;
/** ", the median of R runs per N and path (order rotated)" when a burst was repeated. */
const burstRunsNote = (burst) => {
  const runs = burst.runs[0]?.direct?.runs ?? 1;
  return runs > 1 ? `; each figure the median of ${runs} runs per N and path, their order rotated` : "";
};
const short = (text, n = 70) =>
  (text.length <= n ? text : `${text.slice(0, n - 1)}…`).replace(/\|/g, "\\|").replace(/\s+/g, " ");

function resultOf(results, workloadId, pathId) {
  return results.workloads.find((w) => w.id === workloadId)?.results.find((r) => r.path === pathId);
}

function smallCell(r, pathId) {
  if (r === undefined) return "–";
  if (r.status !== "ok") return `failed: ${short(r.error ?? "", 40)}`;
  const ratios = [];
  if (pathId !== "direct" && r.ratioVsDirect !== null) ratios.push(`${fmtX(r.ratioVsDirect)} direct`);
  if (r.ratioVsFastestPeer !== null && r.fastestPeer !== pathId) ratios.push(`${fmtX(r.ratioVsFastestPeer)} peer`);
  return `${fmtMs(r.medianMs)}${ratios.length === 0 ? "" : ` (${ratios.join(", ")})`}${r.truncated ? ` [${r.calls} calls, cut by time budget]` : ""}`;
}

function bigCells(results, workloadId, pathId) {
  const r = resultOf(results, workloadId, pathId);
  if (r === undefined) return ["–", "–", "–", "–"];
  // A big read that failed after earlier reads succeeded still has their figures: show both.
  if (r.status !== "ok" && !(r.calls > 0 && r.medianMs !== null))
    return [`failed: ${short(r.error ?? "", 100)}`, "–", "–", "–"];
  const failedLater = r.status !== "ok" ? `; then failed: ${short(r.error ?? "", 60)}` : "";
  const versus = [];
  if (pathId !== "direct" && r.ratioVsDirect !== null) versus.push(`${fmtX(r.ratioVsDirect)} direct`);
  if (r.ratioVsFastestPeer !== null && r.fastestPeer !== pathId)
    versus.push(`${fmtX(r.ratioVsFastestPeer)} ${r.fastestPeer}`);
  const time = `${fmtMs(r.medianMs)}${versus.length === 0 ? "" : ` (${versus.join(", ")})`}`;
  const proxy =
    r.proxy === null || r.proxy === undefined
      ? "–"
      : `${fmtMiB(r.proxy.peakRssBytes)} / ${r.proxy.cpuSeconds ?? "–"} s`;
  const delivered = r.bytesPerCall === null ? "–" : `${fmtMiB(r.bytesPerCall)} ${r.delivered?.form ?? ""}`.trim();
  const reads = r.readErrors?.length
    ? `${r.calls} ok, ${r.readErrors.length} failed: ${short(r.readErrors[0], 60)}`
    : `${r.calls}${failedLater === "" ? "" : ` ok${failedLater}`}`;
  return [time, proxy, delivered, reads];
}

/** The Markdown block that goes between the markers. Pure: results object in, string out. */
export function renderBenchBlock(results) {
  const v = results.versions;
  const m = results.machine;
  const lines = [];
  lines.push(
    `Measured by \`npm run bench\` (${results.mode} mode) on ${results.startedAt.slice(0, 10)}: ${m.cpus} × ${m.cpuModel ?? "CPU"}, ${m.platform}, Node ${m.node}` +
      `${results.loadAverage ? `, load average ${results.loadAverage.start[0]} → ${results.loadAverage.end[0]}` : ""}; ` +
      `mcp-normalizer ${v.mcpNormalizer}${v.commit ? ` (${v.commit})` : ""}, supergateway ${v.supergateway}, mcp-proxy ${v.mcpProxy}, SDK ${v.sdk}. ` +
      "Medians of interleaved runs; ratios are to the SDK client reading the upstream directly over stdio and to the fastest peer " +
      "(supergateway, mcp-proxy) on the same transport. " +
      `All figures: \`bench/results/${results.mode === "full" ? "suite" : results.mode}.json\`; paths and method: \`notes/bench.md\`.`,
    "",
  );
  const pathIds = results.paths.map((p) => p.id);
  const label = new Map(results.paths.map((p) => [p.id, p.label]));
  const counts = results.options.counts;

  lines.push(
    `**Calls** — median per call (${counts.small} of each small read, ${counts.tools} tools/call, ${counts.mib1} reads of 1 MiB):`,
    "",
  );
  lines.push(`| path | ${SMALL.map(([, l]) => l).join(" | ")} |`, `|---|${SMALL.map(() => "---").join("|")}|`);
  for (const id of pathIds.filter((id) => !results.paths.find((p) => p.id === id).bigOnly)) {
    if (!SMALL.some(([w]) => resultOf(results, w, id) !== undefined)) continue;
    lines.push(`| ${label.get(id)} | ${SMALL.map(([w]) => smallCell(resultOf(results, w, id), id)).join(" | ")} |`);
  }
  lines.push("");

  for (const [w, l] of BIG) {
    if (!results.workloads.some((x) => x.id === w)) continue;
    lines.push(
      `**Big read, ${l}** — end-to-end time as seen by the host (median of ${counts[w === "read-blob-10m" ? "big10" : "big50"]}, a fresh proxy each), proxy peak RSS / CPU (worst read), bytes delivered to the host:`,
      "",
    );
    lines.push("| path | time | proxy peak RSS / CPU | delivered | reads |", "|---|---|---|---|---|");
    for (const id of pathIds) {
      if (resultOf(results, w, id) === undefined) continue;
      lines.push(`| ${label.get(id)} | ${bigCells(results, w, id).join(" | ")} |`);
    }
    lines.push("");
  }

  const flood = results.workloads.find((x) => x.id === "flood");
  if (flood !== undefined) {
    const stallS = (results.options.floodStallMs ?? 15000) / 1000;
    lines.push(
      `**Flood** — the upstream writes ${flood.count} \`notifications/message\` (~150 B each); the host reads nothing for ${stallS} s, then everything. Proxy RSS above idle (peak over stall and drain), \`/healthz\` every 100 ms throughout, what the upstream could write while the host read nothing, then the drain; and the same flood read at full speed:`,
      "",
    );
    lines.push(
      "| path | RSS above idle | /healthz max / p99 | written while stalled | drain | in order | fast host |",
      "|---|---|---|---|---|---|---|",
    );
    for (const r of flood.results) {
      const s = r.stalled;
      const fast =
        r.fast === null || r.fast === undefined
          ? "–"
          : r.fast.error !== undefined
            ? `failed: ${short(r.fast.error, 40)}`
            : `${r.fast.messagesPerS} msg/s${r.path === "direct" || r.fast.ratioVsDirect === null ? "" : ` (${fmtX(r.fast.ratioVsDirect)} direct)`}`;
      const name =
        r.path === "direct"
          ? "direct (the upstream's stdout read by the same raw host)"
          : (label.get(r.path) ?? r.path);
      if (s === null || s === undefined) {
        lines.push(
          `| ${name} | ${r.path === "direct" ? "–" : `failed: ${short(r.error ?? "", 60)}`} | – | – | – | – | ${fast} |`,
        );
        continue;
      }
      const health = s.healthz === null ? "–" : `${fmtMs(s.healthz.maxMs)} / ${fmtMs(s.healthz.p99Ms)}`;
      lines.push(
        `| ${name} | ${fmtMiB(s.rssAboveIdleBytes)} | ${health} | ${s.writtenWhileStalled ?? "–"} | ${fmtMs(s.drainMs)} | ${s.delivered}${s.outOfOrder === 0 ? "" : `, ${s.outOfOrder} out of order`} | ${fast} |`,
      );
    }
    lines.push("");
  }

  const startup = results.workloads.find((x) => x.id === "startup");
  if (startup !== undefined) {
    lines.push(
      `**Start-up** — whole processes, ${startup.count} paired runs (A B, B A, …), median of the pair-by-pair ratios:`,
      "",
    );
    lines.push("| what | mcp-normalizer | baseline | ratio (p25–p75) |", "|---|---|---|---|");
    const row = (name, base, f) =>
      lines.push(
        f === null
          ? `| ${name} | – | – | – |`
          : f.error !== undefined
            ? `| ${name} | failed: ${short(f.error, 60)} | – | – |`
            : `| ${name} | ${fmtMs(f.aMedianMs)} | ${base} ${fmtMs(f.bMedianMs)} | ${fmtX(f.ratioMedian)} (${fmtX(f.ratioP25)}–${fmtX(f.ratioP75)}) |`,
      );
    row("`mcp-normalizer --help`", "`node -e 0`", startup.help);
    row("spawn → `initialize` answered, `stdio` in front of the everything server", "direct", startup.initialize);
    if (startup.relayInitialize !== undefined)
      row(
        "reference: spawn → `initialize` answered through the byte relay (Node's boot, no proxy code)",
        "direct",
        startup.relayInitialize,
      );
    lines.push("");
  }

  const burst = results.workloads.find((x) => x.id === "burst");
  if (burst !== undefined) {
    lines.push(
      `**Burst** — N sessions opened at once, ${burst.reads} sequential 1 KiB reads each, to a streamable HTTP upstream (SDK server): p50 / p99 / max latency, first reads' p99, reads per second, errors${burstRunsNote(burst)}:`,
      "",
    );
    lines.push(
      "| N | path | p50 | p99 | max | first-read p99 | reads/s | errors |",
      "|---|---|---|---|---|---|---|---|",
    );
    for (const run of burst.runs) {
      for (const p of ["direct", "mcp", "ws"]) {
        const r = run[p];
        const versus = p === "direct" ? "" : ` (${fmtX(r.p99VsDirect) ?? "–"} direct)`;
        const rate =
          p === "direct"
            ? `${r.readsPerS ?? "–"}`
            : `${r.readsPerS ?? "–"} (${fmtX(r.throughputVsDirect) ?? "–"} direct)`;
        lines.push(
          `| ${run.sessions} | ${p === "direct" ? "direct" : `mcp-normalizer /${p}`} | ${fmtMs(r.p50Ms)} | ${fmtMs(r.p99Ms)}${versus} | ${fmtMs(r.maxMs)} | ${fmtMs(r.firstReadP99Ms)} | ${rate} | ${r.errors}${r.firstError ? `: ${short(r.firstError, 40)}` : ""} |`,
        );
      }
    }
    lines.push("");
  }

  const judged = results.targets.filter((t) => t.met !== null);
  const missed = judged.filter((t) => t.met === false);
  lines.push(
    `**Targets**: ${judged.length - missed.length} of ${judged.length} met${judged.length < results.targets.length ? `, ${results.targets.length - judged.length} not measured in this run` : ""}.`,
    "",
  );
  if (judged.length > 0) {
    lines.push("| target | figure | limit | a byte relay's figure | |", "|---|---|---|---|---|");
    for (const t of judged) {
      const figure = t.value === null ? short(t.note ?? "–", 60) : `${t.value} ${t.unit}`;
      const floor = t.floor == null ? "–" : `${t.floor} ${t.unit}`;
      lines.push(`| ${t.text} | ${figure} | ${t.limit} ${t.unit} | ${floor} | ${t.met ? "met" : "**missed**"} |`);
    }
  }
  return lines.join("\n");
}

/** The target file's text with the block between the markers replaced, or null when the markers are missing. */
export function replaceBetweenMarkers(readme, block) {
  const start = readme.indexOf(START_MARKER);
  const end = readme.indexOf(END_MARKER);
  if (start === -1 || end === -1 || end < start) return null;
  return `${readme.slice(0, start + START_MARKER.length)}\n${block}\n${readme.slice(end)}`;
}

const USAGE = `Usage: node scripts/bench-readme.mjs [RESULTS.json [DOC.md]] [--stdout]

Renders the figures block from a bench results file (default bench/results/suite.json) and writes
it between the markers in DOC.md (default docs/benchmarks.md).

  --stdout     print the block instead of writing it
  -h, --help   this help
`;

function main(argv) {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(USAGE);
    return 0;
  }
  const unknown = argv.find((a) => a.startsWith("-") && a !== "--stdout");
  if (unknown !== undefined) {
    process.stderr.write(`bench-readme: unknown option ${JSON.stringify(unknown)}\n${USAGE}`);
    return 2;
  }
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const positional = argv.filter((a) => !a.startsWith("--"));
  const resultsFile = resolve(positional[0] ?? join(root, "bench", "results", "suite.json"));
  const readmeFile = resolve(positional[1] ?? join(root, "docs", "benchmarks.md"));
  let results;
  try {
    results = JSON.parse(readFileSync(resultsFile, "utf8"));
  } catch (error) {
    process.stderr.write(
      `bench-readme: cannot read results ${resultsFile}: ${error.message} (run \`npm run bench\` first)\n`,
    );
    return 1;
  }
  const block = renderBenchBlock(results);
  if (argv.includes("--stdout")) {
    process.stdout.write(`${block}\n`);
    return 0;
  }
  let readme = null;
  try {
    readme = readFileSync(readmeFile, "utf8");
  } catch {
    readme = null;
  }
  const updated = readme === null ? null : replaceBetweenMarkers(readme, block);
  if (updated === null) {
    process.stderr.write(
      `bench-readme: no ${START_MARKER} … ${END_MARKER} markers in ${readmeFile}; printing the block instead\n`,
    );
    process.stdout.write(`${block}\n`);
    return 0;
  }
  if (updated !== readme) writeFileSync(readmeFile, updated);
  process.stdout.write(`bench-readme: updated ${readmeFile} from ${resultsFile}\n`);
  return 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
