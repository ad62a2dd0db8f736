/**
 * `-o FILE`: the report is written whole beside the file and renamed over it (a failed write
 * leaves the old report as it was), through a link onto what it names, with the file's
 * permissions kept; a device is written to as it is; a write that fails once the work is done is a
 * runtime failure (exit 1) naming the file. Real `report` runs.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  linkSync,
  lstatSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI } from "../helpers/paths.js";
import { unwrappedRecordLine } from "../helpers/logRecords.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const dir = tempDir("mcpn-output-");
const log = join(dir, "log.jsonl");
writeFileSync(log, unwrappedRecordLine());

describe("report -o", () => {
  it("replaces an existing report whole, keeps its permissions, leaves nothing beside it", async () => {
    const out = join(dir, "kept", "report.md");
    await runCli(["report", "-o", out, log]);
    writeFileSync(out, "old report");
    chmodSync(out, 0o640);
    const run = await runCli(["report", "-o", out, log]);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(out, "utf8")).toMatch(/^# Size report/);
    expect(statSync(out).mode & 0o777).toBe(0o640);
    expect(readdirSync(join(dir, "kept"))).toEqual(["report.md"]);
  });

  it("writes through a link onto the file it names, and the link stays", async () => {
    const real = join(dir, "real.md");
    const link = join(dir, "link.md");
    writeFileSync(real, "old");
    symlinkSync(real, link);
    const run = await runCli(["report", "-o", link, log]);
    expect(run.code, run.stderr).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, "utf8")).toMatch(/^# Size report/);
  });

  it("a write that fails leaves the old report as it was, and is a runtime failure naming the file", async () => {
    // The shell caps what the process may write (ulimit -f, in 512- or 1024-byte blocks): the
    // report is larger, so its write fails part way (EFBIG), as on a full disk.
    const out = join(dir, "capped.md");
    writeFileSync(out, "old report");
    const big = join(dir, "big.jsonl");
    writeFileSync(
      big,
      Array.from({ length: 3000 }, (_, i) =>
        unwrappedRecordLine({ uri: `x://${i}/${"y".repeat(40)}`, server: `s${i}` }),
      ).join(""),
    );
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn("sh", ["-c", `ulimit -f 8; exec "$0" "$@"`, process.execPath, CLI, "report", "-o", out, big]);
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.on("close", (code) => resolve({ code, stderr }));
    });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/^mcp-normalizer: report: -o: cannot write .*capped\.md: EFBIG/);
    expect(readFileSync(out, "utf8")).toBe("old report");
    expect(readdirSync(dir).filter((name) => name.includes("capped"))).toEqual(["capped.md"]);
  });

  it("a file with another hard link, or another owner's, is written in place: a rename would change more", async () => {
    const out = join(dir, "linked.md");
    const twin = join(dir, "linked-twin.md");
    writeFileSync(out, "old");
    linkSync(out, twin);
    expect((await runCli(["report", "-o", out, log])).code).toBe(0);
    expect(readFileSync(twin, "utf8")).toMatch(/^# Size report/);
    if (process.getuid?.() === 0) {
      const theirs = join(dir, "theirs.md");
      writeFileSync(theirs, "old");
      chownSync(theirs, 65534, 65534);
      expect((await runCli(["report", "-o", theirs, log])).code).toBe(0);
      expect(statSync(theirs).uid).toBe(65534);
      expect(readFileSync(theirs, "utf8")).toMatch(/^# Size report/);
      // Ours, but another group's: the group keeps it.
      const shared = join(dir, "shared.md");
      writeFileSync(shared, "old");
      chownSync(shared, 0, 50);
      expect((await runCli(["report", "-o", shared, log])).code).toBe(0);
      expect(statSync(shared).gid).toBe(50);
    }
  });

  it("folders made for a report that is never written go again", async () => {
    const deep = join(dir, "made", "for", "it");
    const audit = await runCli(["audit", "-o", join(deep, "report.md"), "--", join(dir, "no-such-command")]);
    expect(audit.code).toBe(1);
    expect(existsSync(join(dir, "made"))).toBe(false);
    const report = await runCli(["report", "-o", join(deep, "report.md"), join(dir, "no-such.jsonl")]);
    expect(report.code).toBe(2);
    expect(existsSync(join(dir, "made"))).toBe(false);
  });

  it("a named pipe's reader gets the whole report: the check before the work does not end it", async () => {
    const fifo = join(dir, "report.fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const reader = spawn("cat", [fifo], { stdio: ["ignore", "pipe", "inherit"] });
    let read = "";
    reader.stdout.on("data", (chunk: Buffer) => (read += chunk));
    const ended = new Promise((resolve) => reader.on("close", resolve));
    try {
      const run = await runCli(["report", "-o", fifo, log], { timeoutMs: 10_000 });
      expect(run.code, run.stderr).toBe(0);
      await ended;
      expect(read).toMatch(/^# Size report/);
      expect(statSync(fifo).isFIFO()).toBe(true);
    } finally {
      reader.kill();
    }
  });

  it("a folder is refused before the work, naming it", async () => {
    const run = await runCli(["report", "-o", dir, log]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`-o: cannot write ${dir}`);
  });

  it("a device is written to as it is, never replaced (-o /dev/null)", async () => {
    const run = await runCli(["report", "-o", "/dev/null", log]);
    expect(run.code, run.stderr).toBe(0);
    expect(statSync("/dev/null").isCharacterDevice()).toBe(true);
  });
});
