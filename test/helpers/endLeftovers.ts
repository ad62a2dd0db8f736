/**
 * Setup file of every test file (vitest.config.ts): once the file's own after-hooks have run,
 * what it started that still runs is SIGKILLed and named on stderr. The runner ends a worker with
 * SIGTERM, which runs no exit handler, so a child a failing test never stopped would otherwise
 * run on after the suite (a `serve` that never exits).
 *
 * Found: every process below the worker, and every process whose environment carries this
 * worker's mark (set here, so what tests spawn with `process.env` inherits it: it is found even
 * once its parent has exited and it belongs to init). Not found: an orphan started with an
 * environment of its own — a proxy's upstream, once that proxy was killed. Only in a forked
 * worker: under worker threads `process.pid` is the runner's, shared by every file.
 */
import { readFileSync } from "node:fs";
import { afterAll } from "vitest";
import { descendantsOf, marked, signalProcess } from "./pids.js";

const MARK = "MCPN_TEST_WORKER";
const forked = typeof process.send === "function";
if (forked) process.env[MARK] = String(process.pid);

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim().slice(0, 200);
  } catch {
    return "(gone)";
  }
}

afterAll(() => {
  if (!forked) return;
  const left = [...new Set([...descendantsOf(process.pid), ...marked(MARK, String(process.pid))])];
  if (left.length === 0) return;
  const named = left.map((pid) => `${pid} ${commandLine(pid)}`);
  for (const pid of left) signalProcess(pid, "SIGKILL");
  process.stderr.write(`processes left running by this test file, killed:\n  ${named.join("\n  ")}\n`);
});
