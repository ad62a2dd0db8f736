/**
 * Log lines for a stderr nobody reads wait in the proxy, in order — up to a bound: past
 * LOG_BACKLOG_BYTES new lines are dropped and counted, and a line saying how many follows once
 * the reader takes text again. A server that makes the proxy warn on every junk line it writes
 * grew it without end while the host did not read stderr.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/paths.js";

// A child that writes 96 MiB of log lines to its stderr through the proxy's writer, then prints its RSS.
const WRITER = `
const { fdLineOutput } = await import(${JSON.stringify(join(ROOT, "dist", "observe", "fdLineOutput.js"))});
// As in the proxy, Node has opened its stderr (a pipe: non-blocking, a full one answers EAGAIN).
void process.stderr;
const out = fdLineOutput(2, () => {});
const line = JSON.stringify({ level: "warn", msg: "x".repeat(1000) }) + "\\n";
for (let i = 0; i < 96 * 1024; i++) out.put(line);
process.stdout.write(String(process.memoryUsage().rss) + "\\n");
out.flushSync(20000);
`;

describe("a stderr nobody reads", () => {
  it("holds at most the backlog bound; the lines dropped are counted in a line once it reads again", async () => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", WRITER], { stdio: ["ignore", "pipe", "pipe"] });
    child.stderr.pause();
    let rss = "";
    child.stdout.on("data", (chunk: Buffer) => (rss += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the writer never reported")), 20_000);
      child.stdout.on("data", () => {
        if (rss.endsWith("\n")) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    expect(Number(rss) / 2 ** 20).toBeLessThan(96);
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stderr.resume();
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(0);
    const last = JSON.parse(err.trimEnd().split("\n").at(-1)!) as { msg: string; dropped: number };
    expect(last.msg).toBe("log lines dropped: stderr was not read");
    expect(last.dropped).toBeGreaterThan(70 * 1024);
  }, 40_000);
});
