/**
 * The OAuth layer's token renewal against a small authorization server of the test's own
 * (node:http: metadata and a token endpoint that rotates refresh tokens), the layer driven
 * directly: what it still redacts after a renewal, and how it meets another process that shares
 * its token file and refreshes at the same moment.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { utimesSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { UpstreamAuth } from "../../src/upstreamAuth/upstreamAuth.js";
import { readLogin, tokenFilePath, writeLogin, type StoredLogin } from "../../src/upstreamAuth/tokenStore.js";
import { tempDir } from "../helpers/tempDir.js";
import { authorizationServerMetadata, serversClosedAfterEach, oauthLayer } from "./helpers.js";

interface TokenServer {
  readonly base: string;
  /** Refresh grants seen, in order: the refresh token each presented and whether it was accepted. */
  readonly refreshes: Array<{ token: string; ok: boolean }>;
  /** Access tokens the MCP endpoint was sent. */
  readonly sent: string[];
  /** Access tokens the MCP endpoint refuses (401), as an expired or revoked one. */
  readonly refused: Set<string>;
}

const servers = serversClosedAfterEach();

/**
 * Issues `AT-n`/`RT-n` on each accepted refresh; a refresh token works once (rotation). The token
 * endpoint answers after `answerDelayMs`, but takes the refresh token at once — as a server that
 * rotates in its database before it replies.
 */
async function startTokenServer(
  answerDelayMs = 0,
  outages: Array<[number, string]> = [],
  tokenSuffix = "",
  /** Statuses the metadata answers with first, one per request (the whole server down). */
  metadataOutages: number[] = [],
  /** Where its metadata puts the token endpoint (not where a client guesses it without metadata). */
  tokenPath = "/token",
): Promise<TokenServer> {
  let issued = 1;
  const valid = new Set(["RT-1"]);
  const refreshes: Array<{ token: string; ok: boolean }> = [];
  const sent: string[] = [];
  const refused = new Set(["AT-1"]);
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    const path = new URL(req.url ?? "/", base).pathname;
    if (path.startsWith("/.well-known/") && metadataOutages.length > 0) {
      res.writeHead(metadataOutages.shift()!, { "content-type": "text/html" });
      return res.end("<html>503 Service Temporarily Unavailable</html>");
    }
    if (path.startsWith("/.well-known/oauth-authorization-server"))
      return json(200, { ...authorizationServerMetadata(base), token_endpoint: `${base}${tokenPath}` });
    if (path === tokenPath && outages.length > 0) {
      // A load balancer's answer while the token service is down: plain text, not OAuth's JSON.
      const [status, text] = outages.shift()!;
      res.writeHead(status, { "content-type": "text/plain" });
      return res.end(text);
    }
    if (path === tokenPath) {
      const token = new URLSearchParams(body).get("refresh_token") ?? "";
      const ok = valid.delete(token);
      refreshes.push({ token, ok });
      let answer: [number, unknown] = [400, { error: "invalid_grant", error_description: "refresh token used" }];
      if (ok) {
        issued++;
        valid.add(`RT-${issued}`);
        answer = [
          200,
          {
            access_token: `AT-${issued}${tokenSuffix}`,
            refresh_token: `RT-${issued}`,
            token_type: "Bearer",
            expires_in: 3600,
          },
        ];
      }
      setTimeout(() => json(...answer), ok ? answerDelayMs : 0);
      return;
    }
    if (path === "/mcp") {
      const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
      sent.push(token);
      // No token, or the expired login's, is refused, as a protected server refuses them.
      if (refused.has(token) || token === "") return json(401, { error: "invalid_token" });
      return json(200, { jsonrpc: "2.0", id: 1, result: {} });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, refreshes, sent, refused };
}

/** A token directory holding an expired login (`AT-1`, refresh token `RT-1`) for `url`; `fresh`: one not expired. */
async function expiredLogin(issuer: string, url: string, fresh = false): Promise<string> {
  const dir = tempDir();
  const now = fresh ? Date.now() + 7_200_000 : Date.now();
  const login: StoredLogin = {
    version: 1,
    server: url,
    issuer,
    client: { client_id: "proxy" },
    registered: true,
    tokens: { access_token: "AT-1", refresh_token: "RT-1", token_type: "Bearer" },
    obtainedAt: now - 7_200_000,
    expiresAt: now - 3_600_000,
  };
  await writeLogin(tokenFilePath(dir, url), dir, login);
  return dir;
}

function layer(url: string, tokenDir: string): UpstreamAuth {
  return oauthLayer(url, tokenDir);
}

const post = (auth: UpstreamAuth, url: string) =>
  auth.fetch(url, { method: "POST", body: "{}", signal: AbortSignal.timeout(10_000) });

describe("OAuth token renewal", () => {
  it("still redacts the tokens it replaced: a request sent with one may be answered after the renewal", async () => {
    const server = await startTokenServer();
    const url = `${server.base}/mcp`;
    const auth = layer(url, await expiredLogin(server.base, url));
    expect((await post(auth, url)).status).toBe(200);
    expect(server.sent).toEqual(["AT-2"]);
    expect(auth.secrets()).toEqual(expect.arrayContaining(["AT-2", "RT-2", "AT-1", "RT-1"]));
  });

  it("two proxies on one token file renew in turn: the second uses the first's new token, nothing refused", async () => {
    // The server takes RT-1 from the first refresh at once and answers it 300 ms later: a second
    // refresh meanwhile would be refused at once, and find nothing new in the file yet.
    const server = await startTokenServer(300);
    const url = `${server.base}/mcp`;
    const dir = await expiredLogin(server.base, url);
    const [first, second] = [layer(url, dir), layer(url, dir)];
    const firstPost = post(first, url);
    while (server.refreshes.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const secondPost = post(second, url);
    const statuses = (await Promise.all([firstPost, secondPost])).map((response) => response.status);
    expect(statuses).toEqual([200, 200]);
    expect(server.refreshes).toEqual([{ token: "RT-1", ok: true }]);
    expect(server.sent).toEqual(["AT-2", "AT-2"]);
    expect((await readLogin(tokenFilePath(dir, url))).login?.tokens.refresh_token).toBe("RT-2");
  });

  it("a token another proxy stored, refused too (the server dropped every token), is refreshed: no login asked", async () => {
    const server = await startTokenServer();
    server.refused.clear();
    const url = `${server.base}/mcp`;
    const dir = await expiredLogin(server.base, url, true);
    const [first, second] = [layer(url, dir), layer(url, dir)];
    // Both hold AT-1; the server drops it, the first refreshes (AT-2), then the server drops that too.
    expect((await post(first, url)).status).toBe(200);
    expect((await post(second, url)).status).toBe(200);
    server.refused.add("AT-1");
    expect((await post(first, url)).status).toBe(200);
    server.refused.add("AT-2");
    expect((await post(second, url)).status).toBe(200);
    expect(server.sent).toEqual(["AT-1", "AT-1", "AT-1", "AT-2", "AT-1", "AT-2", "AT-3"]);
    expect(server.refreshes).toEqual([
      { token: "RT-1", ok: true },
      { token: "RT-2", ok: true },
    ]);
  });

  it("a lock left by a process that died (older than the wait) is taken over at once", async () => {
    const server = await startTokenServer();
    const url = `${server.base}/mcp`;
    const dir = await expiredLogin(server.base, url);
    const lock = `${tokenFilePath(dir, url)}.lock`;
    writeFileSync(lock, "");
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(lock, anHourAgo, anHourAgo);
    const started = performance.now();
    expect((await post(layer(url, dir), url)).status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(server.sent).toEqual(["AT-2"]);
  });

  it("a login stored while a refresh is out is kept and used, not overwritten by the refresh", async () => {
    const server = await startTokenServer(300);
    const url = `${server.base}/mcp`;
    const dir = await expiredLogin(server.base, url);
    const file = tokenFilePath(dir, url);
    const auth = layer(url, dir);
    const sending = post(auth, url);
    while (server.refreshes.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const now = Date.now();
    await writeLogin(file, dir, {
      ...(await readLogin(file)).login!,
      tokens: { access_token: "AT-login", refresh_token: "RT-login", token_type: "Bearer", scope: "read admin" },
      obtainedAt: now,
      expiresAt: now + 3_600_000,
    });
    expect((await sending).status).toBe(200);
    expect(server.sent).toEqual(["AT-login"]);
    expect((await readLogin(file)).login?.tokens.access_token).toBe("AT-login");
    // The refresh's own tokens were sent to no one, yet stay secrets (the server issued them).
    expect(auth.secrets()).toEqual(expect.arrayContaining(["AT-2", "RT-2", "AT-login"]));
  });

  it("a token endpoint that is down (HTTP 503, plain text) is an outage to try again, not a login to ask for", async () => {
    const server = await startTokenServer(0, [
      [503, "refresh broke: upstream connect error"],
      [429, "slow down"],
    ]);
    const url = `${server.base}/mcp`;
    const auth = layer(url, await expiredLogin(server.base, url));
    const error = await post(auth, url).then(
      () => "answered",
      (e: Error) => e.message,
    );
    expect(error).toMatch(/could not refresh its OAuth token \(.*HTTP 503.*not an OAuth answer\); it is tried again/);
    expect(error).not.toMatch(/needs an OAuth login|Raw body|refresh broke/);
    expect(auth.needsLogin).toBe(false);
    // A plain 429 (no OAuth JSON): an outage too, the refresh token kept.
    const limited = await post(auth, url).then(
      () => "answered",
      (e: Error) => e.message,
    );
    expect(limited).toMatch(/HTTP 429.*it is tried again/);
    expect(auth.needsLogin).toBe(false);
    expect((await post(auth, url)).status).toBe(200);
    expect(server.sent).toEqual(["AT-2"]);
  });

  it.each([
    ["HTTP 503", [503]],
    // The SDK passes over a 429 to the next address and finds no metadata when all say so.
    ["HTTP 429 at every address", [429, 429]],
  ])(
    "an authorization server down before its metadata was read (%s to the discovery) is an outage, not a login to ask for",
    async (_what, statuses) => {
      const server = await startTokenServer(0, [], "", statuses, "/oauth/token");
      const url = `${server.base}/mcp`;
      const auth = layer(url, await expiredLogin(server.base, url));
      const error = await post(auth, url).then(
        () => "answered",
        (e: Error) => e.message,
      );
      expect(error).toMatch(/could not refresh its OAuth token \(.*HTTP (503|429).*\); it is tried again/);
      expect(error).not.toMatch(/needs an OAuth login/);
      expect(auth.needsLogin).toBe(false);
      // Back up: the next request refreshes with the refresh token it kept.
      expect((await post(auth, url)).status).toBe(200);
      expect(server.refreshes).toEqual([{ token: "RT-1", ok: true }]);
    },
  );

  it("a refresh refused in words that are not OAuth's (a plain-text 400, an HTML 401) still asks for a login", async () => {
    for (const [status, text] of [
      [400, "bad request"],
      [401, "<html>denied</html>"],
    ] as Array<[number, string]>) {
      const server = await startTokenServer(0, [[status, text]]);
      const url = `${server.base}/mcp`;
      const auth = layer(url, await expiredLogin(server.base, url));
      const error = await post(auth, url).then(
        () => "answered",
        (e: Error) => e.message,
      );
      expect(error, String(status)).toMatch(
        new RegExp(`needs an OAuth login \\(.*HTTP ${status}: not an OAuth answer\\)`),
      );
      expect(auth.needsLogin).toBe(true);
    }
  });

  it("a refreshed token that cannot be sent (control characters) asks for a login, never sends or quotes it", async () => {
    const server = await startTokenServer(0, [], "\r\nX-Injected: yes");
    const url = `${server.base}/mcp`;
    const auth = layer(url, await expiredLogin(server.base, url));
    const error = await post(auth, url).then(
      () => "answered",
      (e: Error) => e.message,
    );
    expect(error).toMatch(/needs an OAuth login \(.*access token with control characters/);
    expect(error).not.toContain("X-Injected");
    expect(server.sent.some((token) => token.includes("X-Injected"))).toBe(false);
  });
});
