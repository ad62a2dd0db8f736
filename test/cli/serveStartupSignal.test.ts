/**
 * `serve` sent SIGHUP while it starts (a logrotate `postrotate`, a config-reload sidecar signalling
 * a restarting pod) goes on starting — Node's default action would end it — and serves; SIGTERM
 * then stops it as usual.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, FIXTURE_SERVER } from "../helpers/paths.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("serve sent SIGHUP while it starts", () => {
  it("starts all the same, and SIGTERM then stops it", async () => {
    const child = spawn(
      process.execPath,
      [CLI, "serve", "--port", "0", "--name", "fx", "--", process.execPath, FIXTURE_SERVER],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    cleanups.push(() => child.kill("SIGKILL"));
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
      child.once("exit", (code, signal) => resolve(signal ?? code)),
    );
    // Whether SIGHUP has a handler (bit 0 of SigCgt), and whether the listening socket exists yet.
    const pid = child.pid!;
    const hupCaught = (): boolean => {
      const line = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return line !== null && (BigInt(`0x${line[1]}`) & 1n) === 1n;
    };
    // Its stdout and stderr are sockets from the start (Node's pipes); the listener is one more.
    const sockets = (): number =>
      readdirSync(`/proc/${pid}/fd`).filter((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:");
        } catch {
          return false;
        }
      }).length;
    const atStart = sockets();
    let caughtFirst: boolean | undefined;
    for (const deadline = Date.now() + 20_000; caughtFirst === undefined && child.exitCode === null; ) {
      if (Date.now() > deadline) break;
      const caught = hupCaught();
      if (sockets() > atStart) caughtFirst = false;
      if (caught) caughtFirst = caughtFirst ?? true;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    // Taken well before the listener opens, not just before the "listening" line.
    expect(caughtFirst).toBe(true);
    // From then on until it listens, every few milliseconds.
    for (const deadline = Date.now() + 20_000; !/listening on http/.test(out) && child.exitCode === null; ) {
      if (child.signalCode !== null || Date.now() > deadline) break;
      child.kill("SIGHUP");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(child.signalCode, err).toBeNull();
    expect(out).toMatch(/listening on http/);
    const health = await fetch(`${/listening on (http:\/\/\S+)/.exec(out)![1]}/healthz`);
    expect(health.status).toBe(200);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 30_000);
});
