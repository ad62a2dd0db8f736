/**
 * The byte relays of the HTTP transports (bench/transportRelay.mjs: the floor the small-read
 * targets are shown against) carry real reads end to end: the SDK client over streamable HTTP,
 * SSE and WebSocket gets exactly what it gets reading the upstream directly, a 1 MiB line (many
 * pipe chunks) included. Shapes only: timings are the benchmark's business.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempDir.js";

const run = promisify(execFile);
const dir = tempDir("mcpn-relay-bench-");
const PATHS = ["direct", "relay-mcp", "relay-sse", "relay-ws"];

interface Row {
  path: string;
  status: string;
  error: string | null;
  calls: number;
  delivered: { form: string; bytes: number } | null;
}

describe("bench: the transport byte relays", () => {
  it("deliver what direct delivers, over /mcp, /sse and /ws", async () => {
    const out = join(dir, "relays.json");
    await run(
      process.execPath,
      [
        join(ROOT, "bench", "run.mjs"),
        "--quick",
        "--paths",
        PATHS.join(","),
        "--workloads",
        "read-text-1k,read-blob-76,read-blob-1m",
        "--small",
        "5",
        "--mib1",
        "1",
        "--warmup",
        "1",
        "--out",
        out,
      ],
      { cwd: ROOT, timeout: 50_000 },
    );
    const results = JSON.parse(readFileSync(out, "utf8")) as { workloads: { id: string; results: Row[] }[] };
    expect(results.workloads.map((w) => w.id)).toEqual(["read-text-1k", "read-blob-76", "read-blob-1m"]);
    for (const workload of results.workloads) {
      const direct = workload.results.find((r) => r.path === "direct");
      expect(direct?.status).toBe("ok");
      for (const row of workload.results) {
        expect({ workload: workload.id, path: row.path, status: row.status, error: row.error }).toEqual({
          workload: workload.id,
          path: row.path,
          status: "ok",
          error: null,
        });
        expect(row.calls).toBeGreaterThan(0);
        // Nothing is rewritten on the way: the blob stays a blob, every byte arrives.
        expect(row.delivered).toEqual(direct?.delivered);
      }
    }
  }, 60_000);
});
