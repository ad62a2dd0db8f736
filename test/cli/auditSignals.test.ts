/**
 * An audit stopped by Ctrl-C or SIGTERM ends its upstream before it exits: the upstream runs in
 * a process group of its own (out of the terminal's reach), so nothing else would. No report is
 * written, so the folders made for `-o` go again. A real `audit`
 * in front of a fixture server whose reads never answer.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CLI } from "../helpers/paths.js";
import { readPidFile } from "../helpers/pids.js";
import { tempDir } from "../helpers/tempDir.js";
import { untilGone } from "../reliability/helpers.js";

const AUDIT_UPSTREAM = fileURLToPath(new URL("../fixtures/servers/audit-upstream.mjs", import.meta.url));

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("audit stopped by a signal", () => {
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    it(`${signal}: the upstream is ended, the folders made for -o go again, and the audit exits ${code}`, async () => {
      const dir = tempDir("mcpn-audit-signal-");
      const pidFile = join(dir, "upstream.pid");
      const output = join(dir, "made", "for", "report.md");
      const args = [CLI, "audit", "-o", output, "--", process.execPath, AUDIT_UPSTREAM];
      const audit = spawn(process.execPath, args, {
        env: { ...process.env, AUDIT_HANG: "1", AUDIT_PID_FILE: pidFile },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      audit.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => audit.once("exit", (c) => resolve(c)));
      try {
        const upstream = await readPidFile(pidFile);
        // Reading: its first read is waiting for an answer that never comes.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(existsSync(join(dir, "made", "for"))).toBe(true);
        audit.kill(signal);
        expect(await exited, stderr).toBe(code);
        expect(await untilGone(upstream, 3000)).toBe(true);
        expect(existsSync(join(dir, "made"))).toBe(false);
      } finally {
        audit.kill("SIGKILL");
      }
    }, 20_000);
  }

  it("SIGTERM while --tokens counts a megabyte run of one letter: exits 143 at once", async () => {
    const dir = tempDir("mcpn-audit-signal-");
    const pidFile = join(dir, "upstream.pid");
    const answered = join(dir, "answered");
    const audit = spawn(
      process.execPath,
      [CLI, "audit", "--tokens", "--concurrency", "1", "--", process.execPath, AUDIT_UPSTREAM],
      {
        // Its first read answers a megabyte of "x"; the reads after it never answer.
        env: {
          ...process.env,
          AUDIT_BIG_BYTES: String(1024 * 1024),
          AUDIT_HANG: "others",
          AUDIT_PID_FILE: pidFile,
          AUDIT_ANSWERED_FILE: answered,
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    audit.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => audit.once("exit", (c) => resolve(c)));
    try {
      await until(() => existsSync(answered), 10_000);
      const upstream = await readPidFile(pidFile);
      // The answer is read and its entries are being counted.
      await new Promise((resolve) => setTimeout(resolve, 300));
      audit.kill("SIGTERM");
      const code = await Promise.race([
        exited,
        new Promise((resolve) => setTimeout(() => resolve("still running"), 5000)),
      ]);
      expect(code, stderr).toBe(143);
      expect(await untilGone(upstream, 3000)).toBe(true);
    } finally {
      audit.kill("SIGKILL");
    }
  }, 20_000);
});
