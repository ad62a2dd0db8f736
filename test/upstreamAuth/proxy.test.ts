/**
 * The proxy in front of a real OAuth-protected SDK server, with tokens from `login`: over /mcp
 * (serve) and stdio, with 2-second access tokens so refresh is exercised — before expiry (no
 * 401 reaches the host, one refresh for many concurrent requests) and after a 401 (the request
 * is sent again, nothing lost); a revoked refresh token (an error naming the server and the
 * login command, the other servers served); a new login picked up without a restart; audit.
 * Then every secret value the authorization server saw is searched for in what the proxy wrote.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post, rpc } from "../badInput/mcpHttp.js";
import { CLI, FIXTURE_SERVER } from "../helpers/paths.js";
import { connect, startServe, type Connected, type ServeProcess } from "../helpers/proxyProcess.js";
import {
  loginApproved,
  startCli,
  startOAuthUpstream,
  writeConfig,
  stopStartedClis,
  type OAuthUpstream,
} from "./helpers.js";
import { tempDir } from "../helpers/tempDir.js";

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const text = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0]?.text ?? "";
/** The proxy's own bearer token (auth.bearerTokens): hosts send it, the upstream must never see it. */
const PROXY_TOKEN = "proxy-own-token-6d2e90";
const hostAuth = { authorization: `Bearer ${PROXY_TOKEN}` };
const initialize = rpc(0, "initialize", {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "h", version: "1" },
});

describe("serve and stdio in front of an OAuth-protected server", () => {
  let upstream: OAuthUpstream;
  let dir: string;
  let configFile: string;
  let logFile: string;
  let serve: ServeProcess;
  const env: Record<string, string> = {};
  /** Everything a host was sent, and every stderr: searched for secrets at the end. */
  const seen: string[] = [];
  const open: Connected[] = [];

  const refreshes = async (): Promise<number> =>
    (await upstream.log()).grants.filter((g) => g.grant_type === "refresh_token").length;

  beforeAll(async () => {
    upstream = await startOAuthUpstream({ accessTtlS: 2 });
    dir = tempDir("mcpn-oauth-proxy-");
    env.MCPN_AUTH_DIR = join(dir, "auth");
    logFile = join(dir, "log.jsonl");
    configFile = writeConfig(dir, {
      mcpServers: {
        prot: { url: upstream.mcp, auth: "oauth" },
        plain: { command: process.execPath, args: [FIXTURE_SERVER] },
      },
      log: { file: logFile, level: "debug" },
      auth: { bearerTokens: [PROXY_TOKEN] },
    });
    const login = await loginApproved(["prot", "--config", configFile], env);
    expect(login.code, login.stderr()).toBe(0);
    seen.push(login.stdout(), login.stderr());
    serve = await startServe(["--config", configFile, "--log-level", "debug"], env);
  });

  afterAll(async () => {
    await stopStartedClis();
    for (const c of open) await c.close().catch(() => {});
    await serve?.stop();
    await upstream?.stop();
  });

  const session = async (name: string): Promise<Connected> => {
    const c = await connect(
      new StreamableHTTPClientTransport(new URL(`${serve.url}/mcp/${name}`), { requestInit: { headers: hostAuth } }),
    );
    open.push(c);
    return c;
  };

  it("/mcp: requests reach the server with the stored token; what it returns is normalized as usual", async () => {
    const c = await session("prot");
    expect(text(await c.client.callTool({ name: "whoami", arguments: {} }))).toMatch(/^client [\w-]+$/);
    const read = await c.client.readResource({ uri: "file:///notes.md" });
    expect(read.contents[0]).toMatchObject({ mimeType: "text/markdown", text: "# Notes\nbehind OAuth\n" });
    // The host's Authorization (for the proxy) never went upstream: only tokens the server issued did.
    const log = await upstream.log();
    const shown = log.mcp.filter((r) => r.token !== undefined).map((r) => r.token!);
    expect(shown.length).toBeGreaterThan(0);
    for (const token of shown) expect(log.secrets).toContain(token);
    expect(shown).not.toContain(PROXY_TOKEN);
  });

  it("an expiring token is refreshed before it is sent — once for many concurrent requests, no 401 reaches anyone", async () => {
    const a = await session("prot");
    const b = await session("prot");
    await sleep(2300);
    const before = await refreshes();
    const mcpBefore = (await upstream.log()).mcp.length;
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).client.callTool({ name: "whoami", arguments: {} })),
    );
    for (const r of results) expect(text(r)).toMatch(/^client /);
    expect(await refreshes()).toBe(before + 1);
    const log = await upstream.log();
    expect(log.mcp.slice(mcpBefore).filter((r) => r.status === 401)).toEqual([]);
    expect(log.grants.at(-1)).toMatchObject({ grant_type: "refresh_token", resource: upstream.mcp, ok: true });
  });

  it("a token the server refuses (401) is refreshed once and the request sent again: the host gets its answer", async () => {
    // A raw session that never sends notifications/initialized: its GET stream is opened with the
    // call (the server's answers to it are left out below), and is refused with the old token too.
    const init = await post(`${serve.url}/mcp/prot`, initialize, undefined, hostAuth);
    const id = init.headers.get("mcp-session-id") ?? undefined;
    expect(init.status).toBe(200);
    await upstream.revokeAccess();
    const before = await refreshes();
    const mcpBefore = (await upstream.log()).mcp.length;
    const call = await post(
      `${serve.url}/mcp/prot`,
      rpc(2, "tools/call", { name: "whoami", arguments: {} }),
      id,
      hostAuth,
    );
    expect(call.messages).toEqual([
      { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: expect.stringMatching(/^client /) }] } },
    ]);
    expect(await refreshes()).toBe(before + 1);
    const log = await upstream.log();
    const seenByServer = log.mcp.slice(mcpBefore).filter((r) => r.method === "POST");
    expect(
      seenByServer.map((r) => `${r.method} ${r.status}`),
      JSON.stringify(log.mcp.slice(mcpBefore)),
    ).toEqual(["POST 401", "POST 200"]);
    expect(seenByServer[1]!.token).not.toBe(seenByServer[0]!.token);
    expect(log.grants.at(-1)).toMatchObject({ grant_type: "refresh_token", ok: true });
  });

  it("stdio --config: the same, over the host's stdin/stdout", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "stdio", "--config", configFile, "--server", "prot", "--log-level", "debug", "--no-browser"],
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
    const client = new Client({ name: "stdio-host", version: "1" });
    await client.connect(transport);
    try {
      expect(text(await client.callTool({ name: "whoami", arguments: {} }))).toMatch(/^client /);
      await sleep(2300);
      const before = await refreshes();
      expect(text(await client.callTool({ name: "whoami", arguments: {} }))).toMatch(/^client /);
      expect(await refreshes()).toBe(before + 1);
      expect(stderr).not.toMatch(/^https?:\/\//m); // it had tokens: no browser login

      // serve shares the token file: its own token expired and its refresh token was rotated
      // away by stdio's refresh; it takes what stdio stored instead of failing or refreshing.
      const viaServe = await session("prot");
      expect(text(await viaServe.client.callTool({ name: "whoami", arguments: {} }))).toMatch(/^client /);
      expect(await refreshes()).toBe(before + 1);
      expect((await upstream.log()).grants.filter((g) => g.ok === false)).toEqual([]);
    } finally {
      await client.close();
      seen.push(stderr);
    }
  });

  it("a revoked refresh token: the host's request gets an error naming the server and `mcp-normalizer login prot`; the other servers are served", async () => {
    const c = await session("prot");
    await upstream.revokeRefresh();
    await upstream.revokeAccess();
    const error = await c.client.callTool({ name: "whoami", arguments: {} }).then(
      () => undefined,
      (e: Error) => e.message,
    );
    seen.push(String(error));
    expect(error).toMatch(/upstream "prot" needs an OAuth login.*run "mcp-normalizer login prot --config /);

    // A new session: its initialize is answered with the same error, as JSON-RPC.
    const init = await post(`${serve.url}/mcp/prot`, initialize, undefined, hostAuth);
    seen.push(JSON.stringify(init.messages));
    expect(init.messages[0]).toMatchObject({
      id: 0,
      error: { code: -32001, data: { code: "UPSTREAM_AUTH_REQUIRED", server: "prot" } },
    });
    expect(JSON.stringify(init.messages[0])).toContain(`mcp-normalizer login prot --config ${configFile}`);

    const plain = await session("plain");
    expect((await plain.client.listResources()).resources.length).toBeGreaterThan(0);
    expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
    // The operator sees why: the server is up, but its requests want a login.
    const health = (await (await fetch(`${serve.url}/healthz`, { headers: hostAuth })).json()) as {
      status: string;
      servers: Record<string, { status: string; auth?: string }>;
    };
    expect(health.status).toBe("degraded");
    expect(health.servers.prot).toMatchObject({ auth: "login needed" });
    expect(health.servers.plain?.auth).toBeUndefined();

    // audit says the same, and fails.
    const audit = startCli(["audit", "--config", configFile, "--server", "prot"], env);
    expect(await audit.exited()).toBe(1);
    expect(audit.stderr()).toMatch(/upstream "prot" needs an OAuth login.*mcp-normalizer login prot/);
    seen.push(audit.stderr(), audit.stdout());
  });

  it("logging in again while serve runs: the next request of a live session works, no restart", async () => {
    const c = await session("plain"); // keeps the other server busy meanwhile
    const login = await loginApproved(["prot", "--config", configFile], env);
    expect(login.code).toBe(0);
    seen.push(login.stdout(), login.stderr());
    const again = await session("prot");
    expect(text(await again.client.callTool({ name: "whoami", arguments: {} }))).toMatch(/^client /);
    expect((await c.client.listResources()).resources.length).toBeGreaterThan(0);
    const health = (await (await fetch(`${serve.url}/healthz`, { headers: hostAuth })).json()) as {
      status: string;
      servers: Record<string, { auth?: string }>;
    };
    expect(health.servers.prot?.auth).toBeUndefined();
  });

  it("audit reads the protected server with the stored token", async () => {
    const audit = startCli(["audit", "--config", configFile, "--server", "prot", "--format", "json"], env);
    expect(await audit.exited(), audit.stderr()).toBe(0);
    const report = JSON.parse(audit.stdout()) as { resources: { listed: number } };
    expect(report.resources.listed).toBe(1);
    seen.push(audit.stdout(), audit.stderr());
  });

  it("logging out (deleting the token file): once the held token needs renewing, requests get the login error", async () => {
    const c = await session("prot");
    expect(text(await c.client.callTool({ name: "whoami", arguments: {} }))).toMatch(/^client /);
    for (const file of readdirSync(env.MCPN_AUTH_DIR!)) rmSync(join(env.MCPN_AUTH_DIR!, file));
    await sleep(2300);
    const error = await c.client.callTool({ name: "whoami", arguments: {} }).then(
      () => "answered",
      (e: Error) => e.message,
    );
    seen.push(error);
    expect(error).toMatch(/upstream "prot" needs an OAuth login: run "mcp-normalizer login prot --config /);
    expect(readdirSync(env.MCPN_AUTH_DIR!)).toEqual([]); // not written back by a refresh
  });

  it("no secret the authorization server saw (codes, verifiers, access and refresh tokens) is in the logs (debug), /healthz, /metrics or anything a host got", async () => {
    for (const path of ["/healthz", "/metrics"]) {
      const response = await fetch(`${serve.url}${path}`, { headers: hostAuth });
      expect(response.status).toBe(200);
      seen.push(await response.text());
    }
    for (const c of open.splice(0)) await c.close().catch(() => {});
    await serve.stop();
    seen.push(serve.stderr(), readFileSync(logFile, "utf8"));
    expect(serve.stderr()).toContain('"level":"debug"');
    const log = await upstream.log();
    expect(log.secrets.length).toBeGreaterThan(10);
    const everything = seen.join("\n");
    for (const secret of log.secrets)
      expect(everything.includes(secret), `secret ${secret.slice(0, 6)}… leaked`).toBe(false);
  });
});
