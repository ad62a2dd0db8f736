/**
 * `stdio` has V8 optimize its per-message functions sooner (a fresh proxy per desktop session
 * carries much of its messages before V8's default budget would). The first tests show the flag
 * works at run time — a function is optimized after fewer calls — and when it is left alone: a
 * budget given on node's command line (in any spelling node takes), another V8. The last shows
 * which commands set it and when: `stdio`, after its first answer, with no Node module loaded
 * after it (a changed flag turns Node's code cache off for those); not `serve`, nor `--help`
 * (a recording hook wraps v8.setFlagsFromString).
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { budgetGivenIn, INTERRUPT_BUDGET } from "../../src/cli/jitTiering.js";
import { FIXTURE_SERVER, ROOT } from "../helpers/paths.js";
import { startFixtureServe } from "../helpers/proxyProcess.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const JIT_TIERING = join(ROOT, "dist", "cli", "jitTiering.js");
const PROBE = join(ROOT, "test", "fixtures", "hooks", "tieringProbe.mjs");
const RECORD_FLAGS = join(ROOT, "test", "fixtures", "hooks", "recordV8Flags.mjs");
const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-host", version: "1" } };

/** After how many calls the probe's function was optimized ("never" if not within 100 000). */
function callsUntilOptimized(mode: "default" | "lowered" | "other-v8", nodeFlags: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--allow-natives-syntax", "--no-concurrent-recompilation", ...nodeFlags, PROBE, mode, JIT_TIERING],
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
  const hook = JSON.stringify(pathToFileURL(RECORD_FLAGS).href);
  return { log, env: { NODE_OPTIONS: `--import=${hook}`, MCPN_V8_FLAGS_LOG: log } };
}
const linesOf = (log: string): string[] => readFileSync(log, "utf8").split("\n");
const flagsSet = (log: string): string[] => linesOf(log).filter((line) => line.startsWith("--"));
const loadedIn = (log: string): string[] => linesOf(log).filter((line) => line.startsWith("# loaded "));
const builtinsAfter = (log: string): string[] =>
  linesOf(log).filter((line) => line.startsWith("# builtins loaded after:"));

describe("V8 tiering", () => {
  it("tierUpSooner has a per-turn function optimized after fewer calls; not over node's own budget or on another V8", async () => {
    const [byDefault, lowered, givenToNode, otherV8] = await Promise.all([
      callsUntilOptimized("default"),
      callsUntilOptimized("lowered"),
      callsUntilOptimized("lowered", ["--interrupt-budget=67584"]),
      callsUntilOptimized("other-v8"),
    ]);
    expect(Number(byDefault)).toBeGreaterThan(0);
    expect(Number(lowered)).toBeGreaterThan(0);
    expect(Number(lowered)).toBeLessThan(Number(byDefault) / 2);
    expect(givenToNode).toBe(byDefault);
    expect(otherV8).toBe(byDefault);
  });

  it("a budget on node's command line is seen in every spelling node takes, and only that flag", () => {
    for (const arg of ["--interrupt-budget=1000", "--interrupt_budget=1000", "-interrupt-budget=1000"])
      expect(budgetGivenIn(["--max-old-space-size=100", arg]), arg).toBe(true);
    for (const arg of ["--interrupt-budget-for-feedback-allocation=940", "--max-old-space-size=100", "budget"])
      expect(budgetGivenIn([arg]), arg).toBe(false);
  });

  it("stdio sets it after its first answer, with no Node module loading after; serve and --help do not", async () => {
    for (const args of [["--help"], ["stdio", "--help"]]) {
      const help = flagRecording();
      const helpRun = await runCli(args, { env: help.env });
      expect(helpRun.code).toBe(0);
      expect(loadedIn(help.log)).toHaveLength(1);
      expect(flagsSet(help.log)).toEqual([]);
    }

    const stdio = flagRecording();
    const input = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: INIT },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "fixture://own/blob/1" } },
      { jsonrpc: "2.0", id: 3, method: "tools/list" },
    ]
      .map((message) => `${JSON.stringify(message)}\n`)
      .join("");
    const stdioRun = await runCli(["stdio", "--", process.execPath, FIXTURE_SERVER], { env: stdio.env, input });
    expect(stdioRun.code).toBe(0);
    const answers = stdioRun.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id?: number });
    expect(answers.map((answer) => answer.id)).toEqual([1, 2, 3]);
    expect(flagsSet(stdio.log)).toEqual([`--interrupt-budget=${INTERRUPT_BUDGET}`]);
    expect(builtinsAfter(stdio.log)).toEqual(["# builtins loaded after: "]);

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
