import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { NormalizerError } from "../../../src/errors/NormalizerError.js";
import { createStderrLogger } from "../../../src/observe/logger.js";
import { StdioUpstreamTransport, type StdioUpstreamOptions } from "../../../src/transports/upstream/stdioUpstream.js";
import { collect, INITIALIZE, INITIALIZED, processExists, type Collected } from "./collect.js";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";

const ECHO_SERVER = fileURLToPath(new URL("../../fixtures/upstream-servers/stdioEchoServer.mjs", import.meta.url));
const EVERYTHING = fileURLToPath(
  new URL("../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Started {
  transport: StdioUpstreamTransport;
  got: Collected;
  logLines: Array<Record<string, unknown>>;
}

async function startStdio(options: Partial<StdioUpstreamOptions> & { command?: string } = {}): Promise<Started> {
  const logLines: Array<Record<string, unknown>> = [];
  const logger = createStderrLogger("debug", {}, (line) => logLines.push(JSON.parse(line) as Record<string, unknown>));
  const transport = new StdioUpstreamTransport({
    command: process.execPath,
    args: [ECHO_SERVER],
    logger,
    maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    ...options,
  });
  const got = collect(transport);
  await transport.start();
  cleanups.push(() => transport.close());
  return { transport, got, logLines };
}

/** Linux: a zombie (exited, not yet reaped by a parent that is not ours) counts as gone. */
function running(pid: number): boolean {
  if (!processExists(pid)) return false;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe("StdioUpstreamTransport against @modelcontextprotocol/server-everything", () => {
  it("initializes, lists and calls tools, carries notifications both ways", async () => {
    const { transport, got } = await startStdio({ args: [EVERYTHING, "stdio"] });
    await transport.send(INITIALIZE(1));
    const init = await got.response(1);
    expect(init.result).toMatchObject({ serverInfo: { name: "mcp-servers/everything" } });
    await transport.send(INITIALIZED);
    // A server → client notification the server sends on its own.
    await got.next((m) => "method" in m && m.method === "notifications/tools/list_changed");
    await transport.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    const list = await got.response(2);
    expect((list.result as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain("echo");
    await transport.send({
      jsonrpc: "2.0",
      id: "call-3",
      method: "tools/call",
      params: { name: "echo", arguments: { message: "héllo 😀" } },
    });
    expect((await got.response("call-3")).result).toMatchObject({
      content: [{ type: "text", text: "Echo: héllo 😀" }],
    });
    expect(got.problems).toEqual([]);
  });
});

describe("StdioUpstreamTransport with fixture children", () => {
  it("sends client notifications and passes env (merged over process.env) and cwd", async () => {
    const cwd = fileURLToPath(new URL("../../fixtures/", import.meta.url));
    const { transport, got, logLines } = await startStdio({ env: { FIXTURE_SECRET: "s3cr3t-value" }, cwd });
    await transport.send({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
    await transport.send({ jsonrpc: "2.0", id: 1, method: "notifications" });
    expect((await got.response(1)).result).toEqual({ received: ["notifications/roots/list_changed"] });
    await transport.send({ jsonrpc: "2.0", id: 2, method: "env", params: { name: "FIXTURE_SECRET" } });
    expect((await got.response(2)).result).toEqual({ value: "s3cr3t-value" });
    await transport.send({ jsonrpc: "2.0", id: 3, method: "env", params: { name: "PATH" } });
    expect((await got.response(3)).result).toEqual({ value: process.env.PATH });
    await transport.send({ jsonrpc: "2.0", id: 4, method: "cwd" });
    expect((await got.response(4)).result).toEqual({ cwd: cwd.replace(/\/$/, "") });
    expect(JSON.stringify(logLines)).not.toContain("s3cr3t-value");
    expect(JSON.stringify(logLines)).toContain("FIXTURE_SECRET");
  });

  it("stderr past stderrLinesLogged: counted, told with the last line before its end, nothing logged after its end", async () => {
    // It closes its stdout (the transport ends it) and prints more as it goes (on SIGTERM).
    const script =
      'for (let n = 0; n < 10; n++) console.error("line " + n); require("node:fs").closeSync(1); ' +
      'process.on("SIGTERM", () => { for (let n = 0; n < 6; n++) console.error("term " + n); ' +
      "setTimeout(() => process.exit(0), 200); }); setInterval(() => {}, 1000);";
    const { transport, logLines } = await startStdio({ args: ["-e", script], stderrLinesLogged: 3 });
    const ended = new Promise<number>((resolve) => {
      transport.onclose = () => resolve(logLines.length);
    });
    const linesAtEnd = await Promise.race([
      ended,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("not ended within 10 s")), 10_000)),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const stderrLines = logLines.filter((l) => l.msg === "upstream stderr");
    expect(stderrLines.map((l) => [l.line, l.notLogged])).toEqual([
      ["line 0", undefined],
      ["line 1", undefined],
      ["line 2", undefined],
      ["line 9", 6],
    ]);
    expect(logLines.slice(linesAtEnd).filter((l) => l.msg === "upstream stderr")).toEqual([]);
  });

  it("reports a banner line on stdout as a problem, logs stderr, and the session goes on", async () => {
    const { transport, got, logLines } = await startStdio({ args: [ECHO_SERVER, "--banner"] });
    const problem = await got.nextProblem();
    expect(problem).toMatchObject({
      kind: "invalid-json",
      excerpt: "Fixture server v1 starting (this line is not JSON)",
    });
    await transport.send({ jsonrpc: "2.0", id: 1, method: "echo", params: { x: 1 } });
    expect((await got.response(1)).result).toEqual({ params: { x: 1 } });
    // stderr is another pipe: its line may come after the answer on a busy machine.
    const logged = (): boolean =>
      logLines.some((l) => l.msg === "upstream stderr" && l.line === "fixture: banner printed");
    for (const deadline = Date.now() + 5000; !logged() && Date.now() < deadline; )
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(logged()).toBe(true);
  });

  it("moves 50 MiB each way with backpressure", async () => {
    const { transport, got } = await startStdio();
    const size = 50 * 1024 * 1024;
    const started = performance.now();
    await transport.send({ jsonrpc: "2.0", id: "up", method: "measure", params: { blob: "b".repeat(size) } });
    expect((await got.response("up", 30_000)).result).toEqual({ length: size, head: "bbbbbbbb" });
    const upMs = performance.now() - started;
    const downStarted = performance.now();
    await transport.send({ jsonrpc: "2.0", id: "down", method: "big", params: { bytes: size } });
    const big = await got.response("down", 30_000);
    expect((big.result as { text: string }).text.length).toBe(size);
    console.log(
      `stdio upstream: 50 MiB request ${upMs.toFixed(0)} ms, 50 MiB response ${(performance.now() - downStarted).toFixed(0)} ms`,
    );
    got.messages.length = 0;
  });

  it("send: a message JSON cannot write rejects (never throws) and the session goes on", async () => {
    const { transport, got } = await startStdio();
    let sending: Promise<void> | undefined;
    expect(
      () => (sending = transport.send({ jsonrpc: "2.0", id: 1, method: "echo", params: { n: 1n } } as never)),
    ).not.toThrow();
    await expect(sending).rejects.toThrow(TypeError);
    await transport.send({ jsonrpc: "2.0", id: 2, method: "notifications" });
    expect((await got.response(2)).result).toEqual({ received: [] });
  });

  it("a child that exits: UPSTREAM_EXITED error with code and last stderr line, then onclose", async () => {
    const { transport, got } = await startStdio();
    const pid = transport.pid as number;
    await transport.send({ jsonrpc: "2.0", id: 1, method: "exit", params: { code: 3 } });
    const error = await got.nextError();
    await got.closed;
    expect(error).toBeInstanceOf(NormalizerError);
    expect((error as NormalizerError).code).toBe("UPSTREAM_EXITED");
    expect(error.message).toContain("exited with code 3");
    expect(error.message).toContain("fatal: exiting with 3 on request");
    expect(transport.exitInfo).toMatchObject({
      code: 3,
      signal: null,
      expected: false,
      lastStderrLine: "fatal: exiting with 3 on request",
    });
    expect(processExists(pid)).toBe(false);
    await expect(transport.send({ jsonrpc: "2.0", id: 2, method: "echo" })).rejects.toMatchObject({
      code: "UPSTREAM_EXITED",
    });
  });

  it("a line without end: reported by its start (its id) once maxSkippedMessageBytes past the limit, and the child ended saying why", async () => {
    const script =
      'process.stdin.once("data", () => { process.stdout.write(\'{"jsonrpc":"2.0","id":7,"result":{"x":"\'); ' +
      'const fill = "A".repeat(1 << 20); const go = () => { while (process.stdout.write(fill)) {} ' +
      'process.stdout.once("drain", go); }; go(); });';
    const { transport, got } = await startStdio({
      args: ["-e", script],
      maxMessageBytes: 1024 * 1024,
      maxSkippedMessageBytes: 4 * 1024 * 1024,
    });
    const pid = transport.pid as number;
    await transport.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "flood" } });
    expect(await got.nextProblem(20_000)).toMatchObject({ kind: "too-large", id: 7, unended: true });
    const error = await got.nextError(10_000);
    const bytes = Number((error.message.match(/for (\d+) bytes/) ?? [])[1]);
    expect(error.message).toBe(
      `upstream "${process.execPath}" wrote a line that ran on for ${bytes} bytes without end ` +
        "(limits.maxMessageBytes is 1048576, limits.maxSkippedMessageBytes 4194304; the proxy ended it)",
    );
    // Cut once past both, not dropped on to a fixed slack: at most a pipe read or two later.
    expect(bytes).toBeGreaterThan(5 * 1024 * 1024);
    expect(bytes).toBeLessThan(8 * 1024 * 1024);
    await got.closed;
    await expect.poll(() => running(pid), { timeout: 10_000 }).toBe(false);
    expect(transport.describeEnd()).toMatch(/wrote a line that ran on for \d+ bytes without end/);
  }, 30_000);

  it("close() ends the child and what it spawned; no process is left", async () => {
    const { transport, got } = await startStdio();
    const pid = transport.pid as number;
    await transport.send({ jsonrpc: "2.0", id: 1, method: "grandchild" });
    const grandchild = ((await got.response(1)).result as { pid: number }).pid;
    expect(running(pid) && running(grandchild)).toBe(true);
    await transport.close();
    expect(got.isClosed()).toBe(true);
    expect(got.errors).toEqual([]);
    expect(transport.exitInfo?.expected).toBe(true);
    expect(processExists(pid)).toBe(false);
    // The grandchild is not ours to reap: wait (bounded) until it is gone or a zombie.
    const deadline = Date.now() + 5000;
    while (running(grandchild) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(running(grandchild)).toBe(false);
  });

  it("close() escalates to SIGKILL after killGraceMs for a child that ignores SIGTERM", async () => {
    const { transport, got } = await startStdio({ args: [ECHO_SERVER, "--ignore-sigterm"], killGraceMs: 200 });
    const pid = transport.pid as number;
    await transport.send({ jsonrpc: "2.0", id: 1, method: "echo" });
    await got.response(1); // the SIGTERM handler is installed
    const started = performance.now();
    await transport.close();
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    expect(transport.exitInfo).toMatchObject({ signal: "SIGKILL", expected: true });
    expect(processExists(pid)).toBe(false);
  });

  it("start() rejects with a clear error for a command that does not exist", async () => {
    const transport = new StdioUpstreamTransport({
      command: "definitely-not-a-command-mcpn",
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    await expect(transport.start()).rejects.toThrow(
      /could not start upstream command "definitely-not-a-command-mcpn": .*ENOENT/,
    );
    await transport.close();
  });

  it("does not use a shell: metacharacters reach the child as plain arguments", async () => {
    const { transport, got } = await startStdio({ args: [ECHO_SERVER, "; echo injected >&2", "$(id)"] });
    await transport.send({ jsonrpc: "2.0", id: 1, method: "echo" });
    await got.response(1);
    expect(got.problems).toEqual([]);
  });
});

describe("a stdio upstream whose cwd cannot be its folder", () => {
  it.each([
    ["does not exist", "/no/such/folder/mcpn"],
    ["is not a folder", fileURLToPath(import.meta.url)],
    ["cannot be used (a file is on its path)", `${fileURLToPath(import.meta.url)}/sub`],
  ])("a cwd that %s is named as such, not as a command not found", async (what, cwd) => {
    const transport = new StdioUpstreamTransport({
      command: process.execPath,
      args: [ECHO_SERVER],
      cwd,
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    const error = await transport.start().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(NormalizerError);
    expect(error!.message).toBe(`could not start upstream command "${process.execPath}": its cwd "${cwd}" ${what}`);
  });
});
