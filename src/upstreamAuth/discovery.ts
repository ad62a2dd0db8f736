/**
 * Where an MCP server's OAuth is: its protected-resource metadata (RFC 9728) names the
 * authorization server, whose metadata is read next — the steps of the SDK's
 * `discoverOAuthServerInfo`, with one check between them. With a configured `issuer`, an
 * authorization server the MCP server names that is not it is refused before any request goes
 * to it (reading its metadata would be the first): a hostile or compromised MCP server cannot
 * send the proxy to an address of its choosing.
 */
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  type OAuthServerInfo,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import { describeUrl } from "../transports/upstream/upstreamMessages.js";
import { sameIssuer } from "./challenge.js";
import type { FetchLike } from "./types.js";

export interface DiscoveryOptions {
  readonly fetchFn: FetchLike;
  /** Where the server's 401 said its protected-resource metadata is. */
  readonly resourceMetadataUrl?: URL | undefined;
  /** The authorization server that issued the configured client (`auth.issuer`). */
  readonly issuer?: string | undefined;
}

/** The MCP server names an authorization server other than the configured issuer. */
export class OtherIssuerError extends Error {}

export async function discoverServerInfo(serverUrl: string, options: DiscoveryOptions): Promise<OAuthServerInfo> {
  let resourceMetadata: OAuthProtectedResourceMetadata | undefined;
  let authorizationServerUrl: string | undefined;
  try {
    resourceMetadata = await discoverOAuthProtectedResourceMetadata(
      serverUrl,
      options.resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl: options.resourceMetadataUrl },
      options.fetchFn,
    );
    authorizationServerUrl = resourceMetadata.authorization_servers?.[0];
  } catch {
    // No RFC 9728 metadata: the MCP server's origin is its authorization server (as the SDK reads it).
  }
  authorizationServerUrl ??= String(new URL("/", serverUrl));
  if (options.issuer !== undefined && !sameIssuer(options.issuer, authorizationServerUrl))
    throw new OtherIssuerError(
      `the server names the authorization server ${describeUrl(authorizationServerUrl)}, not the configured ` +
        `issuer ${describeUrl(options.issuer)} (auth.issuer): its client is presented to no other, and that server ` +
        "was not asked anything",
    );
  const authorizationServerMetadata = await discoverAuthorizationServerMetadata(authorizationServerUrl, {
    fetchFn: options.fetchFn,
  });
  return { authorizationServerUrl, authorizationServerMetadata, resourceMetadata };
}
