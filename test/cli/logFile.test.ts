/**
 * A log file that cannot be written ends `serve` and `stdio` at start-up with exit 2 and one
 * line naming the path and the OS error, before any upstream is started.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const dir = tempDir("mcpn-logfile-");
const aFile = join(dir, "plain.txt");
writeFileSync(aFile, "x");

/** An upstream that leaves a marker file when it starts (so the test sees whether it did). */
function upstream(marker: string): string[] {
  return ["--", process.execPath, "-e", "require('node:fs').writeFileSync(process.argv[1], 'started')", marker];
}

const BAD_PATHS: Array<[string, string, RegExp]> = [
  ["a special file that refuses writes", "/proc/version", /EIO|EACCES|EPERM/],
  ["a directory", dir, /EISDIR/],
  ["a folder under a plain file", join(aFile, "sub", "log.jsonl"), /ENOTDIR/],
  ["a folder that cannot be created", "/proc/no-such-folder/log.jsonl", /ENOENT|EACCES|EPERM/],
];

describe("an unwritable --log-file", () => {
  for (const [what, path, code] of BAD_PATHS) {
    it(`stdio, ${what}: exit 2 at once, one line naming ${path} and the OS error; the upstream never starts`, async () => {
      const marker = join(dir, `started-${Math.random().toString(36).slice(2)}`);
      const run = await runCli(["stdio", "--log-file", path, ...upstream(marker)], { timeoutMs: 15_000 });
      expect(run.code).toBe(2);
      const lines = run.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`--log-file: cannot write the log file ${path}`);
      expect(lines[0]).toMatch(code);
      expect(run.stdout).toBe("");
      expect(existsSync(marker)).toBe(false);
    });
  }

  it("serve: exit 2 before listening", async () => {
    const run = await runCli(
      ["serve", "--port", "0", "--log-file", "/proc/version", "--name", "x", "--", process.execPath, "-e", "0"],
      { timeoutMs: 15_000 },
    );
    expect(run.code).toBe(2);
    expect(run.stdout).not.toContain("listening");
    expect(run.stderr.trim().split("\n")).toEqual([expect.stringContaining("cannot write the log file /proc/version")]);
  });

  it("log.file in a config: the message names the config key", async () => {
    const config = join(dir, "proxy.config.json");
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { x: { command: process.execPath, args: ["-e", "0"] } }, log: { file: dir } }),
    );
    const run = await runCli(["serve", "--port", "0", "--config", config], { timeoutMs: 15_000 });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`log.file: cannot write the log file ${dir}: EISDIR`);
  });
});
