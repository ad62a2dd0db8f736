/**
 * `mcp-normalizer stdio` as a desktop host runs it: a real child process, raw pipes. Stdout
 * carries JSON-RPC only, even when the upstream prints junk on its stdout.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { CLI, FIXTURE_SERVER } from "../helpers/paths.js";
import { runCli } from "../helpers/runCli.js";

function startStdio(args: readonly string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [CLI, "stdio", ...args], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiters: Array<{ id: number; resolve: (m: Record<string, unknown>) => void }> = [];
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(line);
    const msg = JSON.parse(line) as Record<string, unknown>;
    const i = waiters.findIndex((w) => w.id === msg.id);
    if (i !== -1) waiters.splice(i, 1)[0]!.resolve(msg);
  });
  const request = (id: number, method: string, params: unknown = {}) =>
    new Promise<Record<string, unknown>>((resolve) => {
      waiters.push({ id, resolve });
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, lines, request, exited, stderr: () => stderr };
}

const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-host", version: "1" } };

describe("mcp-normalizer stdio", () => {
  it("stdout carries JSON-RPC only, though the upstream prints a banner on its stdout", async () => {
    const proxy = startStdio(["--", process.execPath, FIXTURE_SERVER], { FIXTURE_BANNER: "1" });
    const init = await proxy.request(1, "initialize", INIT);
    expect((init.result as { serverInfo: { name: string } }).serverInfo.name).toBe("mcpn-fixture");
    proxy.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    const read = await proxy.request(2, "resources/read", { uri: "fixture://own/blob/1" });
    expect(read.result).toEqual({
      contents: [{ uri: "fixture://own/blob/1", mimeType: "text/plain", text: "Resource 1: This is a base64 blob" }],
    });
    proxy.child.stdin.end();
    expect(await proxy.exited).toBe(0);
    for (const line of proxy.lines) expect(JSON.parse(line)).toHaveProperty("jsonrpc", "2.0");
    expect(proxy.stderr()).toContain("not JSON");
  });

  it("ends its upstream child when the host closes stdin", async () => {
    const proxy = startStdio(["--", process.execPath, FIXTURE_SERVER]);
    await proxy.request(1, "initialize", INIT);
    proxy.child.stdin.end();
    expect(await proxy.exited).toBe(0);
  });

  it("answers pending requests with an error naming the cause when the upstream crashes, then exits 1", async () => {
    const proxy = startStdio(["--", process.execPath, FIXTURE_SERVER]);
    await proxy.request(1, "initialize", INIT);
    const crashed = await proxy.request(2, "tools/call", { name: "crash", arguments: {} });
    expect(crashed.error).toMatchObject({ code: -32001 });
    expect(String((crashed.error as { message: string }).message)).toMatch(/upstream/);
    expect(await proxy.exited).toBe(1);
  });

  it("--help goes to stderr (stdout is the host's), exit 0", async () => {
    const run = await runCli(["stdio", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("Usage: mcp-normalizer stdio");
  });

  it("no upstream named: exit 2 with a usage message", async () => {
    const run = await runCli(["stdio"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("name exactly one upstream");
  });

  it("an upstream command that does not exist: exit 1 naming it", async () => {
    const run = await runCli(["stdio", "--", "/nonexistent/mcp-server-binary"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("/nonexistent/mcp-server-binary");
  });
});
