/**
 * Burst fairness: N host sessions opened at once, then READS sequential reads each, through
 * mcp-normalizer (/mcp and /ws) in front of a streamable HTTP upstream, against the same clients
 * talking to that upstream directly. Runs direct → /mcp → /ws per N, the order rotated per
 * repetition; each run gets a fresh upstream and proxy, and the clients their own process.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MCPN_NODE_ARGS } from "../suite/paths.mjs";
import { startProxyProcess } from "../suite/proxyProcess.mjs";
import { round } from "../suite/stats.mjs";

const NODE = process.execPath;

function runClients(root, args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [join(root, "bench", "burst", "clients.mjs"), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (err = (err + c).slice(-2000)));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("close", (code) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.trim().split("\n").at(-1)));
      } catch {
        reject(new Error(`burst clients failed (exit ${code}): ${err.slice(-500)}`));
      }
    });
  });
}

/**
 * The proxy's config: one `url` server, limits raised so one address may open every session, and
 * the keep-alive timeout the upstream uses too (60 s): with Node's 5 s on one side only, a client
 * whose own event loop lags under the burst reuses connections that side has just closed, and
 * the comparison would measure that race rather than the proxy.
 */
function proxyConfig(dir, upstreamUrl, sessions) {
  const file = join(dir, "burst.config.json");
  writeFileSync(
    file,
    JSON.stringify({
      listen: { host: "127.0.0.1", port: 0 },
      mcpServers: { bench: { url: upstreamUrl } },
      log: { level: "warn" },
      limits: {
        maxSessions: sessions * 2 + 100,
        maxSessionsPerClient: sessions * 2 + 100,
        maxConnections: sessions * 8 + 1000,
        keepAliveTimeoutMs: 60_000,
      },
    }),
  );
  return file;
}

export async function runBurstWorkload(workload, opts, log, { root, cli }) {
  const result = {
    id: workload.id,
    kind: workload.kind,
    label: workload.label,
    reads: opts.counts.burstReads,
    runs: [],
  };
  const dir = mkdtempSync(join(tmpdir(), "mcpn-burst-"));
  try {
    for (const sessions of opts.burstSessions) {
      const row = { sessions, direct: [], mcp: [], ws: [] };
      for (let rep = 0; rep < opts.counts.burstReps; rep++) {
        const order = ["direct", "mcp", "ws"];
        const rotated = order.map((_, i) => order[(i + rep) % order.length]);
        for (const path of rotated) {
          const upstream = await startProxyProcess({
            command: NODE,
            args: [join(root, "bench", "burst", "httpUpstream.mjs")],
            cwd: root,
            readyLine: /listening on (http:\/\/\S+)/,
            timeoutMs: opts.startTimeoutMs,
          });
          let proxy;
          try {
            let url = upstream.match;
            let kind = "streamable-http";
            if (path !== "direct") {
              proxy = await startProxyProcess({
                command: NODE,
                args: [...MCPN_NODE_ARGS, cli, "serve", "--config", proxyConfig(dir, upstream.match, sessions)],
                cwd: root,
                readyLine: /listening on (http:\/\/\S+)/,
                timeoutMs: opts.startTimeoutMs,
              });
              url = path === "mcp" ? `${proxy.match}/mcp/bench` : `${proxy.match.replace(/^http/, "ws")}/ws/bench`;
              kind = path === "mcp" ? "streamable-http" : "ws";
            }
            const figures = await runClients(
              root,
              [
                "--url",
                url,
                "--kind",
                kind,
                "--sessions",
                String(sessions),
                "--reads",
                String(opts.counts.burstReads),
                "--timeout-ms",
                String(opts.callTimeoutMs),
              ],
              opts.burstTimeoutMs,
            );
            row[path].push(figures);
            log(
              `  burst N=${sessions} ${path}: p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, max ${figures.maxMs} ms, first-read p99 ${figures.firstReadP99Ms} ms, ${figures.readsPerS} reads/s, ${figures.errors} errors`,
            );
          } catch (error) {
            row[path].push({ error: String(error?.message ?? error).slice(0, 500) });
            log(`  burst N=${sessions} ${path}: failed: ${error.message}`);
          } finally {
            await proxy?.stop();
            await upstream.stop();
          }
        }
      }
      result.runs.push(summarizeRow(row));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

/** Per path: the median of the repetitions' p99 and throughput, and every error; ratios to direct. */
function summarizeRow(row) {
  const med = (xs) => (xs.length === 0 ? null : [...xs].sort((a, b) => a - b)[xs.length >> 1]);
  const of = (runs) => {
    const ok = runs.filter((r) => r.error === undefined);
    return {
      runs: runs.length,
      failedRuns: runs.length - ok.length,
      errors: ok.reduce((n, r) => n + r.errors, 0) + (runs.length - ok.length),
      firstError:
        runs.find((r) => r.error !== undefined)?.error ?? ok.find((r) => r.errors > 0)?.firstErrors?.[0] ?? null,
      p50Ms: med(ok.map((r) => r.p50Ms)),
      p99Ms: med(ok.map((r) => r.p99Ms)),
      maxMs: med(ok.map((r) => r.maxMs)),
      firstReadP99Ms: med(ok.map((r) => r.firstReadP99Ms)),
      readsPerS: med(ok.map((r) => r.readsPerS)),
    };
  };
  const direct = of(row.direct);
  const out = { sessions: row.sessions, direct };
  for (const path of ["mcp", "ws"]) {
    const figures = of(row[path]);
    out[path] = {
      ...figures,
      p99VsDirect: figures.p99Ms === null || direct.p99Ms === null ? null : round(figures.p99Ms / direct.p99Ms, 3),
      throughputVsDirect:
        figures.readsPerS === null || direct.readsPerS === null ? null : round(figures.readsPerS / direct.readsPerS, 3),
    };
  }
  return out;
}
