/**
 * The bench scripts that take only switches answer `--help` and refuse a flag they do not know in
 * one line, before any measuring starts (a mistyped flag must not start a run of minutes that
 * ignores it).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/paths.js";

const run = promisify(execFile);

async function exitOf(script: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, script), ...args], { timeout: 10_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("bench script flags", () => {
  for (const script of ["bench/images.mjs", "bench/core.mjs", "bench/profile-top.mjs", "scripts/bench-readme.mjs"]) {
    it(`${script}: --help prints the usage; an unknown flag is refused, named, and nothing runs`, async () => {
      const help = await exitOf(script, ["--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Usage: node /);
      const wrong = await exitOf(script, ["--qiuck"]);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr.split("\n")[0]).toContain("--qiuck");
      expect(wrong.stdout).toBe("");
    });
  }
});
