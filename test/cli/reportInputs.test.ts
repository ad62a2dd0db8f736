/**
 * `report`'s inputs as a shell gives them: a pipe (`<(zcat a.gz)`, a FIFO) is a log; a folder or
 * a log that cannot be opened is an error naming it (exit 2), not an empty report that exits 0;
 * a limit of 0 is refused, not made 1. Real `report` runs.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI } from "../helpers/paths.js";
import { unwrappedRecordLine } from "../helpers/logRecords.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const dir = tempDir("mcpn-report-inputs-");
chmodSync(dir, 0o755);
const record = unwrappedRecordLine();

describe("report's inputs", () => {
  it("reads a pipe", async () => {
    const fifo = join(dir, "log.fifo");
    execFileSync("mkfifo", [fifo]);
    const writer = spawn("sh", ["-c", `printf '%s' "$0" > "$1"`, record, fifo]);
    const run = await runCli(["report", "--format", "json", fifo]);
    writer.kill();
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ totals: { saved: 20 } });
  });

  it("a folder is an error naming it and the glob to use", async () => {
    const folder = join(dir, "logs");
    mkdirSync(folder);
    const run = await runCli(["report", folder]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /report: .*logs is a folder: name the logs in it, or a glob such as ".*logs\/\*\.jsonl"/,
    );
  });

  it("a log that cannot be opened is an error naming it, not an empty report", async () => {
    const log = join(dir, "secret.jsonl");
    writeFileSync(log, record);
    chmodSync(log, 0o000);
    // Root reads any file: the report runs as nobody there.
    const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const run = await new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, "report", log], { ...asNobody, cwd: dir });
      let stderr = "";
      let stdout = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.on("close", (code) => resolve({ code, stderr, stdout }));
    });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/report: cannot read .*secret\.jsonl: EACCES/);
    expect(run.stdout).toBe("");
  });

  it("--max-line-bytes 0 and --max-uris 0 are refused", async () => {
    const log = join(dir, "ok.jsonl");
    writeFileSync(log, record);
    for (const flag of ["--max-line-bytes", "--max-uris"]) {
      const run = await runCli(["report", flag, "0", log]);
      expect(run.code, flag).toBe(2);
      expect(run.stderr).toContain(`report: ${flag} expects a whole number ≥ 1, got 0`);
    }
  });
});

describe("many logs that end in a gzip error", () => {
  it("each one's descriptor is let go: a glob of more than the process may open is read", async () => {
    const folder = join(dir, "broken-gz");
    mkdirSync(folder);
    // A gzip header, then bytes that inflate for a while before they go wrong (a fixed pseudo-random run).
    let state = 12345;
    const noise = Buffer.alloc(300_000);
    for (let i = 0; i < noise.length; i++) {
      state = (state * 1103515245 + 12345) >>> 0;
      noise[i] = state >>> 24;
    }
    const garbage = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03]), noise]);
    for (let i = 0; i < 80; i++) writeFileSync(join(folder, `log${String(i).padStart(3, "0")}.jsonl.gz`), garbage);
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn("sh", [
        "-c",
        `ulimit -n 64; exec "$0" "$@"`,
        process.execPath,
        CLI,
        "report",
        "--format",
        "json",
        `${folder}/*.gz`,
      ]);
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.resume();
      child.on("close", (code) => resolve({ code, stderr }));
    });
    expect(run.stderr).not.toMatch(/EMFILE/);
    expect(run.code, run.stderr).toBe(0);
  }, 30_000);
});

describe("a glob over a log and its rotations", () => {
  it("reads them oldest first, so a record continued across a rotation is one entry", async () => {
    const logs = join(tempDir("mcpn-report-rotated-"), "logs");
    mkdirSync(logs);
    const base = { server: "img", session: "img-4", method: "tools/call", uri: null, path: "content[0]", ms: 1 };
    const fixMime = {
      ts: "2026-12-07T21:32:21.645Z",
      ...base,
      action: "fix-mime",
      mimeBefore: "image/jpeg",
      mimeAfter: "image/png",
      ...{ bytesBefore: 3146, bytesAfter: 3145, saved: 1, reason: "image/png signature", applied: true },
    };
    const fit = {
      ts: "2026-12-07T21:32:21.646Z",
      ...base,
      action: "fit-image",
      mimeBefore: "image/png",
      mimeAfter: "image/png",
      ...{ bytesBefore: 3145, bytesAfter: 501, saved: 2644, reason: "resized", applied: true, chained: true },
    };
    // The first write of the entry went before a rotation, the second after it; an older log before both.
    // An older rotation's record, written before the others (as its ts says).
    const older = `${JSON.stringify({ ...JSON.parse(record), ts: "2026-12-06T00:00:00.000Z" })}\n`;
    writeFileSync(join(logs, "n.jsonl.2"), older);
    writeFileSync(join(logs, "n.jsonl.1"), `${JSON.stringify(fixMime)}\n`);
    writeFileSync(join(logs, "n.jsonl"), `${JSON.stringify(fit)}\n`);
    const totals = async (...args: string[]) => {
      const run = await runCli(["report", "--format", "json", ...args]);
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { totals: { entries: number; bytesBefore: number } }).totals;
    };
    const inOrder = await totals(join(logs, "n.jsonl.2"), join(logs, "n.jsonl.1"), join(logs, "n.jsonl"));
    expect(await totals(join(logs, "n.jsonl*"))).toEqual(inOrder);
    expect(inOrder.entries).toBe(2);
    // Named in a shell's order (the live log first), and with logrotate's dated names.
    expect(await totals(join(logs, "n.jsonl"), join(logs, "n.jsonl.1"), join(logs, "n.jsonl.2"))).toEqual(inOrder);
    const dated = join(tempDir("mcpn-report-dated-"), "logs");
    mkdirSync(dated);
    writeFileSync(join(dated, "n.jsonl-2026-12-05"), record);
    writeFileSync(join(dated, "n.jsonl-2026-12-06"), `${JSON.stringify(fixMime)}\n`);
    writeFileSync(join(dated, "n.jsonl"), `${JSON.stringify(fit)}\n`);
    expect(await totals(join(dated, "n.jsonl*"))).toEqual(inOrder);
    // logrotate's -%Y%m%d-%s, rotations moved to another folder (olddir), and a link to the live log.
    const other = tempDir("mcpn-report-olddir-");
    for (const dir of ["old", "live"]) mkdirSync(join(other, dir));
    writeFileSync(join(other, "old", "n.jsonl-20261206-1765065600"), `${JSON.stringify(fixMime)}\n`);
    writeFileSync(join(other, "live", "n.jsonl"), `${JSON.stringify(fit)}\n`);
    symlinkSync(join(other, "live", "n.jsonl"), join(other, "live", "current.jsonl"));
    const once = { ...inOrder, entries: 1, bytesBefore: fixMime.bytesBefore };
    expect(
      await totals(join(other, "live", "n.jsonl"), join(other, "old", "n.jsonl-20261206-1765065600")),
    ).toMatchObject({
      entries: 1,
      bytesBefore: once.bytesBefore,
    });
    expect(await totals(join(other, "live", "current.jsonl"), join(other, "old", "*"))).toMatchObject({
      entries: 1,
      bytesBefore: once.bytesBefore,
    });
    // A pipe (`<(zcat …)`) among them tells no time: the order given is kept, the pipe first here.
    const fifo = join(other, "old.fifo");
    execFileSync("mkfifo", [fifo]);
    const writer = spawn("sh", ["-c", `printf '%s\\n' "$0" > "$1"`, JSON.stringify(fixMime), fifo]);
    try {
      expect(await totals(fifo, join(other, "live", "n.jsonl"))).toMatchObject({
        entries: 1,
        bytesBefore: once.bytesBefore,
      });
    } finally {
      writer.kill();
    }
    // The live log on stdin after its rotation (`kubectl logs … | report n.jsonl.1 -`): read where given.
    const live = await runCli(["report", "--format", "json", join(logs, "n.jsonl.2"), join(logs, "n.jsonl.1"), "-"], {
      input: `${JSON.stringify(fit)}\n`,
    });
    expect((JSON.parse(live.stdout) as { totals: unknown }).totals).toEqual(inOrder);
    // A pipe beside a log named live-first: the pipe first, the log's files still in written order.
    const piped = spawn("sh", ["-c", `printf '%s' "$0" > "$1"`, record, fifo]);
    try {
      expect(await totals(fifo, join(logs, "n.jsonl"), join(logs, "n.jsonl.1"))).toEqual(inOrder);
    } finally {
      piped.kill();
    }
  });
});
