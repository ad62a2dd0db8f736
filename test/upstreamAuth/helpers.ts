/**
 * Helpers of the OAuth tests: the OAuth-protected upstream (test/fixtures/oauth/oauth-upstream.mjs)
 * as a child process, `mcp-normalizer login` as a child process whose authorization URL is read
 * from stderr, and the "browser": following that URL to the authorization server (which
 * approves at once) and on to the login's loopback callback, with fetch.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Server } from "node:http";
import { afterEach } from "vitest";
import { silentLogger } from "../../src/observe/logger.js";
import { UpstreamAuth, type UpstreamAuthOptions } from "../../src/upstreamAuth/upstreamAuth.js";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { CLI, ROOT } from "../helpers/paths.js";

export const OAUTH_UPSTREAM = join(ROOT, "test", "fixtures", "oauth", "oauth-upstream.mjs");

/**
 * The OAuth layer of a server named "remote" at `url`, driven directly (no proxy around it):
 * the browser flow with a registered-on-the-fly client unless `options` say otherwise.
 */
export function oauthLayer(url: string, tokenDir: string, options: Partial<UpstreamAuthOptions> = {}): UpstreamAuth {
  return new UpstreamAuth({
    server: "remote",
    url,
    spec: { grant: "authorization_code" },
    loginCommand: "mcp-normalizer login remote",
    tokenDir,
    logger: silentLogger,
    oauthRequestTimeoutMs: 5_000,
    ...options,
  });
}

/** RFC 8414 metadata of a test's own authorization server at `base`: code + PKCE S256, refresh, public clients. */
export function authorizationServerMetadata(base: string): Record<string, unknown> {
  return {
    issuer: base,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    response_types_supported: ["code"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
  };
}

/**
 * Answers the OAuth discovery a protected server on `base` needs (its protected-resource
 * metadata naming itself as authorization server, and `metadata` as that server's); false for
 * any other path.
 */
export function answeredDiscovery(
  path: string,
  base: string,
  json: (status: number, value: unknown) => void,
  metadata: Record<string, unknown>,
): boolean {
  if (path.startsWith("/.well-known/oauth-protected-resource")) {
    json(200, { resource: `${base}/mcp`, authorization_servers: [base] });
    return true;
  }
  if (path.startsWith("/.well-known/oauth-authorization-server") || path.startsWith("/.well-known/openid")) {
    json(200, metadata);
    return true;
  }
  return false;
}

/** A list the test file's own node:http servers go in: each is closed after the test that made it. */
export function serversClosedAfterEach(): Server[] {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  return servers;
}

export interface FixtureLog {
  grants: Array<{ grant_type: string; client_id: string; resource?: string; ok?: boolean }>;
  authorizations: Array<{
    client_id: string;
    resource?: string;
    scopes: string[];
    hasState: boolean;
    redirectUri: string;
  }>;
  registrations: number;
  /** The MCP server's requests; `token`: the bearer token it was shown. */
  mcp: Array<{ method: string; path: string; status: number; hadToken: boolean; token?: string }>;
  secrets: string[];
}

export interface OAuthUpstream {
  readonly authServer: string;
  /** The streamable HTTP endpoint. */
  readonly mcp: string;
  /** The legacy SSE endpoint (a resource of its own). */
  readonly sse: string;
  log(): Promise<FixtureLog>;
  revokeAccess(): Promise<void>;
  revokeRefresh(): Promise<void>;
  stop(): Promise<void>;
}

export interface FixtureOptions {
  accessTtlS?: number;
  clients?: Array<Record<string, unknown>>;
  /** Appended to every access token the fixture issues (a hostile server's token). */
  tokenSuffix?: string;
  /** /sse serves GET only and names its resource metadata only in its 401 (not at a well-known URL). */
  legacySse?: boolean;
}

export async function startOAuthUpstream(options: FixtureOptions = {}): Promise<OAuthUpstream> {
  const child = spawn(process.execPath, [OAUTH_UPSTREAM, JSON.stringify(options)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
  const urls = await new Promise<{ authServer: string; mcp: string; sse: string }>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(
      () => reject(new Error(`the OAuth fixture did not start in 15 s; stderr: ${err}`)),
      15_000,
    );
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const line = out.split("\n")[0];
      if (out.includes("\n") && line !== undefined) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as { authServer: string; mcp: string; sse: string });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the OAuth fixture exited with ${code}; stderr: ${err}`));
    });
  });
  const control = async (path: string): Promise<void> => {
    const response = await fetch(new URL(path, urls.authServer), { method: "POST" });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  };
  return {
    ...urls,
    log: async () => (await (await fetch(new URL("test/log", urls.authServer))).json()) as FixtureLog,
    revokeAccess: () => control("test/revoke-access"),
    revokeRefresh: () => control("test/revoke-refresh"),
    stop: () => stopChild(child),
  };
}

export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

export function writeConfig(dir: string, config: Record<string, unknown>, name = "proxy.config.json"): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** A port free right now (for a configured callbackPort). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The first line of `text` that is a URL and nothing else. */
export function urlLine(text: string): string | undefined {
  return text.split("\n").find((line) => /^https?:\/\/\S+$/.test(line));
}

export interface CliProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the authorization URL once it is printed on a line of its own. */
  authorizationUrl(timeoutMs?: number): Promise<string>;
  exited(timeoutMs?: number): Promise<number | null>;
}

const started = new Set<ChildProcess>();

/** Ends every CLI process `startCli` started that is still running (a failed test's leftovers). */
export async function stopStartedClis(): Promise<void> {
  await Promise.all([...started].map((child) => stopChild(child)));
  started.clear();
}

/** Runs the CLI as a child process, stdin closed. */
export function startCli(args: readonly string[], env: Record<string, string>, cwd?: string): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.add(child);
  child.once("exit", () => started.delete(child));
  let out = "";
  let err = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    authorizationUrl: (timeoutMs = 20_000) => waitForUrl(() => err, child, timeoutMs),
    exited: (timeoutMs = 20_000) =>
      bounded(
        exit,
        timeoutMs,
        () => `mcp-normalizer ${args.join(" ")} did not exit in ${timeoutMs} ms; stderr: ${err}`,
      ),
  };
}

export function waitForUrl(read: () => string, child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const url = urlLine(read());
      if (url === undefined) return;
      done();
      resolve(url);
    };
    const onExit = (): void => {
      done();
      reject(new Error(`exited before printing a URL; stderr: ${read()}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no authorization URL in ${timeoutMs} ms; stderr: ${read()}`));
    }, timeoutMs);
    const done = (): void => {
      clearTimeout(timer);
      child.stderr!.off("data", check);
      child.off("exit", onExit);
    };
    child.stderr!.on("data", check);
    child.on("exit", onExit);
    check();
  });
}

function bounded<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message())), ms))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The browser: GET the authorization URL (the server approves and redirects), then GET the
 * redirect target — the login's callback. Returns the callback's redirect URL and response.
 */
export async function approve(
  authorizationUrl: string,
  tamper?: (callback: URL) => void,
): Promise<{ callback: URL; response: Response }> {
  const authorize = await fetch(authorizationUrl, { redirect: "manual" });
  const location = authorize.headers.get("location");
  if (authorize.status !== 302 || location === null)
    throw new Error(`the authorization server answered ${authorize.status}: ${await authorize.text()}`);
  const callback = new URL(location);
  tamper?.(callback);
  const response = await fetch(callback);
  return { callback, response };
}

/** `mcp-normalizer login …` approved in the "browser"; resolves when it has exited. */
export async function loginApproved(
  args: readonly string[],
  env: Record<string, string>,
): Promise<CliProcess & { code: number | null }> {
  const login = startCli(["login", ...args, "--no-browser"], env);
  const url = await login.authorizationUrl();
  const { response } = await approve(url);
  await response.text();
  const code = await login.exited();
  return Object.assign(login, { code });
}
