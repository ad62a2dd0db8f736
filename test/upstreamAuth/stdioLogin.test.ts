/**
 * `stdio --url URL --auth oauth` (the one-line form for a desktop host's `mcpServers`) with no
 * token stored: the proxy runs the browser login itself — the URL on stderr on a line of its
 * own — and answers `initialize` once logged in; again mid-session when the refresh token is
 * revoked. The tokens it stores serve `audit --url … --auth oauth`; `serve --name … --url …
 * --auth oauth` without a token names `mcp-normalizer login --url URL`.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post, rpc } from "../badInput/mcpHttp.js";
import { CLI } from "../helpers/paths.js";
import { INITIALIZE_PARAMS, startRawStdio } from "../helpers/rawStdio.js";
import { startServe } from "../helpers/proxyProcess.js";
import {
  approve,
  startCli,
  startOAuthUpstream,
  urlLine,
  writeConfig,
  stopStartedClis,
  type OAuthUpstream,
} from "./helpers.js";
import { tempDir } from "../helpers/tempDir.js";

const text = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0]?.text ?? "";

/** Resolves with the next URL line printed after `from` characters of stderr. */
function nextUrl(read: () => string, from: number, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const poll = setInterval(() => {
      const url = urlLine(read().slice(from));
      if (url !== undefined) {
        clearInterval(poll);
        resolve(url);
      } else if (Date.now() > deadline) {
        clearInterval(poll);
        reject(new Error(`no authorization URL in ${timeoutMs} ms; stderr: ${read()}`));
      }
    }, 25);
  });
}

describe("stdio --url URL --auth oauth", () => {
  let upstream: OAuthUpstream;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    upstream = await startOAuthUpstream({ accessTtlS: 30 });
    dir = tempDir("mcpn-oauth-stdio-");
    env = { MCPN_AUTH_DIR: join(dir, "auth") };
  });

  afterAll(async () => {
    await stopStartedClis();
    await upstream.stop();
  });

  /** A desktop host (SDK client) starting `stdio --url … --auth oauth`, and what it printed on stderr. */
  function stdioOAuthHost(): { transport: StdioClientTransport; client: Client; stderr: () => string } {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "stdio", "--url", upstream.mcp, "--auth", "oauth", "--no-browser"],
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
    return { transport, client: new Client({ name: "desktop-host", version: "1" }), stderr: () => stderr };
  }

  it("with no token: prints the URL on its own line, answers initialize once the browser came back, and logs in again when the refresh token dies", async () => {
    const { transport, client, stderr } = stdioOAuthHost();
    let initialized = false;
    const connecting = client.connect(transport).then(() => (initialized = true));
    try {
      const url = await nextUrl(stderr, 0);
      // Named after the URL's host (no --name given).
      expect(stderr()).toMatch(
        /upstream "127\.0\.0\.1" needs an OAuth login; open this URL in a browser \(waiting up to 5 minutes\):\n/,
      );
      expect(initialized).toBe(false);
      // A stray request to the callback (a stale tab's state) is refused; the login waits on for its own.
      const stray = new URL(new URL(url).searchParams.get("redirect_uri")!);
      stray.searchParams.set("state", "stale-tab");
      expect((await fetch(stray, { signal: AbortSignal.timeout(5000) })).status).toBe(400);
      expect((await approve(url)).response.status).toBe(200);
      await connecting;
      expect(stderr()).toMatch(/"warn".*refused a request to the callback whose state is not this login's/);
      expect(text(await client.callTool({ name: "whoami", arguments: {} }))).toMatch(/^client /);
      const files = readdirSync(env.MCPN_AUTH_DIR!);
      expect(files).toHaveLength(1);
      expect(statSync(join(env.MCPN_AUTH_DIR!, files[0]!)).mode & 0o777).toBe(0o600);

      // Mid-session: both tokens revoked. The next request waits for a new login, then is answered.
      await upstream.revokeRefresh();
      await upstream.revokeAccess();
      const seenSoFar = stderr().length;
      const call = client.callTool({ name: "whoami", arguments: {} });
      const second = await nextUrl(stderr, seenSoFar);
      expect(second).not.toBe(url);
      expect((await approve(second)).response.status).toBe(200);
      expect(text(await call)).toMatch(/^client /);
    } finally {
      await connecting.catch(() => {});
      await client.close();
    }
    const log = await upstream.log();
    expect(log.grants.filter((g) => g.grant_type === "authorization_code")).toHaveLength(2);
    for (const secret of log.secrets) expect(stderr().includes(secret)).toBe(false);
  });

  it("a registration the authorization server has forgotten is not reused: the next login registers again", async () => {
    const [file] = readdirSync(env.MCPN_AUTH_DIR!);
    const path = join(env.MCPN_AUTH_DIR!, file!);
    const stored = JSON.parse(readFileSync(path, "utf8")) as { client: { client_id: string }; expiresAt?: number };
    // As after a restart with an empty client store: the id is unknown, and the access token expired.
    stored.client.client_id = "forgotten-client";
    stored.expiresAt = Date.now() - 60_000;
    writeFileSync(path, JSON.stringify(stored), { mode: 0o600 });
    const registrations = (await upstream.log()).registrations;
    const { transport, client, stderr } = stdioOAuthHost();
    const connecting = client.connect(transport);
    try {
      const url = await nextUrl(stderr, 0);
      expect(new URL(url).searchParams.get("client_id")).not.toBe("forgotten-client");
      expect((await approve(url)).response.status).toBe(200);
      await connecting;
      expect(text(await client.callTool({ name: "whoami", arguments: {} }))).toMatch(/^client /);
    } finally {
      await connecting.catch(() => {});
      await client.close();
    }
    expect((await upstream.log()).registrations).toBe(registrations + 1);
  }, 30_000);

  it("no answer to its browser login within limits.loginTimeoutMs: stdio says so and exits 1", async () => {
    const configFile = writeConfig(
      dir,
      { mcpServers: { remote: { url: upstream.mcp, auth: "oauth" } }, limits: { loginTimeoutMs: 1000 } },
      "timed.json",
    );
    const run = startCli(["stdio", "--config", configFile, "--no-browser"], { MCPN_AUTH_DIR: join(dir, "never") });
    await run.authorizationUrl();
    expect(await run.exited()).toBe(1);
    expect(run.stderr()).toMatch(/login to "remote": no answer from the browser within 1 s \(limits\.loginTimeoutMs\)/);
    expect(run.stdout()).toBe("");
  });

  it("a host that asked while the login failed is answered with why, not left without a word", async () => {
    const configFile = writeConfig(
      dir,
      { mcpServers: { remote: { url: upstream.mcp, auth: "oauth" } }, limits: { loginTimeoutMs: 1000 } },
      "timed-asked.json",
    );
    const proxy = startRawStdio(process.execPath, [CLI, "stdio", "--config", configFile, "--no-browser"], {
      MCPN_AUTH_DIR: join(dir, "never-asked"),
    });
    const answer = await proxy.request(1, "initialize", INITIALIZE_PARAMS, 15_000);
    expect(answer.error).toMatchObject({
      code: -32001,
      message: 'the proxy could not log in to upstream "remote" (OAuth); its log says why',
    });
    expect(await proxy.close(10_000)).toBe(1);
    expect(proxy.stderr()).toMatch(/no answer from the browser within 1 s/);
  });

  it("audit --url URL --auth oauth uses the tokens the stdio login stored", async () => {
    const audit = startCli(["audit", "--url", upstream.mcp, "--auth", "oauth", "--format", "json"], env);
    expect(await audit.exited(), audit.stderr()).toBe(0);
    expect((JSON.parse(audit.stdout()) as { resources: { listed: number } }).resources.listed).toBe(1);
  });

  it("serve --name NAME --url URL --auth oauth with no token: the host's error names `mcp-normalizer login --url URL`", async () => {
    const serve = await startServe(["--name", "remote", "--url", upstream.mcp, "--auth", "oauth"], {
      MCPN_AUTH_DIR: join(dir, "empty"),
    });
    try {
      const init = await post(
        `${serve.url}/mcp/remote`,
        rpc(1, "initialize", {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "h", version: "1" },
        }),
      );
      expect(init.messages[0]).toMatchObject({
        id: 1,
        error: { code: -32001, data: { code: "UPSTREAM_AUTH_REQUIRED", server: "remote" } },
      });
      expect((init.messages[0] as { error: { message: string } }).error.message).toBe(
        `upstream "remote" needs an OAuth login: run "mcp-normalizer login --url ${upstream.mcp}"`,
      );
    } finally {
      await serve.stop();
    }
  });

  it("bad --auth uses are refused on the command line (exit 2)", async () => {
    for (const [args, message] of [
      [["--url", upstream.mcp, "--auth", "basic"], /--auth expects oauth/],
      [["--url", upstream.mcp.replace(/^http/, "ws"), "--auth", "oauth"], /not WebSocket/],
      [["--url", upstream.mcp, "--auth", "oauth", "--header", "Authorization: Bearer x"], /remove one/],
      [["--auth", "oauth", "--", "node", "x.js"], /--auth go with --url/],
    ] as Array<[string[], RegExp]>) {
      const run = startCli(["stdio", ...args], env);
      expect(await run.exited(), args.join(" ")).toBe(2);
      expect(run.stderr()).toMatch(message);
    }
  });
});
