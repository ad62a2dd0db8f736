/**
 * The official conformance suite (`@modelcontextprotocol/conformance` 0.1.13, pinned:
 * the last release that starts on Node 20) runs its server scenarios against a real streamable
 * HTTP upstream — the reference "everything" server in its streamableHttp mode — directly and
 * through `serve`'s `/mcp/NAME`. Every scenario that passes directly passes through the proxy,
 * and `dns-rebinding-protection` passes through the proxy although the upstream fails it.
 */
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVERYTHING_SERVER, ROOT } from "../helpers/paths.js";
import { startServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";

const CONFORMANCE = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

/** A free port on 127.0.0.1 (the everything server takes its port from PORT, and has no port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Runs every active server scenario against `url`; per scenario, whether all its checks passed. */
async function runSuite(url: string): Promise<Map<string, { passed: number; failed: number }>> {
  const out = tempDir("mcpn-conformance-");
  await promisify(execFile)(process.execPath, [CONFORMANCE, "server", "--url", url, "-o", out], {
    cwd: ROOT,
    timeout: 120_000,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { code?: number }) => {
    // The CLI exits non-zero when any scenario fails; the results are in `out` all the same.
    if (typeof error.code !== "number") throw error;
  });
  const results = new Map<string, { passed: number; failed: number }>();
  for (const dir of readdirSync(out)) {
    const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT/.exec(dir)?.[1];
    if (scenario === undefined) continue;
    const checks = JSON.parse(readFileSync(join(out, dir, "checks.json"), "utf8")) as Array<{ status: string }>;
    results.set(scenario, {
      passed: checks.filter((c) => c.status === "SUCCESS").length,
      failed: checks.filter((c) => c.status === "FAILURE").length,
    });
  }
  return results;
}

const passes = (r: { passed: number; failed: number } | undefined): boolean =>
  r !== undefined && r.failed === 0 && r.passed > 0;

describe("the MCP conformance suite, directly and through the proxy", () => {
  let upstream: ChildProcess;
  let serve: ServeProcess;
  let upstreamUrl: string;
  beforeAll(async () => {
    const port = await freePort();
    upstream = spawn(process.execPath, [EVERYTHING_SERVER, "streamableHttp"], {
      env: { ...process.env, PORT: String(port) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    await new Promise<void>((resolve, reject) => {
      let err = "";
      upstream.stderr!.on("data", (c: Buffer) => {
        err += c.toString();
        if (err.includes("listening on port")) resolve();
      });
      upstream.once("exit", (code) => reject(new Error(`everything server exited ${code}: ${err}`)));
    });
    upstreamUrl = `http://127.0.0.1:${port}/mcp`;
    serve = await startServe(["--name", "everything", "--url", upstreamUrl, "--log-level", "warn"]);
  }, 60_000);
  afterAll(async () => {
    await serve?.stop();
    upstream?.kill("SIGTERM");
  });

  it("every scenario that passes directly passes through /mcp/NAME; dns-rebinding-protection passes through the proxy", async () => {
    const direct = await runSuite(upstreamUrl);
    const proxied = await runSuite(`${serve.url}/mcp/everything`);
    const passedDirect = [...direct].filter(([, r]) => passes(r)).map(([name]) => name);
    const passedProxied = [...proxied].filter(([, r]) => passes(r)).map(([name]) => name);
    const count = (m: typeof direct) =>
      [...m.values()].reduce((sum, r) => ({ passed: sum.passed + r.passed, failed: sum.failed + r.failed }), {
        passed: 0,
        failed: 0,
      });
    console.log(
      `conformance 0.1.13: direct ${passedDirect.length}/${direct.size} scenarios (${JSON.stringify(count(direct))} checks); through the proxy ${passedProxied.length}/${proxied.size} scenarios (${JSON.stringify(count(proxied))} checks)`,
    );

    expect(direct.size).toBeGreaterThan(20);
    expect(proxied.size).toBe(direct.size);
    expect(passedDirect.length).toBeGreaterThan(5);
    for (const scenario of passedDirect)
      expect({ scenario, passes: passes(proxied.get(scenario)) }).toEqual({ scenario, passes: true });
    expect(passes(direct.get("dns-rebinding-protection"))).toBe(false);
    expect(passes(proxied.get("dns-rebinding-protection"))).toBe(true);
  }, 240_000);
});
