/**
 * `mcpServers` blocks as desktop hosts and editors write them, pasted into the proxy's config
 * unchanged: Claude Desktop's `npx -y package` entries, `"type": "stdio" | "http" | "sse"`
 * entries (Cursor, Claude Code), Cline's extra keys (`autoApprove`, `timeout`,
 * `transportType`, `disabled`), and names with spaces, dots and unicode. Every enabled server
 * answers at the URL `serve` prints for it, and `stdio --config FILE --server NAME` finds it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CLI, EVERYTHING_SERVER, FILESYSTEM_SERVER, ROOT } from "../helpers/paths.js";
import { connect, raw, startServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";
import { startSseFixture, type Fixture } from "../fixtures/upstream-servers/httpFixtures.js";
import { startAskingServer, type AskingServer } from "../fixtures/upstream-servers/askingServer.js";

const dir = tempDir("mcpn-pasted-");

async function tools(transport: Transport): Promise<string[]> {
  const host = await connect(transport);
  try {
    const result = await raw(host.client, "tools/list", {}, { timeout: 30_000 });
    return (result.tools as Array<{ name: string }>).map((t) => t.name);
  } finally {
    await host.close();
  }
}

describe("a pasted mcpServers block from several hosts", () => {
  let http: AskingServer;
  let sse: Fixture;
  let serve: ServeProcess;
  let file: string;
  let servers: Record<string, unknown>;

  beforeAll(async () => {
    http = await startAskingServer();
    sse = await startSseFixture();
    servers = {
      // Claude Desktop: npx runs the package (from this project's node_modules; offline, so a
      // test that passes has used no network).
      "Knowledge Graph": {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-memory"],
        env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl"), npm_config_offline: "true" },
      },
      // Cursor / Claude Code.
      "files.local": { type: "stdio", command: process.execPath, args: [FILESYSTEM_SERVER, dir] },
      "remote http": { type: "http", url: http.url },
      "remote sse": { type: "sse", url: sse.url },
      // Cline.
      "Ünïcode ✓": {
        command: process.execPath,
        args: [EVERYTHING_SERVER, "stdio"],
        disabled: false,
        autoApprove: ["echo"],
        timeout: 60,
        transportType: "stdio",
      },
      "switched off": { command: "does-not-exist", disabled: true },
    };
    file = join(dir, "mcp.json");
    writeFileSync(file, JSON.stringify({ mcpServers: servers }, null, 2));
    serve = await startServe(["--config", file], { npm_config_offline: "true" });
  }, 60_000);

  afterAll(async () => {
    await serve?.stop();
    await http?.close();
    await sse?.close();
  });

  it("serve: every enabled server answers at the URLs it printed; the disabled one is not served", async () => {
    const printed = new Map<string, string>();
    const out = await printedLines(serve);
    for (const line of out) {
      const match = /^ {2}(.+): (http:\/\/\S+\/mcp\/\S+) {2}\(SSE (\S+), WebSocket (\S+)\)$/.exec(line);
      if (match) printed.set(match[1]!, line);
    }
    expect([...printed.keys()].sort()).toEqual(
      ["Knowledge Graph", "files.local", "remote http", "remote sse", "Ünïcode ✓"].sort(),
    );
    const expected: Record<string, string> = {
      "Knowledge Graph": "read_graph",
      "files.local": "list_directory",
      "remote http": "ask-roots",
      "remote sse": "echo",
      "Ünïcode ✓": "get-sum",
    };
    for (const [name, line] of printed) {
      const [, mcp, sseUrl, ws] = /(http:\/\/\S+\/mcp\/\S+) {2}\(SSE (\S+), WebSocket (\S+)\)/.exec(line)!;
      expect(mcp).toBe(`${serve.url}/mcp/${encodeURIComponent(name)}`);
      expect(await tools(new StreamableHTTPClientTransport(new URL(mcp!))), `${name} over /mcp`).toContain(
        expected[name],
      );
      expect(await tools(new SSEClientTransport(new URL(sseUrl!))), `${name} over /sse`).toContain(expected[name]);
      expect(await tools(new WebSocketClientTransport(new URL(ws!))), `${name} over /ws`).toContain(expected[name]);
    }
    const off = await fetch(`${serve.url}/mcp/switched%20off`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{}",
    });
    expect(off.status).toBe(404);
  });

  it("stdio --config FILE --server NAME finds each of them by its name as written", async () => {
    for (const [name, tool] of [
      ["Knowledge Graph", "create_entities"],
      ["Ünïcode ✓", "echo"],
      ["remote http", "ask-elicitation"],
    ] as const) {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "stdio", "--config", file, "--server", name],
        cwd: ROOT,
        env: { ...process.env, npm_config_offline: "true" } as Record<string, string>,
        stderr: "pipe",
      });
      expect(await tools(transport), name).toContain(tool);
    }
  });
});

/** What `serve` printed on stdout at start-up: its endpoint lines, up to the health line. */
async function printedLines(serve: ServeProcess): Promise<string[]> {
  const deadline = Date.now() + 5_000;
  while (!serve.stdout().includes(" health: ")) {
    if (Date.now() > deadline) throw new Error(`no endpoint lines; stdout: ${serve.stdout()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return serve.stdout().split("\n");
}
