/**
 * The benchmark's command line and environment. Every count and bound is a named option with a
 * default; flags win over BENCH_* environment variables, which win over the mode's defaults.
 */
import { parseArgs } from "node:util";
import { PATHS } from "./paths.mjs";
import { WORKLOADS } from "./workloads.mjs";

export const USAGE = `Usage: node bench/run.mjs [--quick] [options]

  --quick                   short smoke run (well under a minute: small counts, no big reads unless
                            --big10/--big50 ask for them); writes bench/results/quick.json
  --short                   every workload, small counts (a few minutes on 2 cores; burst N = 100
                            only; the 50 MiB read on mcp-normalizer's paths only, so its wall
                            ratio to supergateway is not measured); writes bench/results/short.json
  --paths a,b,…             paths to run (default: all): ${PATHS.map((p) => p.id).join(", ")}
  --workloads a,b,…         workloads to run (default: all): ${WORKLOADS.map((w) => w.id).join(", ")}
  --out FILE                results file (default bench/results/suite.json, or quick.json with --quick)
  --small N                 reads per small workload            (BENCH_SMALL; full 1000, quick 40)
  --mib1 N                  reads of the 1 MiB blob             (BENCH_MIB1;  full 100,  quick 4)
  --tools N                 tools/call round trips              (BENCH_TOOLS; full 1000, quick 40)
  --big10 N                 reads of the 10 MiB blob per path   (BENCH_BIG10; full 2,    quick 0)
  --big50 N                 reads of the 50 MiB blob per path   (BENCH_BIG50; full 1,    quick 0)
  --warmup N                unmeasured calls per path first     (BENCH_WARMUP; full 20, quick 5)
  --big50-paths a,b,…       paths the 50 MiB read runs on (default: the mcp-normalizer paths and the
                            supergateway /mcp and /ws its targets compare with; "all" for every path:
                            direct and the other peers take 2–3 minutes each)
  --startup N               paired start-up runs (--help vs node -e 0; stdio initialize vs direct)
                                                                (BENCH_STARTUP; full 10, short 6, quick 0)
  --burst-reads N           sequential reads per burst session  (BENCH_BURST_READS; full 20, short 10, quick 0)
  --burst-sessions a,b,…    burst sizes N                       (BENCH_BURST_SESSIONS; full 100,1000, short 100)
  --burst-reps N            repetitions of each burst size and path; the figures are their median
                                                                (BENCH_BURST_REPS; full 3, short and quick 1)
  --flood N                 notifications in the flood workload's stalled-host run
                                                                (BENCH_FLOOD; full 300000, quick 0)
  --flood-fast N            notifications in its fast-host run  (BENCH_FLOOD_FAST; full 300000, quick 0)
  --flood-stall-s S         how long the stalled host reads nothing (BENCH_FLOOD_STALL_S; default 15)
  --call-timeout-ms MS      bound on one small call             (default 30000)
  --big-timeout-ms MS       bound on one big read               (default 300000)
  --start-timeout-ms MS     bound on starting a proxy + connecting (default 30000)
  --path-budget-s S         time one path may spend in one workload before it is cut short (default 300)
  -h, --help                this help`;

const MODES = {
  // One 50 MiB read per path: through supergateway or the SDK's stdio client each takes minutes here.
  full: {
    small: 1000,
    mib1: 100,
    tools: 1000,
    big10: 2,
    big50: 1,
    warmup: 20,
    flood: 300_000,
    floodFast: 300_000,
    stallS: 15,
    startup: 10,
    burstReads: 20,
    burstSessions: "100,1000",
    burstReps: 3,
  },
  short: {
    small: 300,
    mib1: 10,
    tools: 300,
    big10: 1,
    big50: 1,
    warmup: 10,
    flood: 60_000,
    floodFast: 60_000,
    stallS: 5,
    startup: 6,
    burstReads: 10,
    burstSessions: "100",
    burstReps: 1,
  },
  quick: {
    small: 40,
    mib1: 4,
    tools: 40,
    big10: 0,
    big50: 0,
    warmup: 5,
    flood: 0,
    floodFast: 0,
    stallS: 15,
    startup: 0,
    burstReads: 0,
    burstSessions: "50",
  },
};

/** The 50 MiB read's default paths: the ones its targets compare (the others take minutes each). */
export const BIG50_DEFAULT_PATHS = ["mcpn-stdio", "mcpn-mcp", "mcpn-sse", "mcpn-ws", "sg-mcp", "sg-ws"];
/** --short: mcp-normalizer's own paths only (supergateway takes ~3 minutes per 50 MiB read). */
const BIG50_SHORT_PATHS = ["mcpn-stdio", "mcpn-mcp", "mcpn-ws"];

function intOption(name, flag, env, fallback) {
  const raw = flag ?? env;
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`bench: ${name} must be a whole number ≥ 0, got "${raw}"`);
  return value;
}

function sessionsOption(raw) {
  const sizes = String(raw)
    .split(",")
    .map((x) => Number(x.trim()));
  if (sizes.length === 0 || sizes.some((n) => !Number.isSafeInteger(n) || n < 1))
    throw new Error(`bench: --burst-sessions expects sizes like 100,1000, got "${raw}"`);
  return sizes;
}

function listOption(name, raw, known, fallback = known) {
  if (raw === undefined) return fallback;
  const ids = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const id of ids)
    if (!known.includes(id)) throw new Error(`bench: unknown ${name} "${id}" (known: ${known.join(", ")})`);
  return ids;
}

export function parseOptions(argv, env = process.env) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean" },
      short: { type: "boolean" },
      "big50-paths": { type: "string" },
      startup: { type: "string" },
      "burst-reads": { type: "string" },
      "burst-sessions": { type: "string" },
      "burst-reps": { type: "string" },
      paths: { type: "string" },
      workloads: { type: "string" },
      out: { type: "string" },
      small: { type: "string" },
      mib1: { type: "string" },
      tools: { type: "string" },
      big10: { type: "string" },
      big50: { type: "string" },
      warmup: { type: "string" },
      flood: { type: "string" },
      "flood-fast": { type: "string" },
      "flood-stall-s": { type: "string" },
      "call-timeout-ms": { type: "string" },
      "big-timeout-ms": { type: "string" },
      "start-timeout-ms": { type: "string" },
      "path-budget-s": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.quick && values.short) throw new Error("bench: --quick and --short are two different modes; choose one");
  const mode = values.quick ? "quick" : values.short ? "short" : "full";
  const d = MODES[mode];
  return {
    help: values.help === true,
    mode,
    out: values.out ?? `bench/results/${mode === "full" ? "suite" : mode}.json`,
    paths: listOption(
      "path",
      values.paths,
      PATHS.map((p) => p.id),
    ),
    workloads: listOption(
      "workload",
      values.workloads,
      WORKLOADS.map((w) => w.id),
    ),
    counts: {
      small: intOption("--small", values.small, env.BENCH_SMALL, d.small),
      mib1: intOption("--mib1", values.mib1, env.BENCH_MIB1, d.mib1),
      tools: intOption("--tools", values.tools, env.BENCH_TOOLS, d.tools),
      big10: intOption("--big10", values.big10, env.BENCH_BIG10, d.big10),
      big50: intOption("--big50", values.big50, env.BENCH_BIG50, d.big50),
      flood: intOption("--flood", values.flood, env.BENCH_FLOOD, d.flood),
      floodFast: intOption("--flood-fast", values["flood-fast"], env.BENCH_FLOOD_FAST, d.floodFast),
      startup: intOption("--startup", values.startup, env.BENCH_STARTUP, d.startup),
      burstReads: intOption("--burst-reads", values["burst-reads"], env.BENCH_BURST_READS, d.burstReads),
      burstReps: Math.max(1, intOption("--burst-reps", values["burst-reps"], env.BENCH_BURST_REPS, d.burstReps ?? 1)),
    },
    big50Paths:
      values["big50-paths"] === "all"
        ? PATHS.map((p) => p.id)
        : listOption(
            "path",
            values["big50-paths"],
            PATHS.map((p) => p.id),
            mode === "short" ? BIG50_SHORT_PATHS : BIG50_DEFAULT_PATHS,
          ),
    burstSessions: sessionsOption(values["burst-sessions"] ?? env.BENCH_BURST_SESSIONS ?? d.burstSessions),
    burstTimeoutMs: 900_000,
    stallMs: intOption("--flood-stall-s", values["flood-stall-s"], env.BENCH_FLOOD_STALL_S, d.stallS) * 1000,
    warmupCalls: intOption("--warmup", values.warmup, env.BENCH_WARMUP, d.warmup),
    callTimeoutMs: intOption("--call-timeout-ms", values["call-timeout-ms"], undefined, 30_000),
    bigTimeoutMs: intOption("--big-timeout-ms", values["big-timeout-ms"], undefined, 300_000),
    startTimeoutMs: intOption("--start-timeout-ms", values["start-timeout-ms"], undefined, 30_000),
    pathBudgetMs: intOption("--path-budget-s", values["path-budget-s"], undefined, 300) * 1000,
  };
}
