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
import { TemporarilyUnavailableError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type {
  AuthorizationServerMetadata,
  OAuthProtectedResourceMetadata,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { describeUrl, networkErrorText } from "../transports/upstream/upstreamMessages.js";
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

/**
 * A fetch that remembers an outage — a request that found its server down or throttling (429,
 * 5xx), or reached none — until an address answers.
 * The SDK's discovery tells such an answer only in its words, or passes over a 429 to the next
 * well-known address and finds nothing: either is an outage to try again, not a server without
 * metadata.
 */
function watchingOutages(fetchFn: FetchLike): { fetchFn: FetchLike; outage: () => string | undefined } {
  let outage: string | undefined;
  return {
    fetchFn: async (url, init) => {
      let response: Response;
      try {
        response = await fetchFn(url, init);
      } catch (error) {
        // Not reached at all (refused, reset, timed out, a name that does not resolve): the SDK
        // reads a failed fetch as a server without metadata too. The proxy's own refusals (plain
        // http, link-local, an answer too large) are no outage: they would never pass.
        outage = isUnreached(error)
          ? `could not load OAuth metadata from ${describeUrl(String(url))}: ${networkErrorText(error)}`
          : undefined;
        throw error;
      }
      if (response.status === 429 || response.status >= 500)
        outage = `HTTP ${response.status} trying to load OAuth metadata from ${describeUrl(String(url))}`;
      // An address that answered: an outage before it hides nothing it says. One passed over
      // (404, another 4xx: the SDK tries the next) leaves an outage before it standing.
      else if (response.ok) outage = undefined;
      return response;
    },
    outage: () => outage,
  };
}

/** A fetch that reached no server: undici's "fetch failed", or a timeout or abort. */
function isUnreached(error: unknown): boolean {
  const name = error instanceof Error ? error.name : "";
  return error instanceof TypeError || name === "TimeoutError" || name === "AbortError";
}

/** An authorization server's metadata (undefined: it has none); an outage is thrown as one. */
export async function discoverAuthorizationServer(
  issuer: string,
  fetchFn: FetchLike,
): Promise<AuthorizationServerMetadata | undefined> {
  const watch = watchingOutages(fetchFn);
  let found: AuthorizationServerMetadata | undefined;
  try {
    found = await discoverAuthorizationServerMetadata(issuer, { fetchFn: watch.fetchFn });
  } catch (error) {
    const outage = watch.outage();
    throw outage === undefined ? error : new TemporarilyUnavailableError(outage);
  }
  const outage = watch.outage();
  if (found === undefined && outage !== undefined) throw new TemporarilyUnavailableError(outage);
  return found;
}

export async function discoverServerInfo(serverUrl: string, options: DiscoveryOptions): Promise<OAuthServerInfo> {
  let resourceMetadata: OAuthProtectedResourceMetadata | undefined;
  let authorizationServerUrl: string | undefined;
  const watch = watchingOutages(options.fetchFn);
  try {
    resourceMetadata = await discoverOAuthProtectedResourceMetadata(
      serverUrl,
      options.resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl: options.resourceMetadataUrl },
      watch.fetchFn,
    );
    authorizationServerUrl = resourceMetadata.authorization_servers?.[0];
  } catch {
    // Down or throttling: not a server without metadata (its origin would be guessed as the authorization server).
    const outage = watch.outage();
    if (outage !== undefined) throw new TemporarilyUnavailableError(outage);
    // No RFC 9728 metadata: the MCP server's origin is its authorization server (as the SDK reads it).
  }
  authorizationServerUrl ??= String(new URL("/", serverUrl));
  if (options.issuer !== undefined && !sameIssuer(options.issuer, authorizationServerUrl))
    throw new OtherIssuerError(
      `the server names the authorization server ${describeUrl(authorizationServerUrl)}, not the configured ` +
        `issuer ${describeUrl(options.issuer)} (auth.issuer): its client is presented to no other, and that server ` +
        "was not asked anything",
    );
  const authorizationServerMetadata = await discoverAuthorizationServer(authorizationServerUrl, options.fetchFn);
  return { authorizationServerUrl, authorizationServerMetadata, resourceMetadata };
}
