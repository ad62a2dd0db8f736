/**
 * An authorization server (and the MCP server naming it) that misbehaves on purpose, against the
 * OAuth layer driven directly: a login page that is not a web page is never shown or opened, an
 * endless metadata body is cut off, a server that refuses every fresh token gets one browser login
 * a minute (not one per request), one asking for ever more scope does not grow the token file, and
 * escape sequences in its error text never reach the terminal.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { reportError } from "../../src/cli/main.js";
import { NormalizerError } from "../../src/errors/NormalizerError.js";
import { OAUTH_BODY_MAX_BYTES, timedFetch } from "../../src/upstreamAuth/oauthFetch.js";
import { tokenFilePath, writeLogin } from "../../src/upstreamAuth/tokenStore.js";
import type { LoginPrompt } from "../../src/upstreamAuth/types.js";
import type { UpstreamAuth } from "../../src/upstreamAuth/upstreamAuth.js";
import { tempDir } from "../helpers/tempDir.js";
import { authorizationServerMetadata, serversClosedAfterEach, oauthLayer } from "./helpers.js";

const servers = serversClosedAfterEach();

interface Behaviour {
  /** Where the metadata sends the browser. */
  authorizationEndpoint?: (base: string) => string;
  /** Metadata bodies of this many bytes (endless when Infinity). */
  metadataBytes?: number;
  /** What its registration endpoint answers (default: a client). */
  register?: { status: number; body: unknown };
  /** Where the metadata says tokens are issued (default: the server's own `/token`). */
  tokenEndpoint?: string;
  /** Where the 401's `resource_metadata` points (default: the server's own metadata). */
  resourceMetadata?: (base: string) => string;
  /** The MCP endpoint's answer to any token. */
  mcp?: (base: string, n: number) => { status: number; headers?: Record<string, string> };
}

/** An MCP server that is its own authorization server, behaving as told; `hits` counts requests by path. */
async function startServer(behaviour: Behaviour): Promise<{ url: string; base: string; hits: Map<string, number> }> {
  const hits = new Map<string, number>();
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    for await (const _ of req);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const url = new URL(req.url ?? "/", base);
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    if (url.pathname.startsWith("/.well-known/oauth-protected-resource"))
      return json(200, { resource: `${base}/mcp`, authorization_servers: [base] });
    if (url.pathname.startsWith("/.well-known/oauth-authorization-server")) {
      if (behaviour.metadataBytes !== undefined) {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"issuer":"');
        const chunk = "x".repeat(64 * 1024);
        let sent = 0;
        const more = (): void => {
          while (sent < behaviour.metadataBytes! && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", more);
          }
          res.end('"}');
        };
        return more();
      }
      const metadata = authorizationServerMetadata(base);
      if (behaviour.authorizationEndpoint !== undefined)
        metadata.authorization_endpoint = behaviour.authorizationEndpoint(base);
      if (behaviour.tokenEndpoint !== undefined) metadata.token_endpoint = behaviour.tokenEndpoint;
      if (behaviour.register !== undefined) metadata.registration_endpoint = `${base}/register`;
      return json(200, metadata);
    }
    if (url.pathname === "/authorize") {
      const back = new URL(url.searchParams.get("redirect_uri")!);
      back.searchParams.set("code", "a-code");
      back.searchParams.set("state", url.searchParams.get("state") ?? "");
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === "/register")
      return behaviour.register === undefined
        ? json(201, { client_id: "registered", redirect_uris: [] })
        : json(behaviour.register.status, behaviour.register.body);
    if (url.pathname === "/token")
      return json(200, { access_token: `AT-${hits.get("/token")}`, token_type: "Bearer", expires_in: 3600 });
    if (behaviour.resourceMetadata !== undefined)
      return json(401, {}, { "www-authenticate": `Bearer resource_metadata="${behaviour.resourceMetadata(base)}"` });
    const answer = behaviour.mcp?.(base, hits.get("/mcp") ?? 0) ?? { status: 200 };
    return json(answer.status, { jsonrpc: "2.0", id: 1, result: {} }, answer.headers);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: `${base}/mcp`, base, hits };
}

/** A browser that follows every URL it is shown, and remembers them. */
function browser(): LoginPrompt & { shown: string[] } {
  const shown: string[] = [];
  return {
    shown,
    announce: (url) => {
      shown.push(String(url));
      if (url.protocol === "http:")
        void fetch(url).then(
          (response) => response.text(),
          () => {},
        );
    },
    openBrowser: false,
    timeoutMs: 5_000,
  };
}

function layer(url: string, tokenDir: string, interactive?: LoginPrompt): UpstreamAuth {
  return oauthLayer(url, tokenDir, {
    spec: { grant: "authorization_code", clientId: "proxy" },
    oauthRequestTimeoutMs: 10_000,
    interactive,
  });
}

const post = (auth: UpstreamAuth, url: string) =>
  auth.fetch(url, { method: "POST", body: "{}", signal: AbortSignal.timeout(15_000) });

describe("a hostile authorization server", () => {
  it.each([
    "file:///C:/Windows/System32/calc.exe",
    "search-ms:query=x&crumb=location:\\\\attacker.example\\share",
    "http://attacker.example/authorize",
  ])("a login page at %s is never shown nor opened", async (page) => {
    const hostile = await startServer({ authorizationEndpoint: () => page, mcp: () => ({ status: 401 }) });
    const shown = browser();
    await expect(post(layer(hostile.url, tempDir(), shown), hostile.url)).rejects.toThrow(
      /login page is not an https URL|Invalid authorization_endpoint|authorization_endpoint/,
    );
    expect(shown.shown).toEqual([]);
  });

  it("a token endpoint over plain http beyond loopback gets neither the code nor the PKCE verifier", async () => {
    const hostile = await startServer({ tokenEndpoint: `${BEYOND_LOOPBACK}/token`, mcp: () => ({ status: 401 }) });
    const { fetch: network, requested } = recordingNetwork();
    const auth = oauthLayer(hostile.url, tempDir(), {
      spec: { grant: "authorization_code", clientId: "proxy" },
      fetch: network,
      interactive: browser(),
    });
    await expect(post(auth, hostile.url)).rejects.toThrow(/plain http to a host that is not loopback/);
    expect(hostile.hits.get("/authorize")).toBe(1);
    expect(requested.filter((url) => url.startsWith(BEYOND_LOOPBACK))).toEqual([]);
  });

  it("an answer that does not read, or an error with no description, is said in one line naming what it was", async () => {
    const failure = async (behaviour: Behaviour, spec: { clientId?: string } = {}): Promise<string> => {
      const hostile = await startServer({ mcp: () => ({ status: 401 }), ...behaviour });
      const auth = oauthLayer(hostile.url, tempDir(), {
        spec: { grant: "authorization_code", ...spec },
        interactive: browser(),
      });
      return post(auth, hostile.url).then(
        () => "answered",
        (error: Error) => error.message,
      );
    };
    const unreadable = await failure({ authorizationEndpoint: () => "not a url" }, { clientId: "proxy" });
    expect(unreadable).toMatch(/is not as the spec has it: authorization_endpoint: Invalid URL/);
    expect(unreadable).not.toMatch(/"code"|\[ *\{/);
    const bare = await failure({ register: { status: 400, body: { error: "invalid_client_metadata" } } });
    expect(bare).toMatch(/answered the error "invalid_client_metadata", with no description/);
    for (const message of [unreadable, bare]) expect(message.split("\n")).toHaveLength(1);
  });

  it("resource metadata at a link-local address (cloud instance metadata) is never requested", async () => {
    const hostile = await startServer({ resourceMetadata: () => "http://169.254.169.254/latest/meta-data/" });
    const requested: string[] = [];
    // The network, seen hop by hop: redirects followed here unless the caller follows them itself.
    const recording = async (url: string | URL, init?: RequestInit): Promise<Response> => {
      let target = String(url);
      for (;;) {
        requested.push(target);
        if (target.includes("169.254.")) throw new Error("reached for the instance metadata service");
        const response = await fetch(target, { ...init, redirect: "manual" });
        const location = response.headers.get("location");
        if (init?.redirect === "manual" || location === null || response.status < 300 || response.status > 399)
          return response;
        target = new URL(location, target).href;
      }
    };
    const auth = oauthLayer(hostile.url, tempDir(), {
      spec: { grant: "authorization_code" },
      fetch: recording,
      interactive: browser(),
    });
    await expect(post(auth, hostile.url)).rejects.toThrow();
    expect(requested.filter((url) => url.includes("169.254."))).toEqual([]);
    expect(requested.some((url) => url.endsWith("/mcp"))).toBe(true);
  });

  it("an endless metadata body is cut off past its limit, the request failing with why", async () => {
    const hostile = await startServer({ metadataBytes: 64 * OAUTH_BODY_MAX_BYTES, mcp: () => ({ status: 401 }) });
    const before = process.memoryUsage().rss;
    await expect(post(layer(hostile.url, tempDir(), browser()), hostile.url)).rejects.toThrow(/larger than/);
    expect(process.memoryUsage().rss - before).toBeLessThan(32 * OAUTH_BODY_MAX_BYTES);
  });

  it("a server refusing every fresh token gets one browser login, not one per request", async () => {
    const hostile = await startServer({ mcp: () => ({ status: 401 }) });
    const auth = layer(hostile.url, tempDir(), browser());
    for (let i = 0; i < 4; i++) await expect(post(auth, hostile.url)).rejects.toThrow(/needs an OAuth login/);
    expect(hostile.hits.get("/authorize")).toBe(1);
  });

  it("a server asking for ever more scope does not grow the token file", async () => {
    const hostile = await startServer({
      mcp: (_base, n) => ({
        status: 403,
        headers: {
          "www-authenticate": `Bearer error="insufficient_scope", scope="${Array.from({ length: 40 }, (_, i) => `s${n}-${i}`).join(" ")}"`,
        },
      }),
    });
    const dir = tempDir();
    const file = tokenFilePath(dir, hostile.url);
    await writeLogin(file, dir, {
      version: 1,
      server: hostile.url,
      issuer: hostile.base,
      client: { client_id: "proxy" },
      registered: false,
      tokens: { access_token: "AT-held", token_type: "Bearer" },
      scope: "read",
      obtainedAt: Date.now(),
    });
    const auth = layer(hostile.url, dir);
    for (let i = 0; i < 60; i++) await post(auth, hostile.url).catch(() => {});
    expect(statSync(file).size).toBeLessThan(8 * 1024);
  });

  it("escape sequences in what it wrote never reach the terminal", async () => {
    const stderr = new PassThrough();
    let printed = "";
    stderr.on("data", (chunk: Buffer) => (printed += chunk.toString("utf8")));
    const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env: {}, cwd: "/" };
    const description = "\u001b]0;PWNED\u0007\u001b[2J\u001b[1;31mall good\u009b0m\nsecond line";
    await reportError(new NormalizerError("UPSTREAM_AUTH_FAILED", `no token: ${description}`), io);
    const controls = [...printed].filter((c) => c !== "\n" && (c < " " || (c >= "\u007f" && c <= "\u009f")));
    expect(controls).toEqual([]);
    expect(printed).toContain("all good");
    expect(printed.trimEnd().split("\n")).toHaveLength(2);
  });
});

/** A host that is not loopback, over plain http; never reached by these tests (`recordingNetwork` stops it). */
const BEYOND_LOOPBACK = "http://10.255.255.1:9";

/** The network, request by request, refusing to reach `BEYOND_LOOPBACK`. */
function recordingNetwork(): { fetch: typeof fetch; requested: string[] } {
  const requested: string[] = [];
  return {
    requested,
    fetch: async (url, init) => {
      requested.push(String(url));
      if (String(url).startsWith(BEYOND_LOOPBACK)) throw new Error("reached a host beyond loopback over plain http");
      return fetch(url, init);
    },
  };
}

describe("the OAuth requests' own redirects", () => {
  it("are followed, each hop checked: a redirect to a link-local address is refused before any request", async () => {
    const server = createServer((req, res) => {
      if (req.url === "/moved") return void res.writeHead(302, { location: "/here" }).end();
      if (req.url === "/to-metadata") return void res.writeHead(307, { location: "http://169.254.169.254/" }).end();
      res.writeHead(200, { "content-type": "text/plain" }).end(`at ${req.url} by ${req.method}`);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const oauthFetch = timedFetch((url, init) => fetch(url, init), { timeoutMs: 5_000 });
    expect(await (await oauthFetch(`${base}/moved`, { method: "POST", body: "x" })).text()).toBe("at /here by GET");
    await expect(oauthFetch(`${base}/to-metadata`)).rejects.toThrow(/link-local address/);
    // The same address spelled in IPv6, and other clouds' metadata addresses: never asked.
    const asked: string[] = [];
    const never = timedFetch(
      async (url) => {
        asked.push(String(url));
        throw new Error("asked");
      },
      { timeoutMs: 5_000 },
    );
    for (const host of [
      "[::ffff:169.254.169.254]",
      "[::169.254.169.254]",
      "[64:ff9b::a9fe:a9fe]",
      "100.100.100.200",
      "192.0.0.192",
    ])
      await expect(never(`http://${host}/latest/meta-data/`), host).rejects.toThrow(/link-local address/);
    expect(asked).toEqual([]);
  });

  it("a hop to plain http beyond loopback is refused unless the server's auth has allowHttp", async () => {
    const server = createServer((_req, res) => void res.writeHead(307, { location: `${BEYOND_LOOPBACK}/token` }).end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const strict = recordingNetwork();
    const refusing = timedFetch(strict.fetch, { timeoutMs: 5_000 });
    await expect(refusing(`${base}/token`, { method: "POST", body: "code=c" })).rejects.toThrow(/plain http/);
    await expect(refusing(`${BEYOND_LOOPBACK}/token`)).rejects.toThrow(/plain http/);
    expect(strict.requested).toEqual([`${base}/token`]);
    const trusting = recordingNetwork();
    const allowing = timedFetch(trusting.fetch, { timeoutMs: 5_000, allowHttp: true });
    await expect(allowing(`${base}/token`, { method: "POST", body: "code=c" })).rejects.toThrow(/beyond loopback/);
    expect(trusting.requested).toEqual([`${base}/token`, `${BEYOND_LOOPBACK}/token`]);
  });
});
