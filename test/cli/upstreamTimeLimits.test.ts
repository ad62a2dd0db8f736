/**
 * `limits.connectTimeoutMs` and `limits.killGraceMs` reach the upstreams of `stdio --config`: an
 * HTTP server that accepts connections but never answers fails the host's `initialize` after the
 * configured time, not the built-in one; a child that ignores SIGTERM is killed (with what it
 * started) the configured time after the host leaves.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connectStdioWithConfig } from "../helpers/proxyProcess.js";
import { CLI, ROOT } from "../helpers/paths.js";
import { signalProcess } from "../helpers/pids.js";
import { tempDir } from "../helpers/tempDir.js";
import { processGone } from "../reliability/helpers.js";

const ECHO_SERVER = join(ROOT, "test", "fixtures", "upstream-servers", "stdioEchoServer.mjs");
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const alive = (pid: number): boolean => !processGone(pid);

/** A TCP listener that accepts every connection and never writes a byte. */
async function silentListener(): Promise<string> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe("upstream time limits from the config", () => {
  it.each([
    ["streamable-http", "http"],
    ["sse", "http"],
    ["websocket", "ws"],
  ])(
    "limits.connectTimeoutMs: 300 fails the host's initialize (%s) at once, naming the limit",
    async (transport, scheme) => {
      const url = (await silentListener()).replace(/^http/, scheme);
      const started = performance.now();
      const connecting = connectStdioWithConfig(
        { mcpServers: { silent: { url, transport } }, limits: { connectTimeoutMs: 300 } },
        "silent",
      );
      await expect(connecting).rejects.toThrow(/no answer within 300 ms \(limits\.connectTimeoutMs\)/);
      expect(performance.now() - started).toBeLessThan(5_000);
    },
  );

  it("limits.killGraceMs: 300 kills a child that ignores SIGTERM, and what it started, soon after the host leaves", async () => {
    const file = join(tempDir(), "proxy.config.json");
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: { echo: { command: process.execPath, args: [ECHO_SERVER, "--ignore-sigterm"] } },
        limits: { killGraceMs: 300 },
      }),
    );
    const proxy = spawn(process.execPath, [CLI, "stdio", "--config", file, "--server", "echo"], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    cleanups.push(() => void proxy.kill("SIGKILL"));
    let out = "";
    proxy.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    proxy.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "grandchild" })}\n`);
    for (const deadline = Date.now() + 10_000; !out.includes("\n") && Date.now() < deadline; )
      await new Promise((resolve) => setTimeout(resolve, 20));
    const grandchild = (JSON.parse(out.split("\n")[0]!) as { result: { pid: number } }).result.pid;
    // The upstream leads the process group it was started in: the grandchild's group is its pid.
    const pid = Number(readFileSync(`/proc/${grandchild}/stat`, "utf8").split(") ")[1]!.split(" ")[2]);
    cleanups.push(() => {
      for (const each of [pid, grandchild]) if (alive(each)) signalProcess(each, "SIGKILL");
    });
    expect(alive(pid)).toBe(true);
    const left = performance.now();
    proxy.stdin.end();
    while (alive(pid) && performance.now() - left < 10_000) await new Promise((resolve) => setTimeout(resolve, 20));
    const took = performance.now() - left;
    expect(alive(pid)).toBe(false);
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(1_800);
  });
});
