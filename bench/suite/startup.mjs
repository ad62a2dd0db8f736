/**
 * Start-up workload: whole-process timings, paired A B A B … so the machine's drift hits both.
 *
 * - `help`: `mcp-normalizer --help` against a bare `node -e 0` (what a person typing a command
 *   waits for; the floor is Node's own start).
 * - `initialize`: spawn → `initialize` answered, through `mcp-normalizer stdio` in front of the
 *   everything server against the everything server spawned directly (what a desktop host waits
 *   for before its first call).
 * - `relayInitialize`: the same through the byte relay (bench/relay.mjs), the floor of any proxy
 *   that is a Node process of its own: Node's boot comes before the server can be spawned.
 *
 * Each figure is the median of the pair-by-pair ratios, with both medians beside it.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { median, quantile, round } from "./stats.mjs";

const NODE = process.execPath;

/** Milliseconds from spawn to exit of `command args`, its output read and dropped. */
function timeToExit(command, args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${args.join(" ")}: no exit within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`${args.join(" ")}: exit code ${code}`));
      else resolve(performance.now() - start);
    });
  });
}

const INITIALIZE = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench-startup", version: "1.0.0" } } })}\n`;

/**
 * Milliseconds from spawn to the answer of `initialize` (written at once, as hosts do: the
 * process reads it when it is ready). The process is then closed (stdin ended, then killed).
 */
function timeToInitialize(command, args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], detached: true });
    let out = "";
    let done = false;
    const finish = (error, ms) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.stdin.end();
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
      if (error) reject(error);
      else resolve(ms);
    };
    const timer = setTimeout(
      () => finish(new Error(`${args.join(" ")}: no initialize answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.stderr.resume();
    child.stdin.on("error", () => {});
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes('"id":1') && out.includes("\n")) finish(null, performance.now() - start);
    });
    child.once("error", (error) => finish(error));
    child.once("exit", (code) => finish(new Error(`${args.join(" ")}: exited (${code}) before answering initialize`)));
    child.stdin.write(INITIALIZE);
  });
}

/** Runs `a` and `b` in turn `runs` times after `warmup` unmeasured pairs; ratios pair by pair. */
async function paired(a, b, runs, warmup) {
  const as = [];
  const bs = [];
  const ratios = [];
  for (let i = 0; i < warmup + runs; i++) {
    // Alternate which goes first, so neither always runs on a freshly idle machine.
    let ya;
    let yb;
    if (i % 2 === 0) {
      ya = await a();
      yb = await b();
    } else {
      yb = await b();
      ya = await a();
    }
    if (i < warmup) continue;
    as.push(ya);
    bs.push(yb);
    ratios.push(ya / yb);
  }
  return {
    aMedianMs: round(median(as), 1),
    bMedianMs: round(median(bs), 1),
    ratioMedian: round(median(ratios), 3),
    ratioP25: round(quantile(ratios, 0.25), 3),
    ratioP75: round(quantile(ratios, 0.75), 3),
    runs,
  };
}

/** The start-up workload's result: {id, kind, help, initialize}, each a paired figure or an error. */
export async function runStartupWorkload(workload, opts, log, { root, cli }) {
  const runs = opts.counts.startup;
  const timeoutMs = opts.startTimeoutMs;
  const everything = join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
  const relay = join(root, "bench", "relay.mjs");
  const result = {
    id: workload.id,
    kind: workload.kind,
    label: workload.label,
    count: runs,
    help: null,
    initialize: null,
    relayInitialize: null,
  };
  // One paired figure, or the error that stopped it (the other figures are still measured).
  const figure = async (a, b, say) => {
    try {
      const f = await paired(a, b, runs, 1);
      log(`  ${say(f)}: ${f.ratioMedian}×`);
      return f;
    } catch (error) {
      return { error: String(error?.message ?? error) };
    }
  };
  const direct = () => timeToInitialize(NODE, [everything, "stdio"], timeoutMs);
  result.help = await figure(
    () => timeToExit(NODE, [cli, "--help"], timeoutMs),
    () => timeToExit(NODE, ["-e", "0"], timeoutMs),
    (f) => `--help ${f.aMedianMs} ms vs node -e 0 ${f.bMedianMs} ms`,
  );
  result.initialize = await figure(
    () => timeToInitialize(NODE, [cli, "stdio", "--", NODE, everything, "stdio"], timeoutMs),
    direct,
    (f) => `initialize through stdio ${f.aMedianMs} ms vs direct ${f.bMedianMs} ms`,
  );
  // The floor of any stdio proxy's start: a Node process that spawns the server at once and relays
  // bytes (bench/relay.mjs) pays Node's own boot before the server can start, and nothing else.
  result.relayInitialize = await figure(
    () => timeToInitialize(NODE, [relay, NODE, everything, "stdio"], timeoutMs),
    direct,
    (f) => `reference: initialize through the byte relay ${f.aMedianMs} ms vs direct ${f.bMedianMs} ms`,
  );
  return result;
}
