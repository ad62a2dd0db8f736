/**
 * A command whose stdout reader goes away (`report … | head -1`) stops quietly: no unhandled
 * EPIPE, no stack trace, exit 0. Real processes; the reader takes the first chunk and closes.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI } from "../helpers/paths.js";
import { unwrappedRecordLine } from "../helpers/logRecords.js";
import { tempDir } from "../helpers/tempDir.js";

/** Its exit code and stderr once `child` exits; killed, and the test failed, after 20 s. */
function exitOf(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`did not exit; stderr: ${stderr}`));
    }, 20_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** Runs the CLI, closes its stdout after the first chunk; its exit code and stderr. */
function runThenCloseReader(args: string[], input?: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  child.stdout.once("data", () => child.stdout.destroy());
  child.stdin.on("error", () => {});
  child.stdin.end(input ?? "");
  return exitOf(child);
}

describe("a stdout reader that goes away", () => {
  const dir = tempDir("mcpn-reader-gone-");
  const log = join(dir, "big.jsonl");
  const record = (i: number) => unwrappedRecordLine({ server: `s${i % 500}`, uri: `x://${i}/${"y".repeat(60)}` });
  writeFileSync(log, Array.from({ length: 20_000 }, (_, i) => record(i)).join(""));

  it("report: exits 0, no stack trace", async () => {
    const run = await runThenCloseReader(["report", "--format", "json", log]);
    expect(run.stderr).not.toMatch(/EPIPE|at .*\(node:/);
    expect(run.code).toBe(0);
  });

  it("normalize: exits 0, no stack trace", async () => {
    const big = { jsonrpc: "2.0", id: 1, result: { contents: [{ uri: "x://a", text: "z".repeat(4 << 20) }] } };
    const run = await runThenCloseReader(["normalize", "--pretty"], JSON.stringify(big));
    expect(run.stderr).not.toMatch(/EPIPE|at .*\(node:/);
    expect(run.code).toBe(0);
  });
});

/** Runs the CLI with its stdout on a full disk (`/dev/full`): its exit code and stderr. */
function runOnFullDisk(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const full = openSync("/dev/full", "w");
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", full, "pipe"] });
  closeSync(full);
  return exitOf(child);
}

describe("a stdout that cannot be written (a full disk)", () => {
  const dir = tempDir("mcpn-full-disk-");
  const input = join(dir, "read.json");
  writeFileSync(input, JSON.stringify({ jsonrpc: "2.0", id: 1, result: { contents: [{ uri: "x://a", text: "t" }] } }));
  const log = join(dir, "log.jsonl");
  writeFileSync(log, unwrappedRecordLine({ server: "s", uri: "x://a" }));

  for (const args of [["normalize", input], ["report", log], ["--help"], ["--version"], ["help", "report"]]) {
    it(`${args.map((word) => (word.startsWith("/") ? "FILE" : word)).join(" ")}: one line saying so, exit 1, no stack trace`, async () => {
      const run = await runOnFullDisk(args);
      expect(run.stderr).toBe("mcp-normalizer: cannot write its output: ENOSPC: no space left on device\n");
      expect(run.code).toBe(1);
    });
  }
});
