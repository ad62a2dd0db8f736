/**
 * The pid helpers every test signals through: a pid of 0 (what `Number("")` gives for a pid file
 * read as it was created) would signal the test runner's whole process group — the CI run with it.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readPidFile, signalProcess } from "./pids.js";
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
});
