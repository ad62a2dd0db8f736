/**
 * The operational logger in a real process that crashes: every line logged before an uncaught
 * exception reaches stderr, in order and whole, even though the stderr pipe was full and read
 * only after the crash. The line format stays level, time, base fields, fields, msg.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createStderrLogger } from "../../src/observe/logger.js";
import { ROOT } from "../helpers/paths.js";

/** ~1.5 MB: far more than a pipe (64 KiB) holds. */
const FILLER = 20_000;

describe("the operational logger", () => {
  it("writes level, time, base fields, fields, msg — in that order, one JSON line each", () => {
    const lines: string[] = [];
    const logger = createStderrLogger("info", { a: 1 }, (line) => lines.push(line)).child({ b: "x" });
    logger.debug("hidden");
    logger.warn("shown", { c: true });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith("\n")).toBe(true);
    expect(Object.keys(JSON.parse(lines[0]!))).toEqual(["level", "time", "a", "b", "c", "msg"]);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "warn", a: 1, b: "x", c: true, msg: "shown" });
  });

  it("an error logged just before an uncaught exception reaches a stderr pipe read only after the crash", async () => {
    const logger = join(ROOT, "dist", "observe", "logger.js");
    const code = `
      const { createStderrLogger } = await import(${JSON.stringify(logger)});
      const log = createStderrLogger("info", { app: "t" });
      for (let i = 0; i < ${FILLER}; i++) log.info("filler", { i });
      log.error("about to crash", { why: "test" });
      setTimeout(() => { throw new Error("boom"); }, 10);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "pipe"] });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      // A 'readable' listener that reads nothing: stderr stays unread until the child has crashed.
      const unread = (): void => {};
      child.stderr.on("readable", unread);
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      const exited = await Promise.race([
        new Promise<boolean>((resolve) => child.once("exit", () => resolve(true))),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1500)),
      ]);
      // The child is still at its exit, waiting for this reader (or it had nothing left to write).
      expect(exited).toBe(false);
      const chunks: Buffer[] = [];
      child.stderr.off("readable", unread);
      child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
      child.stderr.resume();
      const exitCode = await Promise.race([
        closed,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no exit within 30 s")), 30_000).unref()),
      ]);
      expect(exitCode).toBe(1);
      const text = Buffer.concat(chunks).toString("utf8");
      const crash = text.indexOf('"msg":"about to crash"}\n');
      expect(crash).toBeGreaterThan(0);
      const lines = text.slice(0, text.indexOf("\n", crash)).split("\n");
      const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(parsed.slice(0, -1).map((entry) => entry.i)).toEqual(Array.from({ length: FILLER }, (_, i) => i));
      expect(Object.keys(parsed.at(-1)!)).toEqual(["level", "time", "app", "why", "msg"]);
      expect(text.slice(crash)).toContain("Error: boom");
      expect(stdout).toBe("");
    } finally {
      child.kill("SIGKILL");
    }
  });
});
