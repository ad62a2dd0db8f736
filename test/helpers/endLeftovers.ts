/**
 * Setup file of every test file (vitest.config.ts): once the file's own after-hooks have run, any
 * process it started that still runs — and whatever those started — is SIGKILLed and named on
 * stderr. The runner ends a worker with SIGTERM, which runs no exit handler, so a child a failing
 * test never stopped would otherwise run on after the suite (a `serve` that never exits).
 */
import { readFileSync } from "node:fs";
import { afterAll } from "vitest";
import { descendantsOf, signalProcess } from "./pids.js";

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim().slice(0, 200);
  } catch {
    return "(gone)";
  }
}

afterAll(() => {
  const left = descendantsOf(process.pid);
  if (left.length === 0) return;
  const named = left.map((pid) => `${pid} ${commandLine(pid)}`);
  for (const pid of left) signalProcess(pid, "SIGKILL");
  process.stderr.write(`processes left running by this test file, killed:\n  ${named.join("\n  ")}\n`);
});
