/**
 * The proxy benchmark's quick mode runs end to end — the direct path, one peer and one
 * mcp-normalizer path over real processes and sockets, each of which must succeed — and writes
 * well-formed results; a path that fails is recorded with its error instead of stopping the
 * suite; the README script edits only between its markers. Shapes only: timings are the
 * benchmark's business, not a test's.
 */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempDir.js";

const run = promisify(execFile);
const dir = tempDir("mcpn-bench-");

const CALL_WORKLOADS = ["read-text-1k", "read-text-12k", "read-blob-76", "read-blob-1m", "tools-call"];
const PATHS = ["direct", "sg-ws", "mcpn-ws"];

interface Row {
  path: string;
  status: string;
  error: string | null;
  calls: number;
  medianMs: number | null;
  p90Ms: number | null;
  throughputPerS: number | null;
  bytesPerCall: number | null;
  delivered: { form: string; bytes: number } | null;
  proxy: { cpuSeconds: number | null; peakRssBytes: number | null } | null;
  ratioVsDirect: number | null;
}
interface Results {
  schema: string;
  mode: string;
  paths: { id: string }[];
  options: { counts: Record<string, number> };
  workloads: { id: string; count: number; contentBytes: number | null; results: Row[] }[];
  targets: { id: string; met: boolean | null; limit: number }[];
}

function readResults(file: string): Results {
  return JSON.parse(readFileSync(file, "utf8")) as Results;
}

describe("npm run bench:quick", () => {
  const out = join(dir, "quick.json");

  it("runs direct, a peer and an mcp-normalizer path and writes well-formed results", async () => {
    await run(
      "npm",
      [
        "run",
        "--silent",
        "bench:quick",
        "--",
        "--paths",
        PATHS.join(","),
        "--small",
        "20",
        "--tools",
        "20",
        "--mib1",
        "2",
        "--warmup",
        "2",
        "--out",
        out,
      ],
      { cwd: ROOT, timeout: 50_000 },
    );
    const results = readResults(out);
    expect(results.schema).toBe("mcp-normalizer-bench/1");
    expect(results.mode).toBe("quick");
    expect(results.paths.map((p) => p.id)).toEqual(PATHS);
    expect(results.workloads.map((w) => w.id)).toEqual(CALL_WORKLOADS);
    for (const workload of results.workloads) {
      expect(workload.results.map((r) => r.path)).toEqual(PATHS);
      for (const row of workload.results) {
        // Every path must work here, mcp-normalizer's above all: a failed row is a failed test.
        expect({ path: row.path, status: row.status, error: row.error }, workload.id).toEqual({
          path: row.path,
          status: "ok",
          error: null,
        });
        expect(row.calls).toBe(workload.count);
        expect(row.medianMs).toBeGreaterThan(0);
        expect(row.p90Ms).toBeGreaterThanOrEqual(row.medianMs ?? Infinity);
        expect(row.throughputPerS).toBeGreaterThan(0);
        expect(row.bytesPerCall).toBeGreaterThan(0);
        // What arrived is the resource, whole, whatever form the path delivered it in.
        if (workload.contentBytes !== null) expect(row.delivered?.bytes).toBe(workload.contentBytes);
        if (row.path === "direct") {
          expect(row.proxy).toBeNull();
          expect(row.ratioVsDirect).toBe(1);
        } else {
          expect(row.proxy?.cpuSeconds).toBeGreaterThanOrEqual(0);
          expect(row.proxy?.peakRssBytes).toBeGreaterThan(0);
        }
      }
    }
    expect(results.targets.length).toBeGreaterThan(0);
    for (const target of results.targets) expect([true, false, null]).toContain(target.met);
  });

  it("records a path that fails (the SDK's 10 MiB stdio cap) as failed, with its error, and still writes results", async () => {
    const failing = join(dir, "failing.json");
    await run(
      process.execPath,
      [
        "bench/run.mjs",
        "--quick",
        "--workloads",
        "read-blob-10m",
        "--big10",
        "1",
        "--paths",
        "direct-sdk-default",
        "--out",
        failing,
      ],
      { cwd: ROOT, timeout: 50_000 },
    );
    const [workload] = readResults(failing).workloads;
    expect(workload?.id).toBe("read-blob-10m");
    const [row] = workload?.results ?? [];
    expect(row?.status).toBe("failed");
    expect(row?.error).toMatch(/ReadBuffer exceeded maximum size/);
  });

  it("summarizes results into README only between the markers, or prints the block when they are missing", async () => {
    const readme = join(dir, "README.md");
    writeFileSync(readme, "# Title\nbefore\n<!-- bench:start -->\nold\n<!-- bench:end -->\nafter\n");
    await run(process.execPath, ["scripts/bench-readme.mjs", out, readme], { cwd: ROOT });
    const updated = readFileSync(readme, "utf8");
    expect(updated.startsWith("# Title\nbefore\n<!-- bench:start -->\n")).toBe(true);
    expect(updated.endsWith("<!-- bench:end -->\nafter\n")).toBe(true);
    expect(updated).not.toContain("\nold\n");
    expect(updated).toContain("| path | 1 KiB text |");

    writeFileSync(readme, "# No markers\n");
    const { stdout } = await run(process.execPath, ["scripts/bench-readme.mjs", out, readme], { cwd: ROOT });
    expect(readFileSync(readme, "utf8")).toBe("# No markers\n");
    expect(stdout).toContain("| path | 1 KiB text |");
  });
});
