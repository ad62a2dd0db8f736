/**
 * `mcp-normalizer login` against a real authorization server and a protected SDK server:
 * discovery from the 401, dynamic registration, PKCE S256 and the resource indicator in the
 * authorization URL, the loopback callback and its state check, the token file (modes,
 * replacement), a pre-registered client on a configured callback port, and the timeout.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  approve,
  freePort,
  loginApproved,
  startCli,
  startOAuthUpstream,
  writeConfig,
  stopStartedClis,
  type OAuthUpstream,
} from "./helpers.js";
import { tempDir } from "../helpers/tempDir.js";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import { startServe } from "../helpers/proxyProcess.js";

describe("mcp-normalizer login", () => {
  let upstream: OAuthUpstream;
  let dir: string;
  let authDir: string;
  let configFile: string;
  let callbackPort: number;
  const env = (): Record<string, string> => ({ MCPN_AUTH_DIR: authDir });

  beforeAll(async () => {
    upstream = await startOAuthUpstream({
      accessTtlS: 60,
      clients: [
        {
          client_id: "pre-registered",
          client_secret: "pre-registered-secret-3c1d",
          redirect_uris: ["http://127.0.0.1/callback"],
          grant_types: ["authorization_code", "refresh_token"],
          token_endpoint_auth_method: "client_secret_post",
        },
      ],
    });
    dir = tempDir("mcpn-login-");
    authDir = join(dir, "auth", "tokens");
    callbackPort = await freePort();
    configFile = writeConfig(dir, {
      mcpServers: {
        prot: { url: upstream.mcp, auth: "oauth" },
        pre: {
          url: upstream.mcp,
          auth: {
            clientId: "pre-registered",
            clientSecret: "pre-registered-secret-3c1d",
            issuer: upstream.authServer,
            callbackPort,
            scopes: ["mcp:tools"],
          },
        },
        slow: { url: upstream.mcp, auth: "oauth" },
        machine: {
          url: upstream.mcp,
          auth: {
            grant: "client_credentials",
            clientId: "svc",
            clientSecret: "svc-secret",
            issuer: upstream.authServer,
          },
        },
        plain: { url: upstream.mcp },
        local: { command: "node", args: ["x.js"] },
      },
    });
  });

  afterAll(async () => {
    await stopStartedClis();
    await upstream.stop();
  });

  it("prints the URL on its own line, comes back through the loopback callback, stores the tokens in a 0600 file of a 0700 directory", async () => {
    const login = startCli(["login", "prot", "--config", configFile, "--no-browser"], env());
    const url = new URL(await login.authorizationUrl());
    // The authorization request: PKCE S256, state, and the RFC 8707 resource of the server.
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get("state")).toMatch(/^[\w-]{20,}$/);
    expect(url.searchParams.get("resource")).toBe(upstream.mcp);
    const redirect = new URL(url.searchParams.get("redirect_uri")!);
    expect(redirect.hostname).toBe("127.0.0.1");
    expect(redirect.pathname).toBe("/callback");
    const { response } = await approve(url.href);
    expect(response.status).toBe(200);
    expect(await login.exited()).toBe(0);
    const lines = login.stdout().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Logged in to "prot" .*tokens stored in /);
    // The listener is gone once the login is over.
    await expect(fetch(redirect)).rejects.toThrow();

    const files = readdirSync(authDir);
    expect(files).toHaveLength(1);
    const file = join(authDir, files[0]!);
    expect(lines[0]).toContain(file);
    expect(statSync(authDir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, "utf8")) as {
      tokens: { access_token: string; refresh_token: string };
      resource: string;
      registered: boolean;
    };
    expect(stored.tokens.access_token).toMatch(/^at-/);
    expect(stored.tokens.refresh_token).toMatch(/^rt-/);
    expect(stored.resource).toBe(upstream.mcp);
    expect(stored.registered).toBe(true);

    const log = await upstream.log();
    expect(log.registrations).toBe(1); // dynamic client registration: no client id configured
    expect(log.grants).toContainEqual(
      expect.objectContaining({ grant_type: "authorization_code", resource: upstream.mcp }),
    );
    expect(log.mcp[0]).toMatchObject({ method: "POST", status: 401, hadToken: false }); // discovery started from the 401
  });

  it("logging in again replaces the file (same file, new tokens) and reuses the registration", async () => {
    const [name] = readdirSync(authDir);
    const before = JSON.parse(readFileSync(join(authDir, name!), "utf8")) as { tokens: { access_token: string } };
    const again = await loginApproved(["prot", "--config", configFile], env());
    expect(again.code).toBe(0);
    expect(readdirSync(authDir)).toEqual([name]);
    const after = JSON.parse(readFileSync(join(authDir, name!), "utf8")) as { tokens: { access_token: string } };
    expect(after.tokens.access_token).not.toBe(before.tokens.access_token);
    expect(statSync(join(authDir, name!)).mode & 0o777).toBe(0o600);
    expect((await upstream.log()).registrations).toBe(1);
  });

  it("waits its turn behind a proxy renewing from the token file (its lock), then stores the login", async () => {
    const [name] = readdirSync(authDir);
    const file = join(authDir, name!);
    const tokenOf = () => (JSON.parse(readFileSync(file, "utf8")) as { tokens: { access_token: string } }).tokens;
    const before = tokenOf().access_token;
    // A live holder's lock, as a serve process holds it while its refresh is out.
    writeFileSync(`${file}.lock`, "held by a proxy");
    try {
      const login = startCli(["login", "prot", "--config", configFile, "--no-browser"], env());
      const { response } = await approve(await login.authorizationUrl());
      await response.text();
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(tokenOf().access_token).toBe(before);
      rmSync(`${file}.lock`);
      expect(await login.exited()).toBe(0);
      expect(tokenOf().access_token).not.toBe(before);
    } finally {
      rmSync(`${file}.lock`, { force: true });
    }
  });

  it("a pre-registered client: its callbackPort, no registration, its secret used but not stored", async () => {
    const registrations = (await upstream.log()).registrations;
    const login = startCli(["login", "pre", "--config", configFile, "--no-browser"], env());
    const url = new URL(await login.authorizationUrl());
    expect(url.searchParams.get("client_id")).toBe("pre-registered");
    expect(url.searchParams.get("redirect_uri")).toBe(`http://127.0.0.1:${callbackPort}/callback`);
    expect(url.searchParams.get("scope")).toBe("mcp:tools");
    await (await approve(url.href)).response.text();
    expect(await login.exited()).toBe(0);
    expect((await upstream.log()).registrations).toBe(registrations);
    const stored = readdirSync(authDir).map((f) => readFileSync(join(authDir, f), "utf8"));
    // Both servers share the URL, so one file: the pre-registered login replaced the other.
    expect(stored).toHaveLength(1);
    expect(JSON.parse(stored[0]!).client.client_id).toBe("pre-registered");
    expect(stored[0]).not.toContain("pre-registered-secret-3c1d");
  });

  it("a request to the callback without its state is refused (400, a bounded warning) and the login waits on for its own redirect", async () => {
    const login = startCli(["login", "prot", "--config", configFile, "--no-browser"], env());
    const authorize = await fetch(await login.authorizationUrl(), { redirect: "manual" });
    const real = new URL(authorize.headers.get("location")!);
    const code = real.searchParams.get("code")!;
    const stray = (query: string): Promise<Response> =>
      fetch(`${real.origin}${real.pathname}${query}`, { signal: AbortSignal.timeout(5000) });
    // A bare request, a stale tab's state with the real code, an error from another login, then a flood.
    const first = await stray("");
    expect(first.status).toBe(400);
    expect(await first.text()).toMatch(/still waits for its own redirect/);
    const forged = await stray(`?code=${code}&state=forged-state`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).not.toContain("forged-state");
    expect((await stray("?error=access_denied&state=other-login")).status).toBe(400);
    for (let i = 0; i < 30; i++) expect((await stray(`?code=c${i}&state=s${i}`)).status).toBe(400);
    expect(login.child.exitCode).toBeNull();

    const response = await fetch(real, { signal: AbortSignal.timeout(5000) });
    expect(response.status).toBe(200);
    expect(await login.exited()).toBe(0);
    expect(login.stdout()).toMatch(/^Logged in to "prot"/);
    const warnings = login
      .stderr()
      .split("\n")
      .filter((line) => line.startsWith("mcp-normalizer: warning:"));
    expect(warnings[0]).toMatch(/refused a request to the callback without a state .*still waiting for the browser/);
    expect(warnings[1]).toMatch(/refused a request to the callback whose state is not this login's/);
    expect(warnings).toHaveLength(5); // MAX_REFUSALS_LOGGED: a flood is answered, not logged
    expect(warnings.at(-1)).toMatch(/further refused requests are not logged$/);
    expect(login.stderr()).not.toMatch(/forged-state|other-login/);
    // Only the real redirect's code was exchanged.
    const log = await upstream.log();
    expect(log.grants.filter((g) => g.grant_type === "authorization_code")).toHaveLength(5);
  });

  it("no answer within limits.loginTimeoutMs: a clear error, exit 1 (the default is 5 minutes)", async () => {
    const timed = writeConfig(
      dir,
      { mcpServers: { slow: { url: upstream.mcp, auth: "oauth" } }, limits: { loginTimeoutMs: 1500 } },
      "timed.json",
    );
    const login = startCli(["login", "slow", "--config", timed, "--no-browser"], env());
    expect(login.stderr() + (await login.authorizationUrl())).toContain("http");
    expect(login.stderr()).toContain("waiting up to 1500 ms");
    const started = Date.now();
    expect(await login.exited()).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(login.stderr()).toMatch(
      /login to "slow": no answer from the browser within 1500 ms \(limits\.loginTimeoutMs\)/,
    );

    const defaults = startCli(["login", "prot", "--config", configFile, "--no-browser"], env());
    await defaults.authorizationUrl();
    expect(defaults.stderr()).toContain("waiting up to 5 minutes");
    defaults.child.kill("SIGTERM");
    await defaults.exited();
  });

  it("refuses what it cannot log in to, naming the server and the reason (exit 2)", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["machine"], /uses client credentials: the proxy gets its tokens itself/],
      [["plain"], /"plain" .* has no "auth"; add "auth": "oauth"/],
      [["local"], /"local" .* is a stdio server/],
      [["nope"], /has no server "nope" \(servers: prot, pre, slow, machine, plain, local\)/],
      [[], /name the server to log in to/],
    ];
    for (const [args, message] of cases) {
      const run = startCli(["login", ...args, "--config", configFile, "--no-browser"], env());
      expect(await run.exited(), args.join(" ")).toBe(2);
      expect(run.stderr()).toMatch(message);
    }
    const both = startCli(["login", "prot", "--url", upstream.mcp], env());
    expect(await both.exited()).toBe(2);
    expect(both.stderr()).toMatch(/either NAME .* or --url URL, not both/);
    // The login command an error shows for a URL with a query, pasted as it is.
    const placeholder = startCli(["login", "--url", `${upstream.mcp}?…`, "--no-browser"], env());
    expect(await placeholder.exited()).toBe(2);
    expect(placeholder.stderr()).toMatch(/--url ends with \?…: put the query of the server's URL/);
    // Tokens never cross a network in clear: plain http only to loopback from the command line.
    for (const command of [
      ["login", "--url", "http://10.255.255.1:9/mcp", "--no-browser"],
      ["stdio", "--url", "http://10.255.255.1:9/mcp", "--auth", "oauth"],
    ]) {
      const clear = startCli(command, env());
      expect(await clear.exited(), command[0]).toBe(2);
      expect(clear.stderr()).toMatch(/--url is plain http to a host that is not loopback: .* "allowHttp": true/);
      expect(clear.stderr().trimEnd().split("\n")).toHaveLength(1);
    }
  });

  it("--url of a server that needs no login: one line naming what it answered, no schema report (exit 1)", async () => {
    const plain = await startServe(["--name", "fx", "--", process.execPath, FIXTURE_SERVER]);
    try {
      const run = startCli(["login", "--url", `${plain.url}/mcp/fx`, "--no-browser"], env());
      expect(await run.exited()).toBe(1);
      const lines = run.stderr().trimEnd().split("\n");
      expect(lines, run.stderr()).toHaveLength(1);
      expect(lines[0]).toMatch(
        /failed: HTTP 404: not an OAuth answer \(.* answered HTTP 200 to a request without a token/,
      );
      expect(run.stderr()).not.toMatch(/invalid_type|Raw body/);
    } finally {
      await plain.stop();
    }
  });

  it("login --help says how it works, where tokens live and how to log out", async () => {
    const help = startCli(["login", "--help"], env());
    expect(await help.exited()).toBe(0);
    for (const words of [
      "--no-browser",
      "MCPN_AUTH_DIR",
      "~/.mcp-normalizer/auth",
      "0700",
      "0600",
      "deleting it logs out",
      "callbackPort",
      "5 minutes",
    ])
      expect(help.stdout()).toContain(words);
  });
});

describe("a server whose access tokens cannot be sent", () => {
  it("login refuses them (control characters), naming why; nothing is stored", async () => {
    const hostile = await startOAuthUpstream({ tokenSuffix: "\r\nX-Injected: yes" });
    try {
      const dir = tempDir("mcpn-login-ctl-");
      const authDir = join(dir, "auth");
      const configFile = writeConfig(dir, { mcpServers: { bad: { url: hostile.mcp, auth: "oauth" } } });
      const login = await loginApproved(["bad", "--config", configFile], { MCPN_AUTH_DIR: authDir });
      expect(login.code).toBe(1);
      expect(login.stderr()).toMatch(
        /access token with control characters, which cannot be sent in a header; nothing was stored/,
      );
      expect(login.stderr()).not.toContain("X-Injected");
      expect(readdirSync(authDir).filter((f) => !f.endsWith(".lock"))).toEqual([]);
    } finally {
      await stopStartedClis();
      await hostile.stop();
    }
  });
});
