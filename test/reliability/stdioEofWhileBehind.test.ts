/**
 * A stdio host that has stopped reading the proxy's stdout while its upstream floods it, and then
 * closes stdin (how MCP's stdio shutdown begins): the proxy still sees the end of its input and
 * exits on its own. The upstream's flood is held back by holding the upstream alone; the host was
 * held too, and a paused stdin never reports its end.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FLOOD_SERVER } from "../helpers/flood.js";
import { CLI } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempDir.js";

const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "stalled-host", version: "1" } };
const line = (message: object): string => `${JSON.stringify(message)}\n`;

describe("stdio: the host closes stdin while it reads nothing of a flood", () => {
  it("the proxy sees the end of its input and exits, its upstream with it", async () => {
    const dir = tempDir("mcpn-eof-behind-");
    const config = join(dir, "proxy.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { fl: { command: process.execPath, args: [FLOOD_SERVER] } },
        limits: { requestTimeoutMs: 2000, shutdownGraceMs: 1000 },
      }),
    );
    const proxy = spawn(process.execPath, [CLI, "stdio", "--config", config, "--server", "fl"], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => proxy.once("exit", (code) => resolve(code)));
    let stderr = "";
    proxy.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    // Reads the initialize answer, then nothing more.
    const initialized = new Promise<void>((resolve) => proxy.stdout.once("data", () => resolve()));
    proxy.stdin.write(line({ jsonrpc: "2.0", id: 0, method: "initialize", params: INIT }));
    await initialized;
    proxy.stdout.pause();
    proxy.stdin.write(line({ jsonrpc: "2.0", method: "notifications/initialized" }));
    const flood = { name: "flood", arguments: { count: 50_000, padBytes: 400 } };
    proxy.stdin.write(line({ jsonrpc: "2.0", id: 1, method: "tools/call", params: flood }));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const ended = Date.now();
    proxy.stdin.end();
    const timeout = setTimeout(() => proxy.kill("SIGKILL"), 20_000);
    const code = await exited;
    clearTimeout(timeout);
    expect(code, `stderr: ${stderr.slice(-800)}`).toBe(0);
    expect(Date.now() - ended).toBeLessThan(15_000);
  });
});
