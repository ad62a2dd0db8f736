/**
 * `stdio` told to stop (SIGTERM, or an SDK host's close: stdin ended, then SIGTERM two seconds
 * later, then SIGKILL two more) stops as a server started directly would: at once, its upstream
 * ended with it — never left running after the host has gone, whatever call was in flight.
 */
import { spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, ROOT } from "../helpers/paths.js";
import { join } from "node:path";
import { FAULT_SERVER, untilGone } from "../reliability/helpers.js";
import { childrenOf, readPidFile, signalProcess } from "../helpers/pids.js";
import { tempDir } from "../helpers/tempDir.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function killLater(pid: number): void {
  cleanups.push(() => signalProcess(pid, "SIGKILL"));
}

const line = (message: unknown) => `${JSON.stringify(message)}\n`;
const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

describe("stdio told to stop with a call in flight", () => {
  it("SIGTERM: the call is answered with an error, the proxy exits at once, its upstream is gone", async () => {
    const proxy = spawn(process.execPath, [CLI, "stdio", "--", process.execPath, FAULT_SERVER], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    cleanups.push(() => proxy.kill("SIGKILL"));
    let out = "";
    proxy.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    const answered = (id: number) =>
      out.split("\n").some((l) => l.includes(`"id":${id},`) || l.includes(`"id":${id}}`));
    const until = async (done: () => boolean) => {
      for (const deadline = Date.now() + 10_000; !done() && Date.now() < deadline; )
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(done()).toBe(true);
    };
    proxy.stdin.write(line(INIT));
    await until(() => answered(1));
    proxy.stdin.write(line({ jsonrpc: "2.0", method: "notifications/initialized" }));
    proxy.stdin.write(line({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "pid", arguments: {} } }));
    await until(() => answered(2));
    const pid = Number(JSON.parse(out.split("\n").find((l) => l.includes('"id":2'))!).result.content[0].text);
    killLater(pid);
    proxy.stdin.write(
      line({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "sleep", arguments: { ms: 30_000 } } }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exited = new Promise<number | null>((resolve) => proxy.once("exit", resolve));
    const signalled = performance.now();
    proxy.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(performance.now() - signalled).toBeLessThan(1_500);
    const third = JSON.parse(out.split("\n").find((l) => l.includes('"id":3'))!);
    expect(third.error.message).toBe("upstream connection ended (signal)");
    expect(await untilGone(pid, 2_000)).toBe(true);
  });

  it("an SDK host's close (stdin ended, SIGTERM after 2 s): done at the SIGTERM, nothing left running", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "stdio", "--", process.execPath, FAULT_SERVER],
      stderr: "pipe",
    });
    const client = new Client({ name: "t", version: "1" });
    await client.connect(transport, { timeout: 10_000 });
    const proxyPid = transport.pid!;
    killLater(proxyPid);
    const result = await client.callTool({ name: "pid", arguments: {} });
    const pid = Number((result.content as Array<{ text: string }>)[0]!.text);
    killLater(pid);
    void client.callTool({ name: "sleep", arguments: { ms: 30_000 } }).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closing = performance.now();
    await client.close();
    // The SDK waits 2 s after ending stdin, then sends SIGTERM; SIGKILL would follow 2 s after.
    expect(performance.now() - closing).toBeLessThan(3_500);
    expect(await untilGone(proxyPid, 1_000)).toBe(true);
    expect(await untilGone(pid, 2_000)).toBe(true);
  });

  it("an upstream that ignores SIGTERM is killed before a host's SIGKILL two seconds later could orphan it", async () => {
    const echo = join(ROOT, "test", "fixtures", "upstream-servers", "stdioEchoServer.mjs");
    const proxy = spawn(process.execPath, [CLI, "stdio", "--", process.execPath, echo, "--ignore-sigterm"], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    cleanups.push(() => proxy.kill("SIGKILL"));
    let out = "";
    proxy.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    proxy.stdin.write(line({ jsonrpc: "2.0", id: 1, method: "echo" }));
    for (const deadline = Date.now() + 10_000; !out.includes("\n") && Date.now() < deadline; )
      await new Promise((resolve) => setTimeout(resolve, 20));
    const [upstream] = childrenOf(proxy.pid!);
    expect(upstream).toBeDefined();
    killLater(upstream!);
    const exited = new Promise<number | null>((resolve) => proxy.once("exit", resolve));
    const signalled = performance.now();
    proxy.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(performance.now() - signalled).toBeLessThan(1_800);
    expect(await untilGone(upstream!, 200)).toBe(true);
  });
});

describe("stdio sent SIGHUP while it starts", () => {
  it("stays up (the upstream it spawned early is not orphaned), and SIGTERM then ends both", async () => {
    const dir = tempDir("mcpn-hup-");
    const pidFile = join(dir, "upstream.pid");
    // An upstream that says it has started, and ignores the end of its stdin (as some servers do).
    const upstream = `require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`;
    const proxy = spawn(process.execPath, [CLI, "stdio", "--", process.execPath, "-e", upstream], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    cleanups.push(() => proxy.kill("SIGKILL"));
    const exited = new Promise<number | null>((resolve) => proxy.once("exit", (code) => resolve(code)));
    // The upstream is spawned before the proxy has loaded the rest of itself: signal it then, and on.
    const pid = await readPidFile(pidFile);
    killLater(pid);
    for (let i = 0; i < 25 && proxy.exitCode === null; i++) {
      proxy.kill("SIGHUP");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(proxy.exitCode).toBeNull();
    proxy.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(await untilGone(pid, 3_000)).toBe(true);
  });
});
