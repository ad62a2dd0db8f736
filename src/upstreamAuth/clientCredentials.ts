/**
 * Client credentials (machine to machine): the SDK's `ClientCredentialsProvider` run through
 * `auth()`. Discovery (resource metadata → authorization server) happens first, here, so
 * `auth()` does not discover a second time; an authorization server the MCP server names that is
 * not the configured issuer is asked nothing (discovery.ts), and the provider is bound to that
 * issuer (`expectedIssuer`): the secret is presented to no other.
 */
import { auth, type OAuthDiscoveryState, type OAuthServerInfo } from "@modelcontextprotocol/sdk/client/auth.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { discoverServerInfo } from "./discovery.js";
import type { Challenge, ClientCredentialsSpec, FetchLike } from "./types.js";

/** A client-credentials provider that already knows where its authorization server is. */
class DiscoveredClientCredentials extends ClientCredentialsProvider {
  constructor(
    spec: ClientCredentialsSpec,
    private readonly info: OAuthServerInfo,
  ) {
    const scope = spec.scopes !== undefined && spec.scopes.length > 0 ? spec.scopes.join(" ") : undefined;
    super({
      clientId: spec.clientId,
      clientSecret: spec.clientSecret,
      clientName: "mcp-normalizer",
      // The configured issuer: the secret goes to no other (the MCP server names the server it
      // discovers, and a hostile one would name its own).
      expectedIssuer: spec.issuer ?? info.authorizationServerUrl,
      ...(scope === undefined ? {} : { scope }),
    });
  }

  discoveryState(): OAuthDiscoveryState {
    return this.info;
  }

  saveDiscoveryState(): void {}
}

export interface ClientCredentialsResult {
  readonly tokens: OAuthTokens;
  /** Kept by the caller for the next token: no discovery again. */
  readonly info: OAuthServerInfo;
}

export async function requestClientCredentialsToken(
  serverUrl: string,
  spec: ClientCredentialsSpec,
  fetch: FetchLike,
  known: OAuthServerInfo | undefined,
  challenge: Challenge | undefined,
): Promise<ClientCredentialsResult> {
  const info =
    known ??
    (await discoverServerInfo(serverUrl, {
      fetchFn: fetch,
      resourceMetadataUrl: challenge?.resourceMetadataUrl,
      issuer: spec.issuer,
    }));
  const provider = new DiscoveredClientCredentials(spec, info);
  const result = await auth(provider, { serverUrl, fetchFn: fetch });
  const tokens = provider.tokens();
  if (result !== "AUTHORIZED" || tokens === undefined) throw new Error("the authorization server gave no token");
  return { tokens, info };
}
