/**
 * From a remote server's `auth` in the config to its OAuth layer (src/upstreamAuth): one per
 * server, shared by every session to it, so a refresh happens once and a token obtained by one
 * session serves the next. A server whose url or auth changed (SIGHUP) gets a new one.
 */
import type { ServerConfig, StdioServerConfig, UpstreamAuthConfig } from "../config/schema.js";
import { isStdioServer } from "../config/serverKind.js";
import type { Logger } from "../observe/logger.js";
import type { FetchLike } from "../transports/upstream/index.js";
import type { UpstreamAuth } from "../upstreamAuth/upstreamAuth.js";
import type { LoginPrompt, UpstreamAuthSpec } from "../upstreamAuth/types.js";
import { transportOfServer } from "./upstreamFactory.js";

export interface UpstreamAuthContext {
  /**
   * `$MCPN_AUTH_DIR` or `~/.mcp-normalizer/auth`; asked for when a server with `auth` is first
   * reached (it may refuse what the variable holds: only then does that matter).
   */
  readonly tokenDir: () => string;
  /** The command quoted in "needs an OAuth login" errors. */
  readonly loginCommand: (server: string, url: string, transport?: string) => string;
  readonly oauthRequestTimeoutMs: number;
  readonly logger: Logger;
  /** stdio only: run the browser login when no usable token is stored. */
  readonly interactive?: LoginPrompt | undefined;
  readonly fetch?: FetchLike | undefined;
}

export function authSpecOf(auth: UpstreamAuthConfig): UpstreamAuthSpec {
  if (auth === "oauth") return { grant: "authorization_code" };
  if (auth.grant === "client_credentials")
    return {
      grant: "client_credentials",
      clientId: auth.clientId,
      clientSecret: auth.clientSecret,
      issuer: auth.issuer,
      scopes: auth.scopes,
      allowHttp: auth.allowHttp,
    };
  return {
    grant: "authorization_code",
    clientId: auth.clientId,
    clientSecret: auth.clientSecret,
    issuer: auth.issuer,
    scopes: auth.scopes,
    callbackPort: auth.callbackPort,
    allowHttp: auth.allowHttp,
  };
}

/**
 * What the proxy uses of a server's OAuth layer. The layer's module (and the SDK's OAuth client
 * under it) is loaded on first use: a proxy whose servers have no `auth` never loads it.
 */
export interface UpstreamAuthLayer {
  readonly fetch: FetchLike;
  /** stdio: runs the browser login first when no usable token is stored (see `UpstreamAuth.prepare`). */
  prepare(): Promise<void>;
  /** The token values it sends (none before its module has loaded): removed wherever a server is quoted. */
  secrets(): Array<string | undefined>;
  /** Its requests fail for want of a login, and none has worked since. */
  needsLogin(): boolean;
}

/** Whether `server` is reached through an OAuth layer (a remote server with `auth`). */
export function hasAuth(server: ServerConfig): server is RemoteWithAuth {
  return !isStdioServer(server) && server.auth !== undefined;
}
type RemoteWithAuth = Exclude<ServerConfig, StdioServerConfig> & { auth: UpstreamAuthConfig };

export class UpstreamAuths {
  private readonly layers = new Map<string, { key: string; auth: UpstreamAuthLayer }>();

  constructor(private readonly context: UpstreamAuthContext) {}

  /** The OAuth layer of `server`, or undefined when it has no `auth`. */
  for(name: string, server: ServerConfig): UpstreamAuthLayer | undefined {
    if (!hasAuth(server)) return undefined;
    const key = JSON.stringify([server.url, server.auth, server.headers ?? {}]);
    const known = this.layers.get(name);
    if (known !== undefined && known.key === key) return known.auth;
    const transport = transportOfServer(server);
    const options = {
      server: name,
      url: server.url,
      spec: authSpecOf(server.auth),
      loginCommand: this.context.loginCommand(name, server.url, transport),
      tokenDir: this.context.tokenDir(),
      logger: this.context.logger,
      oauthRequestTimeoutMs: this.context.oauthRequestTimeoutMs,
      interactive: this.context.interactive,
      headers: server.headers,
      transport,
      fetch: this.context.fetch,
    };
    let loading: Promise<UpstreamAuth> | undefined;
    let loaded: UpstreamAuth | undefined;
    const load = (): Promise<UpstreamAuth> =>
      (loading ??= import("../upstreamAuth/upstreamAuth.js").then(
        ({ UpstreamAuth }) => (loaded = new UpstreamAuth(options)),
      ));
    const auth: UpstreamAuthLayer = {
      fetch: async (url, init) => (await load()).fetch(url, init),
      prepare: async () => (await load()).prepare(),
      secrets: () => loaded?.secrets() ?? [],
      needsLogin: () => loaded?.needsLogin ?? false,
    };
    this.layers.set(name, { key, auth });
    return auth;
  }

  /** The servers whose requests fail for want of an OAuth login. */
  needingLogin(): string[] {
    return [...this.layers].filter(([, layer]) => layer.auth.needsLogin()).map(([name]) => name);
  }
}
