/**
 * The one log writer under the operational log and the normalization records: files appended
 * to and reopened, stderr-like descriptors written synchronously without ever blocking on a full
 * pipe, failed writes reported once, and close() bounded when the destination never drains.
 */
import { execFileSync } from "node:child_process";
import {
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LOG_BATCH_BYTES, LOG_FLUSH_MS, openLogSink } from "../../src/observe/logSink.js";
import { tempDir } from "../helpers/tempDir.js";

const opened: number[] = [];
afterEach(() => {
  for (const fd of opened.splice(0)) closeSync(fd);
});

/** A FIFO with its read end held open (non-blocking, nothing read until asked): a pipe whose reader is stalled. */
function stalledPipe(): { path: string; reader: number } {
  const path = join(tempDir("mcpn-sink-"), "pipe");
  execFileSync("mkfifo", [path]);
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  opened.push(reader);
  return { path, reader };
}

/** Reads from a non-blocking `fd` until `until(text)` holds or `ms` have passed. */
async function readUntil(fd: number, until: (text: string) => boolean, ms = 10_000): Promise<string> {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(65_536);
  const deadline = Date.now() + ms;
  while (!until(Buffer.concat(chunks).toString("utf8")) && Date.now() < deadline) {
    try {
      const n = readSync(fd, buf);
      if (n > 0) chunks.push(Buffer.from(buf.subarray(0, n)));
      else await new Promise((resolve) => setTimeout(resolve, 10));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Polls `check` every 20 ms until it is true or `ms` have passed. */
async function eventually(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * A file sink written to once, then rotated onto a full disk (`/dev/full`) and reopened: its next
 * write has failed by the time this returns. `resumed()` counts the sink's resumes.
 */
async function sinkOnFullDisk(file: string) {
  const errors: Error[] = [];
  let resumes = 0;
  const sink = openLogSink({ file }, { onError: (error) => errors.push(error), onResumed: () => resumes++ });
  // Open and written to first (a rotation racing the first open is another matter).
  sink.writeNow(line(0));
  await eventually(() => readFileSync(file, "utf8") === line(0));
  rmSync(file);
  symlinkSync("/dev/full", file);
  sink.reopen();
  sink.writeNow(line(1));
  await eventually(() => errors.length > 0);
  return { sink, errors, resumed: () => resumes };
}

const line = (n: number): string => `${JSON.stringify({ n, pad: "p".repeat(100) })}\n`;
const lines = (count: number, from = 0): string[] => Array.from({ length: count }, (_, i) => line(from + i));

describe("the log writer, to a file", () => {
  it("creates the folders, appends (what was there stays) and keeps the order of write and writeNow lines", async () => {
    const file = join(tempDir("mcpn-sink-"), "a", "b", "log.jsonl");
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, "earlier run\n");
    const sink = openLogSink({ file });
    sink.write(line(1));
    sink.writeNow(line(2));
    sink.write(line(3));
    await sink.close();
    expect(readFileSync(file, "utf8")).toBe(`earlier run\n${line(1)}${line(2)}${line(3)}`);
  });

  it("batches write lines: nothing reaches the file before LOG_BATCH_BYTES or the flush interval", async () => {
    const file = join(tempDir("mcpn-sink-"), "log.jsonl");
    const sink = openLogSink({ file });
    try {
      sink.write(line(1));
      await new Promise((resolve) => setTimeout(resolve, LOG_FLUSH_MS / 5));
      expect(readFileSync(file, "utf8")).toBe("");
      const many = lines(Math.ceil(LOG_BATCH_BYTES / line(0).length) + 1, 2);
      for (const text of many) sink.write(text);
      await eventually(() => readFileSync(file, "utf8").length >= LOG_BATCH_BYTES);
      expect(readFileSync(file, "utf8").startsWith(line(1) + many[0])).toBe(true);
    } finally {
      await sink.close();
    }
  });

  it("reopen after a rename (logrotate): earlier lines stay in the moved file, later ones go to a new file at the path", async () => {
    const dir = tempDir("mcpn-sink-");
    const file = join(dir, "log.jsonl");
    const sink = openLogSink({ file });
    sink.writeNow(line(1));
    await eventually(() => readFileSync(file, "utf8") === line(1));
    renameSync(file, join(dir, "log.jsonl.1"));
    sink.writeNow(line(2)); // still the open file, wherever it now is
    sink.reopen();
    sink.writeNow(line(3));
    await sink.close();
    expect(readFileSync(join(dir, "log.jsonl.1"), "utf8")).toBe(line(1) + line(2));
    expect(readFileSync(file, "utf8")).toBe(line(3));
  });

  it("reopen after the file's folders were taken away makes them again, and the lines go on at the path", async () => {
    const dir = tempDir("mcpn-sink-");
    const file = join(dir, "logs", "sub", "log.jsonl");
    const errors: Error[] = [];
    const sink = openLogSink({ file }, { onError: (error) => errors.push(error) });
    sink.writeNow(line(1));
    await eventually(() => readFileSync(file, "utf8") === line(1));
    rmSync(join(dir, "logs"), { recursive: true });
    sink.reopen();
    sink.writeNow(line(2));
    await sink.close();
    expect(errors).toEqual([]);
    expect(readFileSync(file, "utf8")).toBe(line(2));
  });

  it("a reopen that fails (the path is now a folder) is reported once; nothing more is written; the next reopen tries again", async () => {
    const dir = tempDir("mcpn-sink-");
    const file = join(dir, "log.jsonl");
    const errors: Error[] = [];
    const sink = openLogSink({ file }, { onError: (error) => errors.push(error) });
    sink.writeNow(line(1));
    await eventually(() => readFileSync(file, "utf8") === line(1));
    renameSync(file, join(dir, "moved.jsonl"));
    mkdirSync(file);
    sink.reopen();
    await eventually(() => errors.length > 0);
    sink.writeNow(line(2));
    sink.write(line(3));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(errors.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(["EISDIR"]);
    // Still a folder at the next reopen: said again, once.
    sink.reopen();
    await sink.close();
    expect(errors).toHaveLength(2);
    expect(errors[1]!.message).toContain("EISDIR");
    expect(readFileSync(join(dir, "moved.jsonl"), "utf8")).toBe(line(1));
  });

  it("after a failed write (a full disk), a reopen that finds the path writable again resumes the records", async () => {
    const dir = tempDir("mcpn-sink-");
    const file = join(dir, "logs", "log.jsonl");
    const { sink, errors, resumed } = await sinkOnFullDisk(file);
    expect((errors[0] as NodeJS.ErrnoException).code).toBe("ENOSPC");
    // The disk is fixed, the log folder even taken away: the reopen makes it again.
    rmSync(join(dir, "logs"), { recursive: true });
    sink.reopen();
    sink.writeNow(line(2));
    sink.write(line(3));
    await sink.close();
    expect(readFileSync(file, "utf8")).toBe(line(2) + line(3));
    expect(errors).toHaveLength(1);
    expect(resumed()).toBe(1);
  });

  it("a line a failed write left torn is ended before the records resume; resuming is told only once a write took", async () => {
    const file = join(tempDir("mcpn-sink-"), "log.jsonl");
    const { sink, resumed } = await sinkOnFullDisk(file);
    // What a disk that filled mid-line leaves: the start of a record.
    rmSync(file);
    writeFileSync(file, '{"ts":"2026-12-07T00:00:00Z","server":');
    sink.reopen();
    expect(resumed()).toBe(0);
    sink.writeNow(line(2));
    await sink.close();
    expect(readFileSync(file, "utf8")).toBe(`{"ts":"2026-12-07T00:00:00Z","server":\n${line(2)}`);
    expect(resumed()).toBe(1);
  });

  it("close is bounded: a file that never takes the last lines (a FIFO nobody reads) is closed after closeWaitMs", async () => {
    const { path, reader } = stalledPipe();
    const sink = openLogSink({ file: path }, { closeWaitMs: 300, onError: () => {} });
    // More than the pipe holds: the writer is left waiting on the reader.
    for (const text of lines(4000)) sink.writeNow(text);
    const started = Date.now();
    await sink.close();
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(10_000);
    // What did get through is whole lines from the start, in order.
    const got = await readUntil(reader, (text) => text.length > 0);
    expect(got.length).toBeGreaterThan(0);
    expect(lines(4000).join("").startsWith(got)).toBe(true);
  });
});

describe("the log writer, to a descriptor (stderr)", () => {
  it("writeNow puts the line (after the lines waiting in the batch) with the OS before it returns", async () => {
    const { path, reader } = stalledPipe();
    const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    opened.push(writer);
    const sink = openLogSink({ fd: writer });
    sink.write(line(1));
    // Still in the batch: the pipe is empty.
    expect(() => readSync(reader, Buffer.alloc(16))).toThrow(/EAGAIN/);
    sink.writeNow(line(2));
    // No event-loop turn needed: the bytes are in the pipe already.
    const buf = Buffer.alloc(4096);
    const n = readSync(reader, buf);
    expect(buf.subarray(0, n).toString("utf8")).toBe(line(1) + line(2));
    await sink.close();
  });

  it("a full pipe never blocks the writer: lines wait, in order, and arrive once the reader reads", async () => {
    const { path, reader } = stalledPipe();
    const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    opened.push(writer);
    const sink = openLogSink({ fd: writer }, { closeWaitMs: 300 });
    const all = lines(6000);
    for (const text of all) sink.writeNow(text); // ~700 KB, far more than the pipe holds
    // close() waits for the reader, but only closeWaitMs; what is left still waits, not lost.
    const started = Date.now();
    await sink.close();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    const got = await readUntil(reader, (text) => text.length >= all.join("").length);
    expect(got).toBe(all.join(""));
  });

  it("a failed write (ENOSPC on /dev/full) is reported once; later lines are dropped without more reports", async () => {
    const fd = openSync("/dev/full", "w");
    opened.push(fd);
    const errors: Error[] = [];
    const sink = openLogSink({ fd }, { onError: (error) => errors.push(error) });
    sink.writeNow(line(1));
    sink.writeNow(line(2));
    sink.write(line(3));
    await sink.close();
    sink.writeNow(line(4));
    expect(errors.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(["ENOSPC"]);
  });
});

describe("the log writer, to a stream", () => {
  it("hands every line to the stream at once and leaves it open", async () => {
    const { PassThrough } = await import("node:stream");
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c.toString()));
    const sink = openLogSink({ stream });
    sink.write(line(1));
    sink.writeNow(line(2));
    await sink.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(chunks.join("")).toBe(line(1) + line(2));
    expect(stream.writableEnded).toBe(false);
  });
});
