/**
 * An answer the proxy builds itself for a host request — a timeout, a refusal — carries the id
 * as the host wrote it, also an integer past 2^53 (an int64 host's): not the number `JSON.parse`
 * rounded it to, which names another request or none and leaves the host's own waiting. The
 * cancel the upstream gets on a timeout names the id as the proxy sent it. The upstream
 * (raw-upstream.mjs) answers only what the test asks; the host writes and reads raw lines. So does
 * the error a streamable HTTP upstream's transport puts in place of an answer its server failed.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listen, readBody } from "../fixtures/upstream-servers/httpFixtures.js";
import { CLI } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempDir.js";
import { RAW_UPSTREAM } from "../reliability/helpers.js";

const FIRST = "9007199254740992";
const SECOND = "9007199254740993"; // JSON.parse reads it as 9007199254740992 too
const THIRD = "12345678901234567891";

const dir = tempDir("mcpn-bigids-");
const config = join(dir, "proxy.config.json");
writeFileSync(
  config,
  JSON.stringify({
    mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } },
    limits: { requestTimeoutMs: 600 },
  }),
);
const proxy = spawn(process.execPath, [CLI, "stdio", "--config", config, "--server", "raw"], {
  stdio: ["pipe", "pipe", "pipe"],
});
let out = "";
let stderr = "";
proxy.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
proxy.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));

/** The complete lines the proxy wrote that start with `prefix`, once there are `count` of them. */
function linesStarting(prefix: string, count = 1, timeoutMs = 10_000): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const look = (): void => {
      const lines = out
        .split("\n")
        .slice(0, -1)
        .filter((line) => line.startsWith(prefix));
      if (lines.length >= count) return void resolve(lines);
      if (Date.now() - started > timeoutMs || proxy.exitCode !== null)
        return void reject(new Error(`no line ${prefix}; stdout ${out.slice(-800)}; stderr ${stderr.slice(-800)}`));
      setTimeout(look, 10);
    };
    look();
  });
}

/** A request the upstream never answers (raw-upstream's `_noFinal`). */
const unanswered = (id: string): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"any","arguments":{},"_noFinal":true}}\n`;

beforeAll(async () => {
  proxy.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
  );
  await linesStarting('{"jsonrpc":"2.0","id":1,');
  proxy.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
});

afterAll(async () => {
  proxy.stdin.end();
  if (proxy.exitCode === null) await new Promise((resolve) => proxy.once("exit", resolve));
});

describe("answers the proxy builds for ids past 2^53", () => {
  it("a timeout carries the id as the host wrote it", async () => {
    proxy.stdin.write(unanswered(THIRD));
    const [timedOut] = await linesStarting(`{"jsonrpc":"2.0","id":${THIRD},`);
    expect(timedOut).toContain('"code":-32002');
  });

  it("a request refused while one whose id rounds to the same number waits carries its own id", async () => {
    proxy.stdin.write(unanswered(FIRST));
    proxy.stdin.write(unanswered(SECOND));
    const [refused] = await linesStarting(`{"jsonrpc":"2.0","id":${SECOND},`);
    expect(refused).toContain(`id ${SECOND} is already used by a request still waiting`);
    // The first is still the one waiting: its own timeout comes under its own id.
    const [first] = await linesStarting(`{"jsonrpc":"2.0","id":${FIRST},`);
    expect(first).toContain('"code":-32002');
  });

  it("a request refused as not JSON-RPC 2.0 carries its id as written", async () => {
    const id = "9007199254740995"; // JSON.parse reads 9007199254740996
    proxy.stdin.write(`{"jsonrpc":"1.0","id":${id},"method":"tools/list"}\n`);
    const [refused] = await linesStarting(`{"jsonrpc":"2.0","id":${id},`);
    expect(refused).toContain('"jsonrpc\\" must be \\"2.0\\"');
  });
});

describe("an answer a streamable HTTP upstream's transport builds for an id past 2^53", () => {
  it("an HTTP error in place of the answer carries the id as the host wrote it", async () => {
    const upstream = await listen(async (req, res) => {
      if (req.method !== "POST") return void res.writeHead(405).end();
      const body = (await readBody(req)) as { id?: number; method?: string };
      if (body.id === undefined) return void res.writeHead(202).end();
      if (body.method !== "initialize") return void res.writeHead(500).end("down for a moment");
      const result = {
        protocolVersion: "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "h", version: "1" },
      };
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: body.id, result }));
    }, "/mcp");
    const host = spawn(process.execPath, [CLI, "stdio", "--url", upstream.url], { stdio: ["pipe", "pipe", "pipe"] });
    let lines = "";
    host.stdout.setEncoding("utf8").on("data", (chunk: string) => (lines += chunk));
    const line = async (prefix: string): Promise<string> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const found = lines.split("\n").find((l) => l.startsWith(prefix));
        if (found !== undefined) return found;
        if (Date.now() > deadline || host.exitCode !== null) throw new Error(`no line ${prefix}; stdout ${lines}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    try {
      const params = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };
      host.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params })}\n`);
      await line('{"jsonrpc":"2.0","id":1,');
      host.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
      host.stdin.write(
        `{"jsonrpc":"2.0","id":${THIRD},"method":"tools/call","params":{"name":"any","arguments":{}}}\n`,
      );
      const failed = await line(`{"jsonrpc":"2.0","id":${THIRD},`);
      expect(failed).toContain("HTTP 500");
    } finally {
      host.stdin.end();
      if (host.exitCode === null) await new Promise((resolve) => host.once("exit", resolve));
      await upstream.close();
    }
  });
});
