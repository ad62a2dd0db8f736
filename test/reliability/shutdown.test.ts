/**
 * SIGTERM/SIGINT: stop accepting, let in-flight requests finish up to
 * `limits.shutdownGraceMs`, end children, flush the log, exit 0 — for `serve` and `stdio`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI } from "../helpers/paths.js";
import { startRawStdio, INITIALIZE_PARAMS } from "../helpers/rawStdio.js";
import { FAULT_SERVER, initializedWs, serveConfig, toolText, untilGone, waitForStderr } from "./helpers.js";

function exitOf(child: import("node:child_process").ChildProcess): Promise<{ code: number | null; at: number }> {
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, at: Date.now() })));
}

describe("serve on SIGTERM/SIGINT", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal}: the request in flight finishes, new work is refused, children end, the log is flushed, exit 0`, async () => {
      const serve = await serveConfig({
        mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
        log: { file: "normalizer.jsonl" },
        limits: { shutdownGraceMs: 10_000 },
      });
      const host = await initializedWs(serve.url, "fx");
      const pid = Number(toolText(await host.request(1, "tools/call", { name: "pid" })));
      // A record for the normalization log, written just before the signal.
      const read = await host.request(2, "resources/read", { uri: "fault://blob.txt" });
      expect(read.result).toMatchObject({ contents: [{ text: "plain text in base64" }] });
      const sleeping = host.request(3, "tools/call", { name: "sleep", arguments: { ms: 700 } });
      await waitForStderr(serve, /fault: sleeping/);
      const exited = exitOf(serve.child);
      serve.child.kill(signal);
      await waitForStderr(serve, /shutting down/);

      // In flight: answered in full. New on the same session: refused with the reason.
      const refused = await host.request(4, "tools/call", { name: "pid" });
      expect((refused.error as { message: string }).message).toContain("shutting down");
      expect(toolText(await sleeping)).toBe("slept");
      // Not accepting: a new connection is refused.
      await expect(fetch(`${serve.url}/healthz`)).rejects.toThrow();

      expect((await exited).code).toBe(0);
      expect(await untilGone(pid)).toBe(true);
      const log = readFileSync(join(serve.dir, "normalizer.jsonl"), "utf8");
      expect(log).toContain('"action":"unwrap-blob"');
      expect(log).toContain("fault://blob.txt");
    });
  }

  it("past the grace period the request in flight gets an error and the proxy exits 0 promptly", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { shutdownGraceMs: 300 },
    });
    const host = await initializedWs(serve.url, "fx");
    const pid = Number(toolText(await host.request(1, "tools/call", { name: "pid" })));
    const sleeping = host.request(2, "tools/call", { name: "sleep", arguments: { ms: 60_000 } });
    await waitForStderr(serve, /fault: sleeping/);
    const exited = exitOf(serve.child);
    const sent = Date.now();
    serve.child.kill("SIGTERM");
    const answer = await sleeping;
    expect((answer.error as { message: string }).message).toContain("proxy shutting down");
    const { code, at } = await exited;
    expect(code).toBe(0);
    expect(at - sent).toBeLessThan(3000);
    expect(await untilGone(pid)).toBe(true);
  });

  it("a SIGHUP while it shuts down reopens the log but does not re-read the config for sessions that will not come", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { shutdownGraceMs: 10_000 },
    });
    const host = await initializedWs(serve.url, "fx");
    const sleeping = host.request(1, "tools/call", { name: "sleep", arguments: { ms: 1500 } });
    await waitForStderr(serve, /fault: sleeping/);
    const exited = exitOf(serve.child);
    serve.child.kill("SIGTERM");
    await waitForStderr(serve, /shutting down/);
    serve.child.kill("SIGHUP");
    await waitForStderr(serve, /SIGHUP: log reopened; the config is not re-read while shutting down/);
    expect(toolText(await sleeping)).toBe("slept");
    expect((await exited).code).toBe(0);
    expect(serve.stderr()).not.toMatch(/config re-read/);
  });

  it("a second signal ends the grace period at once", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { shutdownGraceMs: 60_000 },
    });
    const host = await initializedWs(serve.url, "fx");
    const sleeping = host.request(1, "tools/call", { name: "sleep", arguments: { ms: 60_000 } });
    await waitForStderr(serve, /fault: sleeping/);
    const exited = exitOf(serve.child);
    serve.child.kill("SIGTERM");
    await waitForStderr(serve, /shutting down/);
    serve.child.kill("SIGTERM");
    const answer = await sleeping.catch((e: Error) => {
      throw new Error(`${e.message}; stderr: ${serve.stderr().slice(-1500)}`);
    });
    expect(answer.error).toBeDefined();
    expect((await exited).code).toBe(0);
  });

  it("a WebSocket host that never answers the close frame holds the exit no longer than limits.closeTimeoutMs", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { shutdownGraceMs: 300, closeTimeoutMs: 1000 },
    });
    const host = await initializedWs(serve.url, "fx");
    // Frozen: it reads nothing more, so it never sees the close frame, let alone answers it.
    host.ws.pause();
    const exited = exitOf(serve.child);
    const signalled = Date.now();
    serve.child.kill("SIGTERM");
    const { code, at } = await exited;
    expect(code).toBe(0);
    // Not the ws library's own 30 s close timeout.
    expect(at - signalled).toBeLessThan(8000);
    host.ws.terminate();
  });
});

describe("stdio on SIGTERM", () => {
  it("stops at once: the request in flight gets an error, the upstream is ended, exit 0", async () => {
    const proxy = startRawStdio(process.execPath, [CLI, "stdio", "--", process.execPath, FAULT_SERVER]);
    await proxy.request(1, "initialize", INITIALIZE_PARAMS);
    proxy.notify("notifications/initialized");
    const pid = Number(toolText(await proxy.request(2, "tools/call", { name: "pid" })));
    const sleeping = proxy.request(3, "tools/call", { name: "sleep", arguments: { ms: 500 } });
    while (!proxy.stderr().includes("fault: sleeping"))
      await new Promise((resolve) => proxy.child.stderr.once("data", resolve));
    proxy.child.kill("SIGTERM");
    expect(await sleeping).toMatchObject({ error: { message: "upstream connection ended (signal)" } });
    expect(await proxy.exited).toBe(0);
    expect(await untilGone(pid)).toBe(true);
  });

  it("SIGHUP does not end it", async () => {
    const proxy = startRawStdio(process.execPath, [CLI, "stdio", "--", process.execPath, FAULT_SERVER]);
    await proxy.request(1, "initialize", INITIALIZE_PARAMS);
    proxy.child.kill("SIGHUP");
    expect(await proxy.request(2, "ping")).toMatchObject({ result: {} });
    expect(await proxy.close()).toBe(0);
  });
});
