/**
 * The pid helpers every test signals through: a pid of 0 (what `Number("")` gives for a pid file
 * read as it was created) would signal the test runner's whole process group — the CI run with it.
 */
import { execFile, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./paths.js";
import { descendantsOf, readPidFile, signalProcess } from "./pids.js";
import { sleep } from "./polling.js";
import { tempDir } from "./tempDir.js";

describe("pids", () => {
  it.each([0, -1, 1, Number.NaN, 2.5, -process.pid])("signalProcess refuses %s, sending nothing", (pid) => {
    expect(() => signalProcess(pid, "SIGUSR2")).toThrow(/not a process id/);
  });

  it("signalProcess signals one live process, and says false once it is gone", async () => {
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once("exit", (_code, signal) => resolve(signal)),
    );
    expect(signalProcess(child.pid!, "SIGKILL")).toBe(true);
    expect(await exited).toBe("SIGKILL");
    expect(signalProcess(child.pid!, 0)).toBe(false);
  });

  it("readPidFile waits past a file that exists but is still empty, and returns the pid written later", async () => {
    const file = join(tempDir("mcpn-pids-"), "child.pid");
    writeFileSync(file, "");
    const read = readPidFile(file, 5_000);
    await sleep(200);
    writeFileSync(file, "4242\n");
    expect(await read).toBe(4242);
  });

  it("readPidFile fails after its timeout, naming the file and what it holds", async () => {
    const file = join(tempDir("mcpn-pids-"), "child.pid");
    writeFileSync(file, "0");
    await expect(readPidFile(file, 200)).rejects.toThrow(/child\.pid: no pid in 200 ms \(holds "0"\)/);
  });

  it("descendantsOf finds a child and the child's own child, and not after they ended", async () => {
    const shell = spawn("sh", ["-c", "sleep 300 & echo $! ; wait"], { stdio: ["ignore", "pipe", "ignore"] });
    const sleeper = Number(
      await new Promise<string>((resolve) => shell.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString()))),
    );
    try {
      expect(descendantsOf(process.pid)).toEqual(expect.arrayContaining([shell.pid, sleeper]));
    } finally {
      signalProcess(sleeper, "SIGKILL");
      signalProcess(shell.pid!, "SIGKILL");
    }
    await new Promise((resolve) => shell.once("close", resolve));
    expect(descendantsOf(process.pid)).not.toContain(shell.pid);
  });

  it("a test file's processes left running — in a group of their own, a shell's child, an orphan — are killed after it, and named", async () => {
    const pidsFile = join(tempDir("mcpn-pids-"), "left.json");
    const vitest = join(ROOT, "node_modules", "vitest", "vitest.mjs");
    const config = join(ROOT, "test", "fixtures", "leftovers", "vitest.config.ts");
    const stderr = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [vitest, "run", "--config", config],
        { env: { ...process.env, LEFTOVER_PIDS: pidsFile }, timeout: 40_000, killSignal: "SIGKILL" },
        (error, _stdout, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(err)),
      ),
    );
    const pids = JSON.parse(readFileSync(pidsFile, "utf8")) as number[];
    try {
      expect(pids).toHaveLength(4);
      for (const pid of pids) expect(stderr).toContain(`\n  ${pid} `);
      // Killed, and reaped by init once their parents had gone.
      for (let waited = 0; pids.some((pid) => signalProcess(pid, 0)) && waited < 5_000; waited += 50) await sleep(50);
      expect(pids.filter((pid) => signalProcess(pid, 0))).toEqual([]);
    } finally {
      // Not left behind if the setup file failed to end them.
      for (const pid of pids) if (signalProcess(pid, 0)) signalProcess(pid, "SIGKILL");
    }
  }, 60_000);
});
