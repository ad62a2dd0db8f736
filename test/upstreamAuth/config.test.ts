/**
 * The `auth` of a remote server in the config, and the token file's name: each shape accepted,
 * every mistake named by its JSON path; the login limits' defaults; one file per server URL
 * with nothing from userinfo or query in its name.
 */
import { describe, expect, it } from "vitest";
import { validateConfig } from "../../src/config/load.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { tokenFileName } from "../../src/upstreamAuth/tokenStore.js";
import { loginCommandFor } from "../../src/cli/oauthContext.js";

const server = (extra: Record<string, unknown>): unknown => ({
  mcpServers: { remote: { url: "https://mcp.example.com/mcp", ...extra } },
});
const errorOf = (raw: unknown): string => {
  try {
    validateConfig(raw, "proxy.config.json");
    return "valid";
  } catch (error) {
    return (error as Error).message;
  }
};

describe("auth in the config", () => {
  it("accepts the three shapes", () => {
    for (const auth of [
      "oauth",
      { clientId: "id" },
      {
        clientId: "id",
        clientSecret: "s",
        issuer: "https://auth.example.com",
        scopes: ["a", "b"],
        callbackPort: 33418,
      },
      { grant: "authorization_code", clientId: "id" },
      { scopes: ["read", "write"] },
      { callbackPort: 33418 },
      {
        grant: "client_credentials",
        clientId: "id",
        clientSecret: "s",
        issuer: "https://auth.example.com",
        scopes: ["x"],
      },
    ]) {
      expect(errorOf(server({ auth })), JSON.stringify(auth)).toBe("valid");
    }
  });

  it("names the field at fault", () => {
    expect(errorOf(server({ auth: "basic" }))).toContain('$.mcpServers.remote.auth: expects "oauth", {clientId');
    expect(errorOf(server({ auth: { grant: "client_credentials", clientId: "id" } }))).toContain(
      "$.mcpServers.remote.auth.clientSecret:",
    );
    expect(errorOf(server({ auth: { clientId: "id", callbackPort: 70000 } }))).toContain(
      "$.mcpServers.remote.auth.callbackPort:",
    );
    expect(errorOf(server({ auth: { grant: "client_credentials", clientId: "id", clientSecret: "s" } }))).toContain(
      "$.mcpServers.remote.auth.issuer: a clientSecret is presented only to the authorization server that issued it",
    );
    expect(errorOf(server({ auth: { clientId: "id", clientSecret: "s", issuer: "file:///etc/passwd" } }))).toContain(
      "$.mcpServers.remote.auth.issuer:",
    );
    expect(errorOf(server({ auth: { clientSecret: "s", scopes: ["a"] } }))).toContain(
      "$.mcpServers.remote.auth.clientSecret: a clientSecret needs its clientId",
    );
    expect(errorOf(server({ auth: { clientId: "id", bogus: true } }))).toContain(
      '$.mcpServers.remote.auth: unknown key "bogus"',
    );
    expect(errorOf({ mcpServers: { remote: { url: "wss://mcp.example.com/ws", auth: "oauth" } } })).toContain(
      "$.mcpServers.remote.auth: OAuth works with http(s) upstreams",
    );
    expect(errorOf(server({ auth: "oauth", headers: { Authorization: "Bearer x" } }))).toContain(
      '$.mcpServers.remote.headers: an "Authorization" header and "auth" together',
    );
    // Unchanged: an entry with neither command nor url.
    expect(errorOf({ mcpServers: { remote: { args: [] } } })).toContain(
      'a server needs either "command" (stdio) or "url"',
    );
  });

  it("plain http beyond loopback carries no OAuth unless allowHttp says the network is trusted", () => {
    const at = (url: string, auth: unknown): string => errorOf({ mcpServers: { remote: { url, auth } } });
    const clientCredentials = (issuer: string, extra = {}) => ({
      grant: "client_credentials",
      clientId: "id",
      clientSecret: "s",
      issuer,
      ...extra,
    });
    for (const url of ["http://mcp.internal/mcp", "http://10.0.0.5:8080/mcp", "http://[fd00::5]/mcp"])
      expect(at(url, "oauth"), url).toContain(
        '$.mcpServers.remote.url: with "auth", this URL is plain http to a host that is not loopback',
      );
    expect(at("https://mcp.example.com/mcp", clientCredentials("http://sso.internal"))).toContain(
      "$.mcpServers.remote.auth.issuer: is plain http to a host that is not loopback",
    );
    for (const url of ["http://127.0.0.1:3000/mcp", "http://127.0.0.2/mcp", "http://localhost/mcp", "http://[::1]/mcp"])
      expect(at(url, clientCredentials(url)), url).toBe("valid");
    expect(at("http://mcp.internal/mcp", { allowHttp: true })).toBe("valid");
    expect(at("http://mcp.internal/mcp", clientCredentials("http://sso.internal", { allowHttp: true }))).toBe("valid");
    expect(at("http://mcp.internal/mcp", { allowHttp: "yes" })).toContain("$.mcpServers.remote.auth");
    // Without auth, plain http is the operator's call as before.
    expect(errorOf({ mcpServers: { remote: { url: "http://mcp.internal/mcp" } } })).toBe("valid");
  });

  it("limits.loginTimeoutMs defaults to 5 minutes, limits.oauthRequestTimeoutMs to 30 s", () => {
    const config = ConfigSchema.parse(server({ auth: "oauth" }));
    expect(config.limits.loginTimeoutMs).toBe(300_000);
    expect(config.limits.oauthRequestTimeoutMs).toBe(30_000);
    expect(
      ConfigSchema.parse({ ...(server({}) as object), limits: { loginTimeoutMs: 1000 } }).limits.loginTimeoutMs,
    ).toBe(1000);
  });
});

describe("token file names", () => {
  it("one per server (scheme, host, port, path, query), nothing of the userinfo or query readable", () => {
    const name = tokenFileName("https://user:pw@mcp.example.com/mcp");
    expect(name).toMatch(/^mcp\.example\.com_443_mcp-[0-9a-f]{12}\.json$/);
    expect(name).not.toMatch(/pw/);
    expect(tokenFileName("https://mcp.example.com/mcp")).toBe(name);
    expect(tokenFileName("https://mcp.example.com/other")).not.toBe(name);
    expect(tokenFileName("http://mcp.example.com/mcp")).not.toBe(name);
    // Servers that differ only in their query are logged in to one by one.
    const work = tokenFileName("https://mcp.example.com/mcp?workspace=work&key=SECRETQUERY");
    const home = tokenFileName("https://mcp.example.com/mcp?workspace=home&key=SECRETQUERY");
    expect(work).toMatch(/^mcp\.example\.com_443_mcp-[0-9a-f]{12}\.json$/);
    expect(work).not.toMatch(/SECRETQUERY|workspace/);
    expect(new Set([name, work, home]).size).toBe(3);
  });

  it("the login command of a server given by URL never quotes its query", () => {
    const command = loginCommandFor(undefined);
    expect(command("remote", "https://mcp.example.com/mcp")).toBe(
      "mcp-normalizer login --url https://mcp.example.com/mcp",
    );
    expect(command("remote", "https://mcp.example.com/mcp?key=SECRETQUERY")).toBe(
      "mcp-normalizer login --url 'https://mcp.example.com/mcp?…'",
    );
  });
});
