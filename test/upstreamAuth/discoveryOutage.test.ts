/**
 * Discovery meeting a server that is down or throttling (429, 5xx) says so — an outage to try
 * again — instead of reading it as a server without metadata: that would guess the MCP server's
 * origin as its authorization server (then refuse it as not the configured issuer, or send a
 * login there) or a token endpoint the metadata never named.
 */
import { TemporarilyUnavailableError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { describe, expect, it } from "vitest";
import { discoverAuthorizationServer, discoverServerInfo } from "../../src/upstreamAuth/discovery.js";
import { authorizationServerMetadata } from "./helpers.js";

const AS = "https://auth.example.com";
const MCP = "https://mcp.example.com/mcp";

/** A fetch answering `status` for `throttled` paths, metadata for the authorization server's. */
function fetchWith(throttled: (url: URL) => boolean, status: number) {
  const asked: string[] = [];
  const fetchFn = async (input: string | URL): Promise<Response> => {
    const url = new URL(String(input));
    asked.push(url.href);
    if (throttled(url)) return new Response("slow down", { status });
    if (url.pathname.startsWith("/.well-known/oauth-protected-resource"))
      return Response.json({ resource: MCP, authorization_servers: [AS] });
    if (url.origin === AS && url.pathname.startsWith("/.well-known/"))
      return Response.json(authorizationServerMetadata(AS));
    return new Response("not found", { status: 404 });
  };
  return { fetchFn, asked };
}

describe("OAuth discovery during an outage", () => {
  it.each([429, 503])(
    "protected-resource metadata answered %s: an outage, not the origin guessed as issuer",
    async (status) => {
      const { fetchFn } = fetchWith((url) => url.pathname.includes("oauth-protected-resource"), status);
      const error = await discoverServerInfo(MCP, { fetchFn, issuer: AS }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TemporarilyUnavailableError);
      expect((error as Error).message).toContain(`HTTP ${status}`);
    },
  );

  it("protected-resource metadata not reached at all (refused, timed out): an outage, not the origin guessed", async () => {
    const { fetchFn: answering } = fetchWith(() => false, 200);
    const fetchFn = async (input: string | URL): Promise<Response> => {
      if (String(input).includes("oauth-protected-resource"))
        throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
      return answering(input);
    };
    const error = await discoverServerInfo(MCP, { fetchFn }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemporarilyUnavailableError);
    expect((error as Error).message).toMatch(/could not load OAuth metadata from .*ECONNREFUSED/);
  });

  it("the proxy's own refusal of an address (plain http, link-local) is no outage: the origin is used, as before", async () => {
    const { fetchFn: answering } = fetchWith(() => false, 200);
    const fetchFn = async (input: string | URL): Promise<Response> => {
      if (String(input).includes("oauth-protected-resource")) throw new Error("is plain http: not requested");
      return answering(input);
    };
    const info = await discoverServerInfo(MCP, { fetchFn });
    expect(info.authorizationServerUrl).toBe("https://mcp.example.com/");
  });

  it("an address that failed before one that answered hides nothing that answer says", async () => {
    const fetchFn = async (input: string | URL): Promise<Response> => {
      const url = new URL(String(input));
      if (url.pathname.includes("oauth-authorization-server")) throw new TypeError("fetch failed");
      return Response.json({ issuer: AS, note: "no endpoints: not metadata" });
    };
    const error = await discoverAuthorizationServer(AS, fetchFn).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(TemporarilyUnavailableError);
  });

  it("authorization-server metadata answered 429 at every address: an outage, not a server without metadata", async () => {
    const { fetchFn, asked } = fetchWith((url) => url.origin === AS, 429);
    const error = await discoverAuthorizationServer(AS, fetchFn).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemporarilyUnavailableError);
    expect(asked.length).toBeGreaterThan(1);
  });

  it("a 429 at one address and a 404 at the next (passed over) is still an outage, on both discoveries", async () => {
    const { fetchFn: asFetch } = fetchWith(
      (url) => url.origin === AS && url.pathname.includes("oauth-authorization-server"),
      429,
    );
    // The OpenID address of this authorization server has nothing: 404.
    const only429 = async (input: string | URL): Promise<Response> =>
      String(input).includes("openid-configuration") ? new Response("no", { status: 404 }) : asFetch(input);
    expect(await discoverAuthorizationServer(AS, only429).catch((e: unknown) => e)).toBeInstanceOf(
      TemporarilyUnavailableError,
    );
    // The path-aware protected-resource address throttled, the root one has none.
    const prm = async (input: string | URL): Promise<Response> => {
      const url = new URL(String(input));
      if (url.pathname === "/.well-known/oauth-protected-resource/mcp") return new Response("slow", { status: 429 });
      if (url.pathname.startsWith("/.well-known/oauth-protected-resource")) return new Response("no", { status: 404 });
      return asFetch(input);
    };
    expect(await discoverServerInfo(MCP, { fetchFn: prm, issuer: AS }).catch((e: unknown) => e)).toBeInstanceOf(
      TemporarilyUnavailableError,
    );
  });

  it("a server with none (404 everywhere) is one without metadata, as before", async () => {
    const { fetchFn } = fetchWith(() => false, 200);
    expect(await discoverAuthorizationServer("https://none.example.com", fetchFn)).toBeUndefined();
    const info = await discoverServerInfo(MCP, { fetchFn });
    expect(info.authorizationServerUrl).toBe(AS);
  });
});
