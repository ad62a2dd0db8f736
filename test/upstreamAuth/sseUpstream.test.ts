/**
 * OAuth in front of a legacy HTTP+SSE upstream: the event stream's GET and every POST to its
 * endpoint carry the token (its own resource, from `login --url`), refreshed as it expires;
 * without a token the session cannot open and the host is told which login to run. A legacy
 * server that serves GET only and names its resource metadata only in its 401 is logged in to
 * with the GET of its stream, as the session would open it.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post, rpc } from "../badInput/mcpHttp.js";
import { connect, hostTransport, startServe } from "../helpers/proxyProcess.js";
import {
  approve,
  startCli,
  startOAuthUpstream,
  loginApproved,
  stopStartedClis,
  writeConfig,
  type OAuthUpstream,
} from "./helpers.js";
import { tempDir } from "../helpers/tempDir.js";
import { FIXTURE_SERVER } from "../helpers/paths.js";

const text = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0]?.text ?? "";

describe("OAuth with an SSE upstream", () => {
  let upstream: OAuthUpstream;
  let dir: string;

  beforeAll(async () => {
    upstream = await startOAuthUpstream({ accessTtlS: 2 });
    dir = tempDir("mcpn-oauth-sse-");
  });

  afterAll(async () => {
    await stopStartedClis();
    await upstream.stop();
  });

  it("login --url, then serve --transport sse: the stream and the POSTs carry the token, refreshed when it expires", async () => {
    const env = { MCPN_AUTH_DIR: join(dir, "auth") };
    const login = await loginApproved(["--url", upstream.sse], env);
    expect(login.code, login.stderr()).toBe(0);
    expect((await upstream.log()).grants.at(-1)).toMatchObject({
      grant_type: "authorization_code",
      resource: upstream.sse,
    });
    const serve = await startServe(
      ["--name", "legacy", "--url", upstream.sse, "--transport", "sse", "--auth", "oauth"],
      env,
    );
    const host = await connect(hostTransport("mcp", { url: serve.url, name: "legacy" }));
    try {
      expect(text(await host.client.callTool({ name: "whoami", arguments: {} }))).toMatch(/^client /);
      await new Promise((resolve) => setTimeout(resolve, 2300));
      expect(text(await host.client.callTool({ name: "whoami", arguments: {} }))).toMatch(/^client /);
      const log = await upstream.log();
      expect(log.grants.at(-1)).toMatchObject({ grant_type: "refresh_token", resource: upstream.sse, ok: true });
      const messages = log.mcp.filter((r) => r.path === "/messages");
      expect(messages.length, JSON.stringify(log.mcp)).toBeGreaterThanOrEqual(3);
      // Every POST carried a token; one the server found expired (a 2 s token on a busy machine)
      // was refreshed and the POST sent again — the host got every answer above.
      expect(
        messages.every((r) => r.hadToken),
        JSON.stringify(log.mcp),
      ).toBe(true);
      expect(messages.at(-1)!.status).toBe(202);
      expect(new Set(messages.map((r) => r.token)).size).toBeGreaterThanOrEqual(2);
    } finally {
      await host.close();
      await serve.stop();
    }
  });

  it("no token: the session cannot open, and the host's error names the login to run", async () => {
    const serve = await startServe(
      ["--name", "legacy", "--url", upstream.sse, "--transport", "sse", "--auth", "oauth"],
      { MCPN_AUTH_DIR: join(dir, "none") },
    );
    try {
      const init = await post(
        `${serve.url}/mcp/legacy`,
        rpc(0, "initialize", {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "h", version: "1" },
        }),
      );
      expect(init.status).toBe(502);
      expect(JSON.stringify(init.messages)).toContain(
        `upstream \\"legacy\\" needs an OAuth login: run \\"mcp-normalizer login --url ${upstream.sse} --transport sse\\"`,
      );
    } finally {
      await serve.stop();
    }
  });
});

describe("login to a legacy SSE server that serves GET only and names its metadata only in its 401", () => {
  let upstream: OAuthUpstream;
  let dir: string;

  beforeAll(async () => {
    upstream = await startOAuthUpstream({ accessTtlS: 60, legacySse: true });
    dir = tempDir("mcpn-oauth-legacy-sse-");
  });

  afterAll(async () => {
    await stopStartedClis();
    await upstream.stop();
  });

  it("login NAME asks with the stream's GET, finds the other-origin authorization server, sends resource=, and serve then works", async () => {
    const env = { MCPN_AUTH_DIR: join(dir, "auth") };
    const config = writeConfig(dir, {
      mcpServers: { legacy: { url: upstream.sse, transport: "sse", auth: "oauth" } },
    });
    const login = startCli(["login", "legacy", "--config", config, "--no-browser"], env);
    const url = new URL(await login.authorizationUrl());
    expect(url.origin).toBe(new URL(upstream.authServer).origin);
    expect(url.searchParams.get("resource")).toBe(upstream.sse);
    const { response } = await approve(url.href);
    expect(response.status).toBe(200);
    expect(await login.exited(), login.stderr()).toBe(0);
    expect(login.stderr()).not.toContain("may need no login");
    const log = await upstream.log();
    // Asked as the session opens its stream (GET, answered 401), never with a POST it refuses.
    const asked = log.mcp.filter((r) => r.path === "/sse");
    expect(asked[0], JSON.stringify(log.mcp)).toMatchObject({ method: "GET", status: 401, hadToken: false });
    expect(asked.some((r) => r.method !== "GET")).toBe(false);
    expect(log.grants.at(-1)).toMatchObject({ grant_type: "authorization_code", resource: upstream.sse });

    const serve = await startServe(["--config", config], env);
    const host = await connect(hostTransport("mcp", { url: serve.url, name: "legacy" }));
    try {
      expect(text(await host.client.callTool({ name: "whoami", arguments: {} }))).toMatch(/^client /);
    } finally {
      await host.close();
      await serve.stop();
    }
  });

  it("an SSE server that needs no login is named by what its stream's GET answered (200), its stream let go at once", async () => {
    const plain = await startServe(["--name", "fx", "--", process.execPath, FIXTURE_SERVER]);
    try {
      const config = writeConfig(
        dir,
        { mcpServers: { open: { url: `${plain.url}/sse/fx`, transport: "sse", auth: "oauth" } } },
        "open.json",
      );
      const run = startCli(["login", "open", "--config", config, "--no-browser"], { MCPN_AUTH_DIR: join(dir, "o") });
      expect(await run.exited(10_000)).toBe(1);
      expect(run.stderr()).toMatch(/answered HTTP 200 to a request without a token, not 401: it may need no login/);
      expect(run.stderr()).not.toMatch(/no answer|timed out|aborted/i);
    } finally {
      await plain.stop();
    }
  });

  it("serve --url … --transport sse quotes login --url … --transport sse, and that login succeeds", async () => {
    const env = { MCPN_AUTH_DIR: join(dir, "by-url") };
    const serve = await startServe(
      ["--name", "legacy", "--url", upstream.sse, "--transport", "sse", "--auth", "oauth"],
      env,
    );
    try {
      const init = await post(
        `${serve.url}/mcp/legacy`,
        rpc(0, "initialize", {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "h", version: "1" },
        }),
      );
      expect(JSON.stringify(init.messages)).toContain(
        `run \\"mcp-normalizer login --url ${upstream.sse} --transport sse\\"`,
      );
    } finally {
      await serve.stop();
    }
    const login = await loginApproved(["--url", upstream.sse, "--transport", "sse"], env);
    expect(login.code, login.stderr()).toBe(0);
    expect((await upstream.log()).grants.at(-1)).toMatchObject({
      grant_type: "authorization_code",
      resource: upstream.sse,
    });
    const wrong = startCli(["login", "--url", upstream.sse, "--transport", "websocket"], env);
    expect(await wrong.exited()).toBe(2);
    expect(wrong.stderr()).toMatch(/--transport expects streamable-http or sse/);
  });
});
