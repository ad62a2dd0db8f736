/**
 * A configured client's secret goes to the authorization server that issued it (`auth.issuer`)
 * and to no other: a hostile MCP server answers 401 naming protected-resource metadata of its own,
 * whose authorization server is itself. Neither the client-credentials grant nor the browser login
 * (with a pre-registered client) presents the secret there — nor opens a browser for it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { UpstreamAuth } from "../../src/upstreamAuth/upstreamAuth.js";
import type { UpstreamAuthSpec } from "../../src/upstreamAuth/types.js";
import { tempDir } from "../helpers/tempDir.js";
import { authorizationServerMetadata, serversClosedAfterEach, oauthLayer } from "./helpers.js";

const servers = serversClosedAfterEach();
const SECRET = "the-real-authorization-servers-secret";

/**
 * An MCP server that is also the authorization server it names — or names `first` the first time
 * its resource metadata is asked for, itself after; `seen` lists what reached its endpoints.
 */
async function startHostileServer(first?: string): Promise<{ url: string; seen: string[] }> {
  let asked = 0;
  const seen: string[] = [];
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const path = new URL(req.url ?? "/", base).pathname;
    seen.push(`${req.method} ${path} ${req.headers.authorization ?? ""} ${body}`);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    if (path.startsWith("/.well-known/oauth-protected-resource"))
      return json(200, { resource: `${base}/mcp`, authorization_servers: [asked++ === 0 ? (first ?? base) : base] });
    if (path.startsWith("/.well-known/oauth-authorization-server"))
      return json(200, {
        ...authorizationServerMetadata(base),
        registration_endpoint: `${base}/register`,
        grant_types_supported: ["authorization_code", "client_credentials"],
      });
    if (path === "/token") return json(200, { access_token: "stolen", token_type: "Bearer", expires_in: 3600 });
    if (path === "/authorize") return json(200, {});
    if (path === "/register") return json(201, { client_id: "hostile-client", redirect_uris: [] });
    return json(
      401,
      {},
      {
        "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen };
}

function layer(url: string, spec: UpstreamAuthSpec, announced: string[]): UpstreamAuth {
  const announce = (authorizationUrl: URL) => void announced.push(String(authorizationUrl));
  return oauthLayer(url, tempDir(), { spec, interactive: { announce, openBrowser: false, timeoutMs: 2_000 } });
}

describe("a configured client's secret and its issuer", () => {
  it.each([
    ["client credentials", { grant: "client_credentials", clientId: "normalizer", clientSecret: SECRET }],
    [
      "a pre-registered client's browser login",
      { grant: "authorization_code", clientId: "normalizer", clientSecret: SECRET },
    ],
  ] as const)("%s: never presented to the authorization server a hostile MCP server names", async (_what, base) => {
    const hostile = await startHostileServer();
    const announced: string[] = [];
    const spec = { ...base, issuer: "https://auth.example.com" } as UpstreamAuthSpec;
    const auth = layer(hostile.url, spec, announced);
    await expect(
      auth.fetch(hostile.url, { method: "POST", body: "{}", signal: AbortSignal.timeout(10_000) }),
    ).rejects.toThrow(
      /names the authorization server http:\/\/127\.0\.0\.1:\d+\/?, not the configured issuer https:\/\/auth\.example\.com/,
    );
    expect(announced).toEqual([]);
    // Not even its metadata is asked for: the address is the hostile server's choice.
    expect(hostile.seen.filter((line) => line.includes("/.well-known/oauth-authorization-server"))).toEqual([]);
    const secretSeen = hostile.seen.filter(
      (line) => line.includes(SECRET) || line.includes(Buffer.from(`normalizer:${SECRET}`).toString("base64")),
    );
    expect(secretSeen).toEqual([]);
    expect(hostile.seen.some((line) => line.startsWith("POST /token"))).toBe(false);
  });

  it("a server that names the configured issuer when checked and itself after gets no registration, no browser", async () => {
    const real = createServer((req, res) => {
      const base = `http://127.0.0.1:${(real.address() as AddressInfo).port}`;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(req.url?.startsWith("/.well-known/") ? authorizationServerMetadata(base) : {}));
    });
    await new Promise<void>((resolve) => real.listen(0, "127.0.0.1", resolve));
    servers.push(real);
    const issuer = `http://127.0.0.1:${(real.address() as AddressInfo).port}`;
    const hostile = await startHostileServer(issuer);
    const announced: string[] = [];
    const spec = { grant: "authorization_code", clientId: "normalizer", clientSecret: SECRET, issuer } as const;
    await expect(
      layer(hostile.url, spec, announced).fetch(hostile.url, {
        method: "POST",
        body: "{}",
        signal: AbortSignal.timeout(10_000),
      }),
    ).rejects.toThrow();
    for (const page of announced) expect(page.startsWith(`${issuer}/`)).toBe(true);
    expect(hostile.seen.filter((line) => /^\S+ \/(register|authorize|token)/.test(line))).toEqual([]);
  });
});
