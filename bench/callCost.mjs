#!/usr/bin/env node
/**
 * What one small call costs a stdio proxy in CPU, by thread, next to the wall time the host sees:
 * a raw JSON-lines host (no SDK) sends sequential `resources/read` requests through each path —
 * the upstream directly, the byte relay, mcp-normalizer `stdio` — in interleaved rounds, and reads
 * the proxy's own CPU time from /proc (Linux) before and after the measured calls.
 *
 * CPU time is steadier than wall time on a loaded machine, and the split by thread shows what a
 * short benchmark bills: right after start the proxy's compiler and garbage-collector threads
 * work beside its main thread, on the cores the host and the upstream need. `--warmup` sets how
 * many calls come first, unmeasured (the proxy suite warms each path with 20).
 *
 *   node bench/callCost.mjs [--paths direct,relay-stdio,mcpn-stdio,base-stdio] [--uri bench://text/1024]
 *                           [--calls 2000] [--warmup 20] [--rounds 2] [--json]
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { MCPN_NODE_ARGS, ROOT } from "./suite/paths.mjs";

const NODE = process.execPath;
const UPSTREAM = join(ROOT, "bench", "upstream.mjs");
const mcpnStdio = (dist) => [...MCPN_NODE_ARGS, join(dist, "cli.js"), "stdio", "--", NODE, UPSTREAM];
const COMMANDS = {
  direct: [UPSTREAM],
  "relay-stdio": [join(ROOT, "bench", "relay.mjs"), NODE, UPSTREAM],
  "mcpn-stdio": mcpnStdio(process.env.BENCH_MCPN_DIST ?? join(ROOT, "dist")),
};
/** BENCH_BASELINE_DIST=/copy/of/another/dist adds base-stdio: that build, interleaved with this one (A/B). */
if (process.env.BENCH_BASELINE_DIST) COMMANDS["base-stdio"] = mcpnStdio(process.env.BENCH_BASELINE_DIST);
/** Bound on one call and on a path's start and exit. */
const WAIT_MS = 30_000;

const HELP = `Usage: node bench/callCost.mjs [options]

  --paths a,b,…   paths (default: all): ${Object.keys(COMMANDS).join(", ")}
  --uri URI       the resource read each call (default bench://text/1024; bench://blob/76 is rewritten)
  --calls N       measured calls per path and round (default 2000)
  --warmup N      unmeasured calls first, on each fresh process (default 20)
  --rounds N      rounds; each starts every path afresh, in turn (default 2)
  --json          print the results as JSON instead of lines
  -h, --help      this help

Environment: BENCH_MCPN_DIST runs another build's dist/ as mcpn-stdio; BENCH_BASELINE_DIST adds the
path base-stdio, a second build to compare in the same interleaved rounds; BENCH_MCPN_NODE_ARGS
passes Node flags to both (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").

Per path and round: median and p90 wall time per call as the host sees it, and the CPU time per
call of the process the host talks to (for direct: the upstream) — its main thread and its
other threads (compiler, garbage collector, thread pool). Linux only (/proc).`;

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      paths: { type: "string" },
      uri: { type: "string" },
      calls: { type: "string" },
      warmup: { type: "string" },
      rounds: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  const count = (name, fallback, min) => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`--${name} expects an integer ≥ ${min}, got ${JSON.stringify(raw)}`);
    return n;
  };
  const paths = values.paths === undefined ? Object.keys(COMMANDS) : values.paths.split(",").filter((p) => p !== "");
  for (const path of paths)
    if (!(path in COMMANDS))
      throw new Error(`--paths: unknown path ${JSON.stringify(path)} (known: ${Object.keys(COMMANDS).join(", ")})`);
  return {
    help: values.help === true,
    json: values.json === true,
    paths,
    uri: values.uri ?? "bench://text/1024",
    calls: count("calls", 2000, 1),
    warmup: count("warmup", 20, 0),
    rounds: count("rounds", 2, 1),
  };
}

/** CPU milliseconds of each thread of `pid` (utime + stime, in clock ticks of 10 ms). */
function threadCpuMs(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1].split(" ");
      out.set(tid, (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // The thread ended between the listing and the read: its time is gone with it.
    }
  }
  return out;
}

/** A JSON-lines host on a fresh process: `call` sends one request and settles with its answer. */
function startHost(path) {
  const child = spawn(NODE, COMMANDS[path], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
  child.stderr.resume();
  let buffered = "";
  let waiting;
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    buffered += chunk;
    for (let at = buffered.indexOf("\n"); at !== -1; at = buffered.indexOf("\n")) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      const message = JSON.parse(line);
      if (message.id !== undefined && waiting !== undefined) {
        const settle = waiting;
        waiting = undefined;
        settle.resolve(message);
      }
    }
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  void exited.then(() => waiting?.reject(new Error(`${path} exited during a call`)));
  let id = 0;
  const call = (method, params) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${path}: no answer to ${method} in ${WAIT_MS} ms`)), WAIT_MS);
      waiting = {
        resolve: (message) => {
          clearTimeout(timer);
          if (message.error !== undefined) reject(new Error(`${path}: ${method} failed: ${message.error.message}`));
          else resolve(message);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params })}\n`);
    });
  /** Ends the host's input and waits for the process to exit (SIGKILL past the bound). */
  const close = async () => {
    child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), WAIT_MS);
    await exited;
    clearTimeout(timer);
  };
  return { pid: child.pid, call, close };
}

async function measure(path, options) {
  const host = startHost(path);
  try {
    await host.call("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "callCost", version: "1" },
    });
    const read = () => host.call("resources/read", { uri: options.uri });
    for (let i = 0; i < options.warmup; i++) await read();
    const before = threadCpuMs(host.pid);
    const wall = [];
    for (let i = 0; i < options.calls; i++) {
      const started = process.hrtime.bigint();
      await read();
      wall.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    const after = threadCpuMs(host.pid);
    let main = 0;
    let other = 0;
    for (const [tid, ms] of after) {
      const spent = ms - (before.get(tid) ?? 0);
      if (tid === String(host.pid)) main += spent;
      else other += spent;
    }
    wall.sort((a, b) => a - b);
    const perCallUs = (ms) => Math.round((ms / options.calls) * 1000);
    return {
      path,
      pid: host.pid,
      medianMs: wall[wall.length >> 1],
      p90Ms: wall[Math.floor(wall.length * 0.9)],
      mainThreadUsPerCall: perCallUs(main),
      otherThreadsUsPerCall: perCallUs(other),
    };
  } finally {
    await host.close();
  }
}

async function main() {
  let options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`callCost: ${error.message}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const results = [];
  for (let round = 1; round <= options.rounds; round++) {
    for (const path of options.paths) {
      const row = { round, ...(await measure(path, options)) };
      results.push(row);
      if (!options.json)
        process.stdout.write(
          `round ${round}  ${path.padEnd(11)} median ${row.medianMs.toFixed(3)} ms  p90 ${row.p90Ms.toFixed(3)} ms  ` +
            `CPU/call: main thread ${row.mainThreadUsPerCall} µs, other threads ${row.otherThreadsUsPerCall} µs\n`,
        );
    }
  }
  if (options.json)
    process.stdout.write(
      `${JSON.stringify({ uri: options.uri, calls: options.calls, warmup: options.warmup, results })}\n`,
    );
  return 0;
}

process.exitCode = await main();
