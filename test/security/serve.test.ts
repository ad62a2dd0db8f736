/**
 * Security of a real `serve` process: bind refusal, bearer tokens on every endpoint
 * but /healthz, Host/Origin/CORS over the wire, per-client session and body limits, and
 * upstreams spawned without a shell. Traffic goes to 127.0.0.1 only.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { runCli } from "../helpers/runCli.js";
import { FAULT_SERVER, initializedWs, serveConfig, tempDir, toolText } from "../reliability/helpers.js";

const TOKEN = "s3cret-token-for-tests";
const TEST_NET = "192.0.2.1"; // RFC 5737 TEST-NET-1: never routed, never sent to

async function bindExit(config: Record<string, unknown>): Promise<{ code: number | null; stderr: string }> {
  const file = join(tempDir("mcpn-sec-"), "c.json");
  writeFileSync(
    file,
    JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } }, ...config }),
  );
  const run = await runCli(["serve", "--config", file, "--host", TEST_NET, "--port", "0"], { timeoutMs: 15_000 });
  return { code: run.code, stderr: run.stderr };
}

describe("binding a non-loopback address", () => {
  it("without auth: refused, exit 2, naming the fix", async () => {
    const run = await bindExit({});
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/refusing to listen on 192\.0\.2\.1 without auth/);
  });
  it.each([[{ auth: { bearerTokens: [TOKEN] } }], [{ auth: { allowUnauthenticated: true } }]])(
    "with %j: past the check (it may then fail to bind: exit 1), never exit 2",
    async (config) => {
      const run = await bindExit(config);
      expect(run.code).not.toBe(2);
      expect(run.stderr).not.toMatch(/refusing to listen/);
    },
  );
});

describe("serve with tokens, allowedOrigins and small limits", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await serveConfig({
      mcpServers: {
        fx: {
          command: process.execPath,
          args: [FAULT_SERVER, "a;b", "$(touch /tmp/mcpn-pwned)", "`id`", "| cat", "*"],
        },
      },
      auth: { bearerTokens: [TOKEN] },
      allowedOrigins: ["https://app.example"],
      limits: { maxSessionsPerClient: 2, maxBodyBytes: 4096 },
    });
  });
  afterAll(async () => {
    expect(await serve.stop()).toBe(0);
  });
  const auth = { authorization: `Bearer ${TOKEN}` };

  it.each(["/mcp/fx", "/sse/fx", "/messages?sessionId=x", "/ws/fx", "/metrics", "/report"])(
    "%s: 401 with WWW-Authenticate: Bearer without a token, and with a wrong one",
    async (path) => {
      for (const headers of [{}, { authorization: "Bearer wrong" }] as Array<Record<string, string>>) {
        const r = await fetch(`${serve.url}${path}`, {
          method: path.startsWith("/mcp") || path.startsWith("/messages") ? "POST" : "GET",
          headers: { "content-type": "application/json", ...headers },
          body: path.startsWith("/mcp") || path.startsWith("/messages") ? "{}" : undefined,
        });
        expect(r.status).toBe(401);
        expect(r.headers.get("www-authenticate")).toMatch(/^Bearer /);
        await r.body?.cancel();
      }
    },
  );

  it("/healthz needs no token; the right token opens /metrics and an MCP session", async () => {
    expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${serve.url}/metrics`, { headers: auth })).status).toBe(200);
    const ws = await initializedWs(serve.url, "fx", auth);
    await ws.close();
  });

  it("Host: evil.example (DNS rebinding) gets 403; a foreign Origin 403; loopback and allowedOrigins pass; CORS only for the configured origin", async () => {
    const { request } = await import("node:http");
    const status = (headers: Record<string, string>): Promise<{ status: number; acao: string | undefined }> =>
      new Promise((resolve, reject) => {
        const u = new URL(`${serve.url}/metrics`);
        request({ host: u.hostname, port: u.port, path: u.pathname, headers: { ...auth, ...headers } }, (res) => {
          res.resume();
          resolve({
            status: res.statusCode ?? 0,
            acao: res.headers["access-control-allow-origin"] as string | undefined,
          });
        })
          .on("error", reject)
          .end();
      });
    expect((await status({ host: "evil.example" })).status).toBe(403);
    expect((await status({ origin: "https://evil.example" })).status).toBe(403);
    const loopback = await status({ origin: "http://localhost:5173" });
    expect(loopback.status).toBe(200);
    expect(loopback.acao).toBeUndefined();
    const listed = await status({ origin: "https://app.example" });
    expect(listed).toEqual({ status: 200, acao: "https://app.example" });
  });

  it("limits.maxSessionsPerClient: the third live session of one client gets 503; limits.maxBodyBytes: 413", async () => {
    // Sessions end asynchronously on the server after the client closes: wait until none is held.
    const released = async (): Promise<void> => {
      for (let i = 0; i < 100; i++) {
        // Counts are details: only with the token.
        const health = (await (await fetch(`${serve.url}/healthz`, { headers: auth })).json()) as {
          hostSessions: number;
        };
        expect(health.hostSessions).toBeTypeOf("number");
        if (health.hostSessions === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await released();
    const a = await initializedWs(serve.url, "fx", auth);
    const b = await initializedWs(serve.url, "fx", auth);
    await expect(initializedWs(serve.url, "fx", auth)).rejects.toThrow(/HTTP 503/);
    // A stateless request counts too, and is told so (it has no session to close).
    const stateless = await fetch(`${serve.url}/mcp/fx`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(stateless.status).toBe(503);
    expect(((await stateless.json()) as { error: { message: string } }).error.message).toMatch(
      /limits\.maxSessionsPerClient \(2\) are open \(a stateless request counts as one until it is answered\)/,
    );
    // Another loopback address is the same local client, not a fresh allowance.
    const { default: WebSocket } = await import("ws");
    const other = new WebSocket(`${serve.url.replace("http", "ws")}/ws/fx`, "mcp", {
      headers: auth,
      localAddress: "127.0.0.2",
    });
    const status = await new Promise<number>((resolve, reject) => {
      other.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      other.once("open", () => resolve(101));
      other.once("error", reject);
    });
    other.terminate();
    expect(status).toBe(503);
    await Promise.all([a.close(), b.close()]);
    await released();
    const big = await fetch(`${serve.url}/mcp/fx`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { x: "a".repeat(5000) } }),
    });
    expect(big.status).toBe(413);
    expect(await big.text()).toMatch(/maxBodyBytes/);
  });

  it("upstreams are spawned without a shell: metacharacters reach the child as plain arguments", async () => {
    const ws = await initializedWs(serve.url, "fx", auth);
    const answer = await ws.request("argv", "tools/call", { name: "argv", arguments: {} });
    expect(JSON.parse(toolText(answer))).toEqual(["a;b", "$(touch /tmp/mcpn-pwned)", "`id`", "| cat", "*"]);
    await ws.close();
  });
});
