/**
 * `stdio` has V8 optimize its per-message functions sooner (a fresh proxy per desktop session
 * carries most of its messages before V8's default budget would). The first test shows the flag
 * works at run time: a function is optimized after fewer calls, and a budget given on Node's
 * command line is left alone. The second shows which commands set it: `stdio`, not `serve` nor
 * `--help` (a recording hook wraps v8.setFlagsFromString).
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { INTERRUPT_BUDGET } from "../../src/cli/jitTiering.js";
import { FIXTURE_SERVER, ROOT } from "../helpers/paths.js";
import { startFixtureServe } from "../helpers/proxyProcess.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const JIT_TIERING = join(ROOT, "dist", "cli", "jitTiering.js");
const PROBE = join(ROOT, "test", "fixtures", "hooks", "tieringProbe.mjs");
const RECORD_FLAGS = join(ROOT, "test", "fixtures", "hooks", "recordV8Flags.mjs");
const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-host", version: "1" } };

/** After how many calls the probe's function was optimized ("never" if not within 100 000). */
function callsUntilOptimized(mode: "default" | "lowered" | "given"): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--allow-natives-syntax", "--no-concurrent-recompilation", PROBE, mode, JIT_TIERING],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out.trim());
      else reject(new Error(`tiering probe (${mode}) exited with ${code}: ${err}`));
    });
  });
}

/** A log file for the recording hook, and the environment that loads the hook. */
function flagRecording(): { log: string; env: Record<string, string> } {
  const log = join(tempDir("mcpn-v8flags-"), "flags.txt");
  writeFileSync(log, "");
  return { log, env: { NODE_OPTIONS: `--import=${RECORD_FLAGS}`, MCPN_V8_FLAGS_LOG: log } };
}
const linesOf = (log: string): string[] => readFileSync(log, "utf8").split("\n");
const flagsSet = (log: string): string[] => linesOf(log).filter((line) => line.startsWith("--"));
const loadedIn = (log: string): string[] => linesOf(log).filter((line) => line.startsWith("# loaded "));

describe("V8 tiering", () => {
  it("tierUpSooner has a per-turn function optimized after fewer calls; a budget node was given wins", async () => {
    const [byDefault, lowered, given] = await Promise.all([
      callsUntilOptimized("default"),
      callsUntilOptimized("lowered"),
      callsUntilOptimized("given"),
    ]);
    expect(Number(byDefault)).toBeGreaterThan(0);
    expect(Number(lowered)).toBeGreaterThan(0);
    // An eighth of the budget: optimized after well under half the calls.
    expect(Number(lowered)).toBeLessThan(Number(byDefault) / 2);
    expect(given).toBe(byDefault);
  });

  it("stdio sets it; serve and --help do not", async () => {
    const help = flagRecording();
    const helpRun = await runCli(["--help"], { env: help.env });
    expect(helpRun.code).toBe(0);
    expect(loadedIn(help.log)).toHaveLength(1);
    expect(flagsSet(help.log)).toEqual([]);

    const stdio = flagRecording();
    const input = [
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT }),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      "",
    ].join("\n");
    const stdioRun = await runCli(["stdio", "--", process.execPath, FIXTURE_SERVER], { env: stdio.env, input });
    expect(stdioRun.code).toBe(0);
    expect(JSON.parse(stdioRun.stdout.split("\n")[0]!)).toMatchObject({
      id: 1,
      result: { protocolVersion: "2025-06-18" },
    });
    expect(flagsSet(stdio.log)).toEqual([`--interrupt-budget=${INTERRUPT_BUDGET}`]);

    const serve = flagRecording();
    const proxy = await startFixtureServe([], serve.env);
    try {
      // The hook was loaded in the proxy, which is listening: nothing was set.
      expect(loadedIn(serve.log)).toContain(`# loaded ${proxy.child.pid}`);
      expect(flagsSet(serve.log)).toEqual([]);
    } finally {
      await proxy.stop();
    }
  });
});
