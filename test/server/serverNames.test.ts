/**
 * Server names as desktop hosts allow them ("Brave Search", "my.server", unicode) are served at
 * their percent-encoded path, and `serve` prints exactly those URLs; with one server the bare
 * paths serve it too.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CLI, FIXTURE_SERVER } from "../helpers/paths.js";
import { connect, raw } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";

interface Served {
  stdout: string;
  stop(): Promise<void>;
}

/** `serve --config FILE --port 0`, until its health line (the last of what it prints) is out. */
async function serveConfig(servers: Record<string, unknown>): Promise<Served> {
  const file = join(tempDir("mcpn-names-"), "proxy.config.json");
  writeFileSync(file, JSON.stringify({ mcpServers: servers }));
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--config", file], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start; stderr: ${stderr}`)), 20_000);
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
      if (/ health: /.test(stdout)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return {
    stdout,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

const fixture = { command: process.execPath, args: [FIXTURE_SERVER] };

function transportFor(url: string): Transport {
  if (url.startsWith("ws")) return new WebSocketClientTransport(new URL(url));
  if (/\/sse(\/|$)/.test(new URL(url).pathname)) return new SSEClientTransport(new URL(url));
  return new StreamableHTTPClientTransport(new URL(url));
}

async function toolNames(url: string): Promise<string[]> {
  const host = await connect(transportFor(url));
  try {
    const result = await raw(host.client, "tools/list", {}, { timeout: 15_000 });
    return (result.tools as Array<{ name: string }>).map((t) => t.name);
  } finally {
    await host.close();
  }
}

describe("server names with spaces, dots and unicode", () => {
  const names = ["Brave Search", "my.server", "café ☕"];
  let served: Served;
  beforeAll(async () => {
    served = await serveConfig(Object.fromEntries(names.map((name) => [name, fixture])));
  });
  afterAll(async () => {
    await served?.stop();
  });

  it("prints each server's exact, percent-encoded URLs, and every one of them answers", async () => {
    const base = /listening on (http:\/\/\S+)/.exec(served.stdout)![1]!;
    const ws = base.replace(/^http/, "ws");
    for (const name of names) {
      const segment = encodeURIComponent(name);
      const line = served.stdout.split("\n").find((l) => l.startsWith(`  ${name}: `));
      expect(line, served.stdout).toBe(
        `  ${name}: ${base}/mcp/${segment}  (SSE ${base}/sse/${segment}, WebSocket ${ws}/ws/${segment})`,
      );
    }
    expect(served.stdout).toContain(`${base}/mcp/Brave%20Search`);
    expect(served.stdout).toContain(`${base}/mcp/caf%C3%A9%20%E2%98%95`);
    // With several servers there is no bare path.
    expect(served.stdout).not.toContain("the one server");
    for (const name of names) {
      const segment = encodeURIComponent(name);
      for (const url of [`${base}/mcp/${segment}`, `${base}/sse/${segment}`, `${ws}/ws/${segment}`]) {
        expect(await toolNames(url), url).toContain("echo");
      }
    }
    const bare = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{}",
    });
    expect(bare.status).toBe(404);
  });
});

describe("one server", () => {
  let served: Served;
  beforeAll(async () => {
    served = await serveConfig({ "only one": fixture });
  });
  afterAll(async () => {
    await served?.stop();
  });

  it("is served at /mcp, /sse and /ws too, and start-up says so", async () => {
    const base = /listening on (http:\/\/\S+)/.exec(served.stdout)![1]!;
    const ws = base.replace(/^http/, "ws");
    expect(served.stdout).toContain(`  the one server also at: ${base}/mcp  (SSE ${base}/sse, WebSocket ${ws}/ws)`);
    for (const url of [`${base}/mcp`, `${base}/sse`, `${ws}/ws`, `${base}/mcp/only%20one`]) {
      expect(await toolNames(url), url).toContain("echo");
    }
  });
});

describe("names that cannot be one", () => {
  it("are refused with the JSON path and the reason (exit 3)", async () => {
    const { runCli } = await import("../helpers/runCli.js");
    const dir = tempDir("mcpn-names-");
    for (const [name, why] of [
      ["", "cannot be empty"],
      ["a/b", "cannot contain '/'"],
      ["..", 'cannot be ".."'],
    ] as const) {
      const file = join(dir, "bad.json");
      writeFileSync(file, JSON.stringify({ mcpServers: { [name]: fixture } }));
      const run = await runCli(["serve", "--port", "0", "--config", file]);
      expect(run.code).toBe(3);
      expect(run.stderr).toContain(`$.mcpServers[${JSON.stringify(name)}]: a server name ${why}`);
      expect(run.stderr.trim().split("\n").length).toBeLessThanOrEqual(2);
    }
  });
});
