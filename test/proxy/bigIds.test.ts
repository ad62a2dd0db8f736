/**
 * Ids past 2^53, as int64 hosts and servers write them: two that `JSON.parse` rounds to one
 * number are still two requests. Each host request gets its own answer, with its own id, and
 * each answer the host gives the upstream's own requests reaches the upstream — none refused as
 * a reused id, none dropped as an answer to nothing. The upstream (raw-upstream.mjs) writes
 * exactly the lines the test gives it; the host writes and reads the proxy's stdio as raw lines.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../helpers/paths.js";
import { RAW_UPSTREAM } from "../reliability/helpers.js";

const FIRST = "9007199254740992";
const SECOND = "9007199254740993"; // JSON.parse reads it as 9007199254740992 too

const proxy = spawn(process.execPath, [CLI, "stdio", "--", process.execPath, RAW_UPSTREAM], {
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
        return void reject(
          new Error(`no ${count} lines ${prefix}; stdout ${out.slice(-800)}; stderr ${stderr.slice(-800)}`),
        );
      setTimeout(look, 10);
    };
    look();
  });
}

/** The upstream writes `lines` (each a JSON text) when it gets this request; `final`: then answers it. */
function emitting(id: string, lines: string[], final = false): string {
  const emit = lines.map((line) => Buffer.from(`${line}\n`).toString("base64"));
  const params = { name: "any", arguments: {}, _emit: emit, _noFinal: !final };
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${JSON.stringify(params)}}\n`;
}

beforeAll(async () => {
  proxy.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: { roots: {} }, clientInfo: { name: "t", version: "1" } } })}\n`,
  );
  await linesStarting('{"jsonrpc":"2.0","id":1,');
  proxy.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
});

afterAll(async () => {
  proxy.stdin.end();
  if (proxy.exitCode === null) await new Promise((resolve) => proxy.once("exit", resolve));
});

describe("request ids past 2^53 that round to one number", () => {
  it("are two host requests, each answered under its own id", async () => {
    // The first waits; the second makes the upstream answer both, the second first.
    proxy.stdin.write(emitting(FIRST, []));
    proxy.stdin.write(
      emitting(SECOND, [
        `{"jsonrpc":"2.0","id":${SECOND},"result":{"content":[],"which":"second"}}`,
        `{"jsonrpc":"2.0","id":${FIRST},"result":{"content":[],"which":"first"}}`,
      ]),
    );
    const [second] = await linesStarting(`{"jsonrpc":"2.0","id":${SECOND},`);
    const [first] = await linesStarting(`{"jsonrpc":"2.0","id":${FIRST},`);
    expect(JSON.parse(second!).result.which).toBe("second");
    expect(JSON.parse(first!).result.which).toBe("first");
    expect(out).not.toContain("already used");
    expect(stderr).not.toContain("reused the id");
  });

  it("are two requests of the upstream, and both of the host's answers reach it", async () => {
    proxy.stdin.write(
      emitting(
        "10",
        [
          `{"jsonrpc":"2.0","id":${FIRST},"method":"roots/list"}`,
          `{"jsonrpc":"2.0","id":${SECOND},"method":"roots/list"}`,
        ],
        true,
      ),
    );
    await linesStarting(`{"jsonrpc":"2.0","id":${SECOND},"method":"roots/list"`);
    await linesStarting(`{"jsonrpc":"2.0","id":${FIRST},"method":"roots/list"`);
    proxy.stdin.write(`{"jsonrpc":"2.0","id":${FIRST},"result":{"roots":[{"uri":"file:///first"}]}}\n`);
    proxy.stdin.write(`{"jsonrpc":"2.0","id":${SECOND},"result":{"roots":[{"uri":"file:///second"}]}}\n`);
    proxy.stdin.write('{"jsonrpc":"2.0","id":11,"method":"_answers"}\n');
    const [answers] = await linesStarting('{"jsonrpc":"2.0","id":11,');
    const uris = (JSON.parse(answers!).result.answers as Array<{ result: { roots: Array<{ uri: string }> } }>).map(
      (answer) => answer.result.roots[0]!.uri,
    );
    expect(uris).toEqual(["file:///first", "file:///second"]);
    expect(stderr).not.toContain("did not send");
  });
});
