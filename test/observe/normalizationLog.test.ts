import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { LogRecord } from "../../src/observe/logRecord.js";
import { createNormalizationLog, LOG_FLUSH_MS } from "../../src/observe/normalizationLog.js";
import { tempDir } from "../helpers/tempDir.js";

const record = (n: number): LogRecord => ({
  ts: `2026-01-01T00:00:0${n}.000Z`,
  server: "docs",
  session: "docs-1",
  method: "resources/read",
  uri: `file:///${n}.md`,
  action: "unwrap-blob",
  mimeBefore: "application/octet-stream",
  mimeAfter: "text/markdown",
  bytesBefore: 100 + n,
  bytesAfter: 80,
  saved: 20 + n,
  ms: 0.25,
  path: "contents[0]",
  reason: "valid UTF-8, textual type",
  applied: true,
});

describe("the normalization log (pino)", () => {
  it("creates the file with its folder, writes log lines with ts first and nothing of pino's own", async () => {
    const file = join(tempDir("mcpn-log-"), "deep", "er", "n.jsonl");
    const log = createNormalizationLog({ file });
    log.write(record(1));
    await log.close();
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines.at(-1)).toBe("");
    const parsed = JSON.parse(lines[0]!);
    expect(parsed).toEqual(record(1));
    expect(Object.keys(parsed).slice(0, 12)).toEqual([
      "ts",
      "server",
      "session",
      "method",
      "uri",
      "action",
      "mimeBefore",
      "mimeAfter",
      "bytesBefore",
      "bytesAfter",
      "saved",
      "ms",
    ]);
    expect(parsed).not.toHaveProperty("level");
    expect(parsed).not.toHaveProperty("time");
  });

  it("writes the very line pino's logger wrote for it (fields, order, escaping); a lone surrogate is escaped, never U+FFFD", async () => {
    const odd: LogRecord = {
      ...record(6),
      uri: 'file:///a "quoted"\\path\n\t\u0001é😀.md',
      mimeBefore: null,
      reason: "x".repeat(100),
      ms: 1e-7,
    };
    const lines = async (write: (stream: PassThrough) => void): Promise<string> => {
      const stream = new PassThrough();
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      write(stream);
      await new Promise((resolve) => setImmediate(resolve));
      return Buffer.concat(chunks).toString("utf8");
    };
    const ours = await lines((stream) => createNormalizationLog({ stream }).write(odd));
    // How the log was once written with pino's logger: ts through the timestamp hook.
    const theirs = await lines((stream) => {
      const { ts, ...rest } = odd;
      pino(
        { base: null, timestamp: () => `"ts":${JSON.stringify(ts)}`, formatters: { level: () => ({}) } },
        stream,
      ).info(rest);
    });
    expect(ours).toBe(theirs);
    expect(JSON.parse(ours)).toEqual(odd);
    const lone = await lines((stream) => createNormalizationLog({ stream }).write({ ...record(7), uri: "x:\ud800" }));
    expect(lone).toContain('"uri":"x:\\ud800"');
    expect(lone).not.toContain("\ufffd");
  });

  it("a batch smaller than a write reaches the file within the flush interval, while the log stays open, and again after an idle stretch", async () => {
    const file = join(tempDir("mcpn-log-"), "n.jsonl");
    const log = createNormalizationLog({ file });
    /** The records in the file once it holds `count` lines, or when LOG_FLUSH_MS × 4 has passed. */
    const recordsOnceThere = async (count: number): Promise<unknown[]> => {
      const until = Date.now() + LOG_FLUSH_MS * 4;
      const lines = (): string[] => (existsSync(file) ? readFileSync(file, "utf8").split("\n").slice(0, -1) : []);
      while (lines().length < count && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
      return lines().map((line) => JSON.parse(line));
    };
    try {
      log.write(record(1));
      expect(await recordsOnceThere(1)).toEqual([record(1)]);
      // Idle flush intervals pass, then one more record: it is flushed too.
      await new Promise((resolve) => setTimeout(resolve, LOG_FLUSH_MS * 2));
      log.write(record(2));
      expect(await recordsOnceThere(2)).toEqual([record(1), record(2)]);
    } finally {
      await log.close();
    }
  });

  it("appends on restart, never truncates", async () => {
    const file = join(tempDir("mcpn-log-"), "n.jsonl");
    for (const n of [1, 2, 3]) {
      const log = createNormalizationLog({ file });
      log.write(record(n));
      await log.close();
    }
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.uri)).toEqual(["file:///1.md", "file:///2.md", "file:///3.md"]);
  });

  it("to a stream (stderr): the same lines, and the stream is left open", async () => {
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c.toString()));
    const log = createNormalizationLog({ stream });
    log.write(record(4));
    await log.close();
    expect(stream.writableEnded).toBe(false);
    expect(JSON.parse(chunks.join(""))).toEqual(record(4));
  });

  it("a file that cannot be written is refused when the log is created, naming the path and the OS error", async () => {
    const dir = tempDir("mcpn-log-");
    // A path under a regular file cannot be created.
    const blocker = join(dir, "blocker");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(blocker, "x");
    const errors: Error[] = [];
    expect(() =>
      createNormalizationLog({ file: join(blocker, "n.jsonl") }, { onError: (e) => errors.push(e) }),
    ).toThrow(`cannot write the log file ${join(blocker, "n.jsonl")}: ENOTDIR`);
    expect(() => createNormalizationLog({ file: "/dev/full" })).toThrow(/ENOSPC/);
    expect(errors).toEqual([]);
    expect(existsSync(join(blocker, "n.jsonl"))).toBe(false);
  });
});
