/**
 * Faults: an upstream that crashes mid-request, one that keeps dying, one that
 * prints junk on stdout, and hosts that go away — against a real `serve` process and the fault
 * fixture (a real SDK stdio server), checked by pid.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, hostTransport, raw, startServe, type HostKind, type ServeProcess } from "../helpers/proxyProcess.js";
import {
  FAULT_SERVER,
  getJson,
  initializedWs,
  processState,
  serveConfig,
  tempDir,
  toolText,
  untilGone,
  waitForStderr,
} from "./helpers.js";

describe("an upstream that dies mid-request", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe(["--name", "fx", "--", process.execPath, FAULT_SERVER]);
  });
  afterAll(async () => {
    await serve?.stop();
  });

  it("answers every pending request of that session within a second, naming the exit code (the stderr line goes to the log only); other sessions go on; the next session gets a fresh upstream", async () => {
    const a = await initializedWs(serve.url, "fx");
    const b = await initializedWs(serve.url, "fx");
    const pidA = Number(toolText(await a.request(1, "tools/call", { name: "pid" })));
    const pidB = Number(toolText(await b.request(1, "tools/call", { name: "pid" })));
    expect(pidA).not.toBe(pidB);

    const sleeping = [
      a.request(2, "tools/call", { name: "sleep", arguments: { ms: 60_000 } }),
      a.request(3, "tools/call", { name: "sleep", arguments: { ms: 60_000 } }),
    ];
    await waitForStderr(serve, /fault: sleeping[\s\S]*fault: sleeping/);
    const started = Date.now();
    const answers = await Promise.all([
      ...sleeping,
      a.request(4, "tools/call", { name: "crash", arguments: { code: 3 } }),
    ]);
    const elapsed = Date.now() - started;

    expect(elapsed).toBeLessThan(1000);
    for (const answer of answers) {
      expect(answer.error).toMatchObject({ code: -32001 });
      const message = (answer.error as { message: string }).message;
      expect(message).toContain("exited with code 3");
      expect(message).not.toContain("fault: giving up");
    }
    expect(await untilGone(pidA)).toBe(true);
    await a.closed;

    // The other session and the proxy are untouched.
    expect(Number(toolText(await b.request(2, "tools/call", { name: "pid" })))).toBe(pidB);
    const health = await getJson(`${serve.url}/healthz`);
    expect(health.status).toBe(200);
    expect(JSON.stringify(health.body)).toContain("exited with code 3");
    expect(JSON.stringify(health.body)).not.toContain("fault: giving up");
    expect(await waitForStderr(serve, /"lastStderrLine":"fault: giving up"/)).toBeTruthy();

    const c = await initializedWs(serve.url, "fx");
    const pidC = Number(toolText(await c.request(1, "tools/call", { name: "pid" })));
    expect(pidC).not.toBe(pidA);
    expect(processState(pidC)).toMatch(/[RS]/);
    await Promise.all([b.close(), c.close()]);
  });

  it("names the signal when the upstream is killed", async () => {
    const a = await initializedWs(serve.url, "fx");
    const answer = await a.request(1, "tools/call", { name: "kill", arguments: { signal: "SIGKILL" } });
    expect((answer.error as { message: string }).message).toContain("killed by SIGKILL");
    await a.closed;
  });

  it("skips and logs non-JSON lines the upstream prints on stdout; the session goes on", async () => {
    const a = await initializedWs(serve.url, "fx");
    expect(toolText(await a.request(1, "tools/call", { name: "junk" }))).toBe("after junk");
    // The log is written in batches, to a pipe the test reads on its own: it may come after the answer.
    await waitForStderr(serve, /this line is not JSON/, 5000);
    expect(toolText(await a.request(2, "tools/call", { name: "junk" }))).toBe("after junk");
    await a.close();
  });
});

describe("a stdio upstream that keeps dying", () => {
  it("is started again with a doubling backoff, shows as down in /healthz and /metrics, and recovers once SIGHUP brings a config that works", async () => {
    const dir = tempDir();
    const startLog = join(dir, "starts.log");
    const server = (env: Record<string, string>) => ({
      command: process.execPath,
      args: [FAULT_SERVER],
      env: { FAULT_START_LOG: startLog, ...env },
    });
    const config = (env: Record<string, string>) => ({
      mcpServers: { dying: server(env) },
      limits: { restartBackoffMs: 150, maxRestartBackoffMs: 10_000 },
    });
    const serve = await serveConfig(config({ FAULT_EXIT_ON_START: "1" }));
    try {
      for (let attempt = 0; attempt < 4; attempt++) {
        const host = await initializedWs(serve.url, "dying").then(
          () => "initialized",
          (error: Error) => error.message,
        );
        expect(host).toContain("exited with code 1");
        expect(host).not.toContain("fault: cannot start");
      }
      const starts = readFileSync(startLog, "utf8").trim().split("\n").map(Number);
      expect(starts).toHaveLength(4);
      // 150, 300, 600 ms between attempts: each attempt waited its backoff.
      const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
      expect(gaps[0]).toBeGreaterThanOrEqual(140);
      expect(gaps[1]).toBeGreaterThanOrEqual(290);
      expect(gaps[2]).toBeGreaterThanOrEqual(590);

      const health = (await getJson(`${serve.url}/healthz`)).body as {
        status: string;
        servers: Record<string, Record<string, unknown>>;
      };
      expect(health.status).toBe("degraded");
      expect(health.servers.dying).toMatchObject({ status: "down", consecutiveFailures: 4, restarts: 3 });
      expect(String(health.servers.dying!.lastError)).toMatch(/exited with code 1$/);
      const metrics = await (await fetch(`${serve.url}/metrics`)).text();
      expect(metrics).toMatch(/mcp_normalizer_upstream_down\{server="dying"\} 1/);
      expect(metrics).toMatch(/mcp_normalizer_upstream_restarts_total\{server="dying"\} 3/);

      // SIGHUP: the fixed config applies to the next session, which does not wait out the
      // backoff the broken config earned (the fifth start would wait 1200 ms).
      const waits = () => serve.stderr().split("waiting before starting it again").length;
      const waitsBefore = waits();
      writeFileSync(serve.configFile, JSON.stringify(config({})));
      serve.child.kill("SIGHUP");
      await waitForStderr(serve, /SIGHUP: config re-read/);
      const host = await initializedWs(serve.url, "dying");
      expect(waits()).toBe(waitsBefore);
      expect(Number(toolText(await host.request(1, "tools/call", { name: "pid" })))).toBeGreaterThan(0);
      const after = (await getJson(`${serve.url}/healthz`)).body as {
        status: string;
        servers: Record<string, Record<string, unknown>>;
      };
      expect(after.servers.dying).toMatchObject({ status: "up", consecutiveFailures: 0 });
      expect(after.status).toBe("ok");
      await host.close();
    } finally {
      await serve.stop();
    }
  });

  it("a session still on the entry a SIGHUP replaced that crashes afterwards does not count against the new entry", async () => {
    const entry = { command: process.execPath, args: [FAULT_SERVER] };
    const serve = await serveConfig({ mcpServers: { fx: entry }, limits: { restartBackoffMs: 5000 } });
    try {
      const old = await initializedWs(serve.url, "fx");
      expect(Number(toolText(await old.request(1, "tools/call", { name: "pid" })))).toBeGreaterThan(0);
      writeFileSync(serve.configFile, JSON.stringify({ mcpServers: { fx: { ...entry, env: { FIXED: "1" } } } }));
      serve.child.kill("SIGHUP");
      await waitForStderr(serve, /SIGHUP: config re-read/);
      const crashed = await old.request(2, "tools/call", { name: "crash", arguments: { code: 3 } });
      expect(crashed.error).toMatchObject({ code: -32001 });
      await waitForStderr(serve, /upstream ended on its own/);
      const health = (await getJson(`${serve.url}/healthz`)).body as {
        status: string;
        servers: Record<string, Record<string, unknown>>;
      };
      // Shown as what happened, but the running entry is not down and owes no wait.
      expect(health.servers.fx).toMatchObject({ consecutiveFailures: 0, upstreamFailures: 1 });
      expect(String(health.servers.fx!.lastError)).toMatch(/exited with code 3$/);
      expect(health.servers.fx!.status).toBe("idle");
      expect(health.status).toBe("ok");
      const started = Date.now();
      const fresh = await initializedWs(serve.url, "fx");
      expect(Number(toolText(await fresh.request(1, "tools/call", { name: "pid" })))).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(4000);
      expect(serve.stderr()).not.toMatch(/waiting before starting it again/);
      await fresh.close();
    } finally {
      await serve.stop();
    }
  });

  it("SIGHUP with a broken config file keeps the running config and says why", async () => {
    const serve = await serveConfig({ mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } } });
    try {
      writeFileSync(serve.configFile, "{ not json");
      serve.child.kill("SIGHUP");
      await waitForStderr(serve, /config not reloaded; the running config stays/);
      const host = await initializedWs(serve.url, "fx");
      expect(Number(toolText(await host.request(1, "tools/call", { name: "pid" })))).toBeGreaterThan(0);
      await host.close();
    } finally {
      await serve.stop();
    }
  });

  it("SIGHUP when the config path has become a pipe with no writer refuses it at once and keeps serving", async () => {
    const serve = await serveConfig({ mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } } });
    try {
      rmSync(serve.configFile);
      execFileSync("mkfifo", [serve.configFile]);
      serve.child.kill("SIGHUP");
      await waitForStderr(serve, /not a regular file.*SIGHUP: config not reloaded; the running config stays/);
      expect((await getJson(`${serve.url}/healthz`)).status).toBe(200);
      const host = await initializedWs(serve.url, "fx");
      expect(Number(toolText(await host.request(1, "tools/call", { name: "pid" })))).toBeGreaterThan(0);
      await host.close();
    } finally {
      await serve.stop();
    }
  });
});

describe("a host that goes away", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe(["--name", "fx", "--", process.execPath, FAULT_SERVER]);
  });
  afterAll(async () => {
    await serve?.stop();
  });

  const kinds: HostKind[] = ["mcp", "sse", "ws", "stdio"];
  for (const kind of kinds) {
    it(`over ${kind}: its upstream child is ended and reaped (checked by pid), its session freed`, async () => {
      const host = await connect(
        hostTransport(kind, { url: serve.url, name: "fx", stdioArgs: ["--", process.execPath, FAULT_SERVER] }),
      );
      const pid = Number(
        ((await raw(host.client, "tools/call", { name: "pid" })).content as Array<{ text: string }>)[0]!.text,
      );
      expect(processState(pid)).toMatch(/[RS]/);
      if (kind === "mcp") await (host.transport as unknown as { terminateSession(): Promise<void> }).terminateSession();
      await host.close();
      expect(await untilGone(pid)).toBe(true);
      if (kind !== "stdio") {
        const health = (await getJson(`${serve.url}/healthz`)).body as {
          servers: Record<string, { sessions: number }>;
        };
        expect(health.servers.fx!.sessions).toBe(0);
      }
    });
  }
});
