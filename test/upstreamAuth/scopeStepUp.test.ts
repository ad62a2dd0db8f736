/**
 * Step-up authorization: a server that answers a token without enough scope with 403
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="read admin"`. The OAuth layer is
 * driven directly against an authorization server and MCP endpoint of the test's own (node:http;
 * a pre-registered client, the "user" approves at once): in stdio (interactive) it logs in again
 * asking for the wider scope and sends the request again; elsewhere the request fails naming the
 * scope, which the token file remembers for the next login; a 403 for scope already asked for is
 * the server's answer.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { UpstreamAuth } from "../../src/upstreamAuth/upstreamAuth.js";
import { readLogin, tokenFilePath, writeLogin } from "../../src/upstreamAuth/tokenStore.js";
import type { LoginPrompt } from "../../src/upstreamAuth/types.js";
import { tempDir } from "../helpers/tempDir.js";
import { authorizationServerMetadata, serversClosedAfterEach, oauthLayer } from "./helpers.js";

interface ScopedServer {
  readonly base: string;
  /** The `scope` of every authorization request. */
  readonly authorizations: string[];
  /** The status each MCP request was answered with. */
  readonly answers: number[];
}

const servers = serversClosedAfterEach();

/**
 * Tokens are `AT:<scope>`; the MCP endpoint wants every scope of `needed` in the token's, and its
 * 403 names `challenged` (what a server names varies: all it needs, or what the token lacks). A
 * POST whose body says `"slow"` is answered after 500 ms.
 */
async function startScopedServer(needed = "read admin", challenged = needed): Promise<ScopedServer> {
  const authorizations: string[] = [];
  const answers: number[] = [];
  const codes = new Map<string, string>();
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const url = new URL(req.url ?? "/", base);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    if (url.pathname.startsWith("/.well-known/oauth-protected-resource"))
      return json(200, { resource: `${base}/mcp`, authorization_servers: [base], scopes_supported: ["read", "admin"] });
    if (url.pathname.startsWith("/.well-known/oauth-authorization-server"))
      return json(200, authorizationServerMetadata(base));
    if (url.pathname === "/authorize") {
      const scope = url.searchParams.get("scope") ?? "";
      authorizations.push(scope);
      const code = `code-${authorizations.length}`;
      codes.set(code, scope);
      const back = new URL(url.searchParams.get("redirect_uri")!);
      back.searchParams.set("code", code);
      back.searchParams.set("state", url.searchParams.get("state") ?? "");
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === "/token") {
      const scope = codes.get(new URLSearchParams(body).get("code") ?? "");
      if (scope === undefined) return json(400, { error: "invalid_grant" });
      return json(200, { access_token: `AT:${scope}`, token_type: "Bearer", expires_in: 3600, scope });
    }
    if (url.pathname === "/mcp") {
      if (body.includes("slow")) await new Promise((resolve) => setTimeout(resolve, 500));
      const granted = new Set((req.headers.authorization ?? "").replace(/^Bearer AT:/, "").split(" "));
      // A request may name what it needs (one tool needs more than another).
      const asks = /"needs":"([^"]*)"/.exec(body)?.[1];
      const enough = (asks ?? needed).split(" ").every((scope) => granted.has(scope));
      answers.push(enough ? 200 : 403);
      if (enough) return json(200, { jsonrpc: "2.0", id: 1, result: {} });
      return json(
        403,
        { error: "insufficient_scope" },
        {
          "www-authenticate": `Bearer error="insufficient_scope", scope="${asks ?? challenged}", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
        },
      );
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, authorizations, answers };
}

/**
 * A token directory holding a login that asked for `scope` (its token: `AT:<scope>`); `oldFormat`:
 * as versions before step-up stored it, with only the scope the server granted.
 */
async function loginWithScope(base: string, url: string, scope: string, oldFormat = false): Promise<string> {
  const dir = tempDir();
  await writeLogin(tokenFilePath(dir, url), dir, {
    version: 1,
    server: url,
    issuer: base,
    client: { client_id: "proxy" },
    registered: false,
    tokens: { access_token: `AT:${scope}`, token_type: "Bearer", scope },
    ...(oldFormat ? {} : { scope }),
    obtainedAt: Date.now(),
    expiresAt: Date.now() + 3_600_000,
  });
  return dir;
}

/** The "browser": follows the authorization URL to the proxy's loopback callback. */
const approvingBrowser: LoginPrompt = {
  announce: (authorizationUrl) => {
    void fetch(authorizationUrl).then((response) => response.text());
  },
  openBrowser: false,
  timeoutMs: 10_000,
};

function layer(url: string, tokenDir: string, interactive?: LoginPrompt): UpstreamAuth {
  return oauthLayer(url, tokenDir, { spec: { grant: "authorization_code", clientId: "proxy" }, interactive });
}

const post = (auth: UpstreamAuth, url: string, body = "{}") =>
  auth.fetch(url, { method: "POST", body, signal: AbortSignal.timeout(15_000) });

describe("a 403 insufficient_scope (step-up authorization)", () => {
  it("stdio: logs in again asking for the wider scope, and the request goes through", async () => {
    const server = await startScopedServer();
    const url = `${server.base}/mcp`;
    const dir = await loginWithScope(server.base, url, "read");
    const response = await post(layer(url, dir, approvingBrowser), url);
    expect(response.status).toBe(200);
    expect(server.authorizations).toEqual(["read admin"]);
    expect(server.answers).toEqual([403, 200]);
    const stored = (await readLogin(tokenFilePath(dir, url))).login;
    expect(stored?.tokens.access_token).toBe("AT:read admin");
    expect(stored?.scope).toBe("read admin");
  });

  it("stdio: a second step-up right after the first logs in again (the first's token went through)", async () => {
    const server = await startScopedServer();
    const url = `${server.base}/mcp`;
    const dir = await loginWithScope(server.base, url, "read");
    const auth = layer(url, dir, approvingBrowser);
    expect((await post(auth, url, '{"needs":"read admin"}')).status).toBe(200);
    expect((await post(auth, url, '{"needs":"read write"}')).status).toBe(200);
    expect(server.authorizations.length).toBe(2);
    expect(server.authorizations[0]).toBe("read admin");
    expect(server.authorizations[1]?.split(" ").sort()).toEqual(["admin", "read", "write"]);
    expect(server.answers).toEqual([403, 200, 403, 200]);
  });

  it("serve: the request fails naming the scope and the login; the token file remembers it for that login", async () => {
    const server = await startScopedServer();
    const url = `${server.base}/mcp`;
    const dir = await loginWithScope(server.base, url, "read");
    await expect(post(layer(url, dir), url)).rejects.toThrow(
      /needs an OAuth login \(it asks for the scope "read admin".*\): run "mcp-normalizer login remote"/,
    );
    expect((await readLogin(tokenFilePath(dir, url))).login?.wantedScope).toBe("read admin");
    // `login` (here: the interactive layer, as the login command runs the same flow) asks for it.
    const response = await post(layer(url, dir, approvingBrowser), url);
    expect(response.status).toBe(200);
    expect(server.authorizations).toEqual(["read admin"]);
  });

  it("a 403 for scope the login already asked for is the server's answer: passed on, no new login", async () => {
    const server = await startScopedServer();
    const url = `${server.base}/mcp`;
    const dir = await loginWithScope(server.base, url, "read");
    // The login asked for both; the authorization server granted `read` only.
    const file = tokenFilePath(dir, url);
    await writeLogin(file, dir, { ...(await readLogin(file)).login!, scope: "read admin" });
    const response = await post(layer(url, dir, approvingBrowser), url);
    expect(response.status).toBe(403);
    expect(server.authorizations).toEqual([]);
  });

  it("a login stored before step-up (granted scope only), a 403 naming what it lacks: one login keeps both", async () => {
    const server = await startScopedServer("read admin", "admin");
    const url = `${server.base}/mcp`;
    const dir = await loginWithScope(server.base, url, "read", true);
    expect((await post(layer(url, dir, approvingBrowser), url)).status).toBe(200);
    expect(server.authorizations).toEqual(["admin read"]);
  });

  it("a 403 to a request sent before another's step-up login is sent again with the new token", async () => {
    const server = await startScopedServer();
    const url = `${server.base}/mcp`;
    const auth = layer(url, await loginWithScope(server.base, url, "read"), approvingBrowser);
    const slow = post(auth, url, '{"slow":true}');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await post(auth, url)).status).toBe(200);
    expect((await slow).status).toBe(200);
    expect(server.authorizations).toEqual(["read admin"]);
  });

  it("a 403 to the GET stream or a DELETE asks for nothing: passed on, nothing remembered", async () => {
    const server = await startScopedServer();
    const url = `${server.base}/mcp`;
    const dir = await loginWithScope(server.base, url, "read");
    const auth = layer(url, dir, approvingBrowser);
    for (const method of ["GET", "DELETE"])
      expect((await auth.fetch(url, { method, signal: AbortSignal.timeout(5_000) })).status).toBe(403);
    expect(server.authorizations).toEqual([]);
    expect((await readLogin(tokenFilePath(dir, url))).login?.wantedScope).toBeUndefined();
  });
});
