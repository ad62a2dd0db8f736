/**
 * `stdio` in front of a server that ends as it starts (a missing API key, a wrong path): the
 * host's `initialize` — still unread when the upstream went — is answered with why, and the
 * proxy exits 1. The early start (`stdio -- CMD`) used to leave the host with no answer and the
 * process exiting 13 (its last promise never settled) whenever the child was gone before the
 * session had started. A Node crash is quoted by its error line, not by the `Node.js v20…`
 * banner it ends with.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI } from "../helpers/paths.js";
import { INITIALIZE_PARAMS, startRawStdio } from "../helpers/rawStdio.js";
import { tempDir } from "../helpers/tempDir.js";

const dir = tempDir("mcpn-gone-");
const CRASH = join(dir, "crash.js");
writeFileSync(CRASH, 'throw new Error("MY_API_KEY is not set");\n');

async function firstAnswer(args: readonly string[]): Promise<{ answer: Record<string, unknown>; code: number | null }> {
  const proxy = startRawStdio(process.execPath, [CLI, "stdio", ...args]);
  const answer = await proxy.request(1, "initialize", INITIALIZE_PARAMS, 10_000);
  return { answer, code: await proxy.close(10_000) };
}

describe("stdio: an upstream that ends as it starts", () => {
  const cases: Array<[string, string[], RegExp]> = [
    ["-- false (early start)", ["--", "false"], /exited with code 1/],
    ["-- true (early start)", ["--", "true"], /exited with code 0/],
    ["-- node -e 0 (early start)", ["--", process.execPath, "-e", "0"], /exited with code 0/],
    ["--command false", ["--command", "false"], /exited with code 1/],
  ];
  for (const [name, args, reason] of cases) {
    it(`${name}: initialize is answered with -32001 and the reason, three times out of three; exit 1`, async () => {
      for (let run = 0; run < 3; run++) {
        const { answer, code } = await firstAnswer(args);
        expect(answer).toMatchObject({ id: 1, error: { code: -32001 } });
        expect((answer.error as { message: string }).message).toMatch(reason);
        expect(code).toBe(1);
      }
    });
  }

  it("--url of a server nobody listens on: initialize is answered with -32001 and why; exit 1", async () => {
    // A port that was just free: nothing listens there.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const { answer, code } = await firstAnswer(["--url", `http://127.0.0.1:${port}/mcp`]);
    expect(answer).toMatchObject({ id: 1, error: { code: -32001 } });
    expect((answer.error as { message: string }).message).toMatch(/cannot reach upstream .*ECONNREFUSED/);
    expect(code).toBe(1);
  });

  it("a Node server that crashes is quoted by its error line, not the Node.js banner after its stack", async () => {
    const { answer, code } = await firstAnswer(["--", process.execPath, CRASH]);
    const message = (answer.error as { message: string }).message;
    expect(message).toContain('error on stderr: "Error: MY_API_KEY is not set"');
    expect(message).not.toContain("Node.js v");
    expect(code).toBe(1);
  });
});

describe("stdio: while it answers a host whose upstream ended as it started", () => {
  /** `stdio --config` for a server running `script` with node, waiting for the host at most a minute. */
  function proxyFor(script: string) {
    const config = join(dir, `gone-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { gone: { command: process.execPath, args: ["-e", script] } },
        limits: { closeTimeoutMs: 60_000 },
      }),
    );
    const child = spawn(process.execPath, [CLI, "stdio", "--config", config, "--server", "gone"], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return { child, exited, out: () => out };
  }
  const INIT = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE_PARAMS });
  const within = <T>(promise: Promise<T>, ms: number): Promise<T | "late"> =>
    Promise.race([promise, new Promise<"late">((resolve) => setTimeout(() => resolve("late"), ms))]);

  it("an initialize split around the upstream's end is still answered (the part read first is kept)", async () => {
    const proxy = proxyFor("setTimeout(() => process.exit(3), 400)");
    proxy.child.stdin.write(INIT.slice(0, 30));
    await new Promise((resolve) => setTimeout(resolve, 900));
    proxy.child.stdin.end(`${INIT.slice(30)}\n`);
    expect(await within(proxy.exited, 10_000)).toBe(1);
    expect(JSON.parse(proxy.out())).toMatchObject({ id: 1, error: { code: -32001 } });
  });

  it("a signal ends the wait at once", async () => {
    const proxy = proxyFor("process.exit(3)");
    await new Promise((resolve) => setTimeout(resolve, 600));
    proxy.child.kill("SIGTERM");
    expect(await within(proxy.exited, 5_000)).not.toBe("late");
  });

  it("a host that sent initialize and ended its input: answered, and no wait for more input", async () => {
    const proxy = proxyFor("setTimeout(() => process.exit(3), 300)");
    proxy.child.stdin.end(`${INIT}\n`);
    expect(await within(proxy.exited, 5_000)).toBe(1);
    expect(JSON.parse(proxy.out())).toMatchObject({ id: 1, error: { code: -32001 } });
  });
});
