/**
 * What the OAuth layer in front of one remote upstream is told: how it gets tokens (the browser
 * flow or client credentials) and how it may reach a user. Plain data, so the layer does not
 * depend on the config schema; the proxy and the CLI translate a server entry into it.
 */
import type { FetchLike } from "../transports/upstream/streamableHttpUpstream.js";

export type { FetchLike };

/** Authorization code + PKCE; without `clientId` the client registers itself (RFC 7591). */
export interface AuthorizationCodeSpec {
  readonly grant: "authorization_code";
  readonly clientId?: string | undefined;
  readonly clientSecret?: string | undefined;
  /** The authorization server that issued `clientId`: the client is presented to no other. */
  readonly issuer?: string | undefined;
  readonly scopes?: readonly string[] | undefined;
  readonly callbackPort?: number | undefined;
  /** OAuth over plain http to a host that is not loopback (a network the operator trusts). */
  readonly allowHttp?: boolean | undefined;
}

/** Machine to machine: a token straight from the token endpoint. */
export interface ClientCredentialsSpec {
  readonly grant: "client_credentials";
  readonly clientId: string;
  readonly clientSecret: string;
  /** The authorization server that issued the client: the secret is presented to no other. */
  readonly issuer?: string | undefined;
  readonly scopes?: readonly string[] | undefined;
  /** OAuth over plain http to a host that is not loopback (a network the operator trusts). */
  readonly allowHttp?: boolean | undefined;
}

export type UpstreamAuthSpec = AuthorizationCodeSpec | ClientCredentialsSpec;

/** How a browser login reaches the user (the `login` command, or `stdio` without a usable token). */
export interface LoginPrompt {
  /** Shows the authorization URL for `server`'s login, on a line of its own. */
  announce(authorizationUrl: URL, server: string): void;
  /** Also opens it in the system browser. */
  readonly openBrowser: boolean;
  /** How long to wait for the browser to come back to the callback. */
  readonly timeoutMs: number;
}

/** What a 401's `WWW-Authenticate: Bearer` said: where the resource's metadata is, which scope. */
export interface Challenge {
  readonly resourceMetadataUrl?: URL | undefined;
  readonly scope?: string | undefined;
}
