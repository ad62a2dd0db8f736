/**
 * The per-call CPU tool runs every stdio path end to end — the upstream directly, the byte relay
 * and mcp-normalizer — over real processes, reports one row per path and round with CPU read from
 * /proc, and leaves no process behind; a bad option is a one-line error and exit 2. Shapes only:
 * timings are the benchmark's business, not a test's.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/paths.js";

const run = promisify(execFile);
const PATHS = ["direct", "relay-stdio", "mcpn-stdio"];

interface Row {
  round: number;
  path: string;
  pid: number;
  medianMs: number;
  p90Ms: number;
  mainThreadUsPerCall: number;
  otherThreadsUsPerCall: number;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.runIf(process.platform === "linux")("bench/callCost.mjs", () => {
  it("measures every stdio path, one row per path and round, and ends its processes", async () => {
    const { stdout } = await run(
      process.execPath,
      ["bench/callCost.mjs", "--calls", "20", "--warmup", "2", "--rounds", "2", "--uri", "bench://blob/76", "--json"],
      { cwd: ROOT, timeout: 50_000 },
    );
    const report = JSON.parse(stdout) as { uri: string; calls: number; warmup: number; results: Row[] };
    expect(report).toMatchObject({ uri: "bench://blob/76", calls: 20, warmup: 2 });
    expect(report.results.map((row) => `${row.round} ${row.path}`)).toEqual([
      ...PATHS.map((path) => `1 ${path}`),
      ...PATHS.map((path) => `2 ${path}`),
    ]);
    for (const row of report.results) {
      expect(row.medianMs).toBeGreaterThan(0);
      expect(row.p90Ms).toBeGreaterThanOrEqual(row.medianMs);
      expect(row.mainThreadUsPerCall).toBeGreaterThanOrEqual(0);
      expect(row.otherThreadsUsPerCall).toBeGreaterThanOrEqual(0);
      // Each path's process has exited (mcp-normalizer ends its upstream with it) before the tool does.
      expect(alive(row.pid), `${row.path} pid ${row.pid}`).toBe(false);
    }
  }, 60_000);

  it("names a bad option in one line and exits 2", async () => {
    const failed = await run(process.execPath, ["bench/callCost.mjs", "--paths", "direct,nope"], {
      cwd: ROOT,
      timeout: 10_000,
    }).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr.trim()).toBe(
      'callCost: --paths: unknown path "nope" (known: direct, relay-stdio, mcpn-stdio)',
    );
  });
});
