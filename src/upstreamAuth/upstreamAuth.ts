/**
 * The OAuth layer in front of one remote upstream, shared by every session to it: a `fetch`
 * for the upstream transports that sends `Authorization: Bearer` with the stored token (or a
 * client-credentials token), renews it when it expires or the server answers 401 (refresh once,
 * then the request is sent again: nothing is lost), and otherwise fails the request with an
 * error naming the server and the command that logs in — or, in `stdio`, runs the browser login
 * itself and then sends the request.
 *
 * Only requests to the upstream's own origin get the token; OPTIONS (the reachability probe)
 * goes without. Token values never appear in a log line or an error.
 */
import { refreshAuthorization, type OAuthServerInfo } from "@modelcontextprotocol/sdk/client/auth.js";
import {
  InvalidClientError,
  OAuthError,
  TemporarilyUnavailableError,
  TooManyRequestsError,
} from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { NormalizerError } from "../errors/NormalizerError.js";
import type { Logger } from "../observe/logger.js";
import { describeUrl } from "../transports/upstream/upstreamMessages.js";
import { discoverAuthorizationServer } from "./discovery.js";
import {
  addsScope,
  challengeOf,
  insufficientScopeOf,
  type ProbeTransport,
  probeChallenge,
  sameIssuer,
  scopeUnion,
} from "./challenge.js";
import { requestClientCredentialsToken } from "./clientCredentials.js";
import { runLoginFlow } from "./loginFlow.js";
import { basicCredentials } from "../errors/redact.js";
import { redactedMessage, timedFetch } from "./oauthFetch.js";
import { withFileLock } from "./fileLock.js";
import { loginWithTokens, readLogin, tokenFilePath, unsendable, writeLogin, type StoredLogin } from "./tokenStore.js";
import type { Challenge, FetchLike, LoginPrompt, UpstreamAuthSpec } from "./types.js";

export interface UpstreamAuthOptions {
  /** The server's name in the config, for messages. */
  readonly server: string;
  readonly url: string;
  readonly spec: UpstreamAuthSpec;
  /** Quoted in errors when a login is needed, e.g. `mcp-normalizer login NAME --config FILE`. */
  readonly loginCommand: string;
  readonly tokenDir: string;
  readonly logger: Logger;
  /** `limits.oauthRequestTimeoutMs`. */
  readonly oauthRequestTimeoutMs: number;
  /** stdio: a missing or dead login starts the browser flow instead of failing the request. */
  readonly interactive?: LoginPrompt | undefined;
  /** The server's configured headers (sent with the login's probe). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Its transport: a legacy SSE server is probed with the GET of its stream, not a POST. */
  readonly transport?: ProbeTransport | undefined;
  /** The network (tests); default the global fetch. */
  readonly fetch?: FetchLike | undefined;
  readonly now?: () => number;
}

interface Token {
  readonly access: string;
  readonly obtainedAt: number;
  readonly expiresAt?: number | undefined;
}

/** A token is renewed this long before it expires: a tenth of its lifetime, at most 30 s. */
const MAX_EXPIRY_MARGIN_MS = 30_000;
/**
 * Token values replaced (renewed, a new login) still redacted: a request sent with one may be
 * answered — and quote it — after it was replaced. Renewals are minutes apart; this many covers
 * every request still in flight.
 */
const RETIRED_SECRETS = 16;
/** After a browser login whose token no request got through with, how long before another opens. */
const RELOGIN_PAUSE_MS = 60_000;
/** The most scope (characters) a 403 `insufficient_scope` may have the next login ask for. */
const MAX_SCOPE_CHARS = 2048;

export class UpstreamAuth {
  /** The fetch to give the upstream transports. */
  readonly fetch: FetchLike;
  readonly tokenFile: string;
  private readonly base: FetchLike;
  private readonly oauthFetch: FetchLike;
  private readonly origin: string;
  private readonly logger: Logger;
  private readonly now: () => number;
  private login: StoredLogin | undefined;
  private deadRefreshToken: string | undefined;
  /**
   * A registered client the authorization server refused (`invalid_client`: it restarted with an
   * empty store, or purged the registration): the next login registers again instead of reusing
   * it, which would fail in the browser every time.
   */
  private rejectedClient: string | undefined;
  private clientToken: Token | undefined;
  private serverInfo: OAuthServerInfo | undefined;
  private challenge: Challenge | undefined;
  private renewing: Promise<Token | undefined> | undefined;
  private loggingIn: Promise<Token> | undefined;
  private lastProblem: string | undefined;
  /** Why the last refresh gave no token, for the "needs an OAuth login" error. */
  private refreshFailure: string | undefined;
  private readonly metadata = new Map<string, Promise<AuthorizationServerMetadata | undefined>>();
  /** The last browser login of this process: its token, when, and whether a request went through with it. */
  private lastLogin: { access: string; at: number; worked: boolean } | undefined;
  /** The last request failed for want of a login, and none has worked since (for `/healthz`). */
  private wantsLogin = false;
  /** The last token a renewal took from the file as it was (stored by another process or a login), not refreshed. */
  private adoptedUnrefreshed: string | undefined;
  /** Token values this layer held before the ones it holds now, newest last (`RETIRED_SECRETS`). */
  private readonly retired: string[] = [];

  constructor(private readonly options: UpstreamAuthOptions) {
    this.base = options.fetch ?? ((url, init) => fetch(url, init));
    this.oauthFetch = timedFetch(this.base, {
      timeoutMs: options.oauthRequestTimeoutMs,
      allowHttp: options.spec.allowHttp,
    });
    this.origin = new URL(options.url).origin;
    this.tokenFile = tokenFilePath(options.tokenDir, options.url);
    this.logger = options.logger.child({ oauth: options.server });
    this.now = options.now ?? Date.now;
    this.fetch = (url, init) => this.authorized(url, init);
  }

  /**
   * stdio, before the session starts: with no usable token and a server that answers 401, the
   * browser login runs now (the host's first request waits on stdin meanwhile).
   */
  async prepare(): Promise<void> {
    if (this.options.spec.grant !== "authorization_code" || this.options.interactive === undefined) return;
    try {
      if ((await this.usableToken()) !== undefined) return;
    } catch (error) {
      // The authorization server is unreachable for a refresh: the session starts, and each
      // request tries again (and says why when it cannot).
      this.logger.warn("OAuth token not refreshed before the session", { error: (error as Error).message });
      return;
    }
    let challenge: Challenge | undefined;
    try {
      challenge = await probeChallenge(this.options.url, this.oauthFetch, this.options.headers, this.options.transport);
    } catch {
      return; // unreachable: the session's start says so, with the cause
    }
    if (challenge === undefined) return; // it does not ask for a token (yet)
    this.challenge = challenge;
    await this.interactiveLogin(undefined);
  }

  private async authorized(url: string | URL, init: RequestInit | undefined): Promise<Response> {
    const method = (init?.method ?? "GET").toUpperCase();
    if (method === "OPTIONS" || new URL(url).origin !== this.origin) return this.base(url, init);
    let token = await this.usableToken();
    if (token === undefined) {
      if (this.challenge === undefined) {
        // Never refused yet: its 401 says where to authorize (and whether a token is needed at all).
        const response = await this.base(url, init);
        if (response.status !== 401) return response;
        await this.noteChallenge(response);
      }
      token = await this.obtain(method, init?.signal ?? undefined);
    }
    const response = await this.base(url, withBearer(init, token.access));
    if (response.status === 403) return this.stepUp(response, url, init, token);
    if (response.status !== 401) return this.served(response, token.access);
    await this.noteChallenge(response);
    this.logger.info("upstream refused its OAuth token (401); renewing it");
    let renewed = (await this.renew(token)) ?? (await this.obtain(method, init?.signal ?? undefined));
    let retried = await this.base(url, withBearer(init, renewed.access));
    if (retried.status === 401 && renewed.access === this.adoptedUnrefreshed) {
      // The token was another process's (or a login's) from the file, refused too — a server that
      // dropped every token it had issued: refreshed now, once.
      await retried.body?.cancel().catch(() => {});
      const refreshed = await this.renew(renewed);
      if (refreshed !== undefined && refreshed.access !== renewed.access) {
        renewed = refreshed;
        retried = await this.base(url, withBearer(init, renewed.access));
      }
    }
    if (retried.status !== 401) return this.served(retried, renewed.access);
    await retried.body?.cancel().catch(() => {});
    if (this.options.spec.grant === "client_credentials") {
      throw new NormalizerError(
        "UPSTREAM_AUTH_FAILED",
        `upstream "${this.options.server}" refused a new client-credentials token (HTTP 401): check the client's ` +
          `scopes and the server's audience`,
        { server: this.options.server, url: describeUrl(this.options.url) },
      );
    }
    throw this.loginNeeded("it refused a renewed token");
  }

  /**
   * A 403 asking for scope (step-up authorization) to a request sent with `sent`: a newer token
   * than that one (another request's step-up, a login another process stored) is tried first;
   * else, when the token's login did not ask for that scope, the scope is remembered in the token
   * file (so the next login asks for it) and, in stdio, a new login asks for it now and the
   * request goes again; elsewhere the request fails naming the scope and the login command. A 403
   * for scope the login asked for already is the server's answer, passed on; so is one to the
   * GET stream (optional) or a DELETE, which ask for nothing.
   */
  private async stepUp(response: Response, url: string | URL, init: RequestInit | undefined, sent: Token) {
    const challenge = insufficientScopeOf(response);
    const method = (init?.method ?? "GET").toUpperCase();
    if (challenge?.scope === undefined || method !== "POST" || this.options.spec.grant !== "authorization_code")
      return response;
    const stored = await this.load();
    if (stored !== undefined && stored.tokens.access_token !== this.login?.tokens.access_token) this.adopt(stored);
    const held = this.login;
    if (held === undefined) return response;
    if (held.tokens.access_token !== sent.access) {
      await response.body?.cancel().catch(() => {});
      return this.served(await this.base(url, withBearer(init, held.tokens.access_token)), held.tokens.access_token);
    }
    if (!addsScope(challenge.scope, held.scope ?? held.tokens.scope)) return response;
    const wantedScope = scopeUnion(held.wantedScope, challenge.scope) as string;
    if (wantedScope.length > MAX_SCOPE_CHARS) {
      // A server asking for ever more: its 403 is its answer, and the token file stays small.
      this.logger.warn("upstream asks for more OAuth scope than is kept; its 403 is passed on", {
        chars: wantedScope.length,
      });
      return response;
    }
    await response.body?.cancel().catch(() => {});
    this.challenge = { ...this.challenge, ...challenge };
    if (wantedScope !== held.wantedScope) await this.store({ ...held, wantedScope });
    this.logger.info("upstream asks for more OAuth scope (HTTP 403 insufficient_scope)", { scope: wantedScope });
    if (this.options.interactive === undefined)
      throw this.loginNeeded(`it asks for the scope "${wantedScope}" with HTTP 403 insufficient_scope`);
    const token = await this.interactiveLoginOnce(init?.signal ?? undefined);
    return this.served(await this.base(url, withBearer(init, token.access)), token.access);
  }

  /**
   * `response` to a request sent with the token `access`: unless refused (401, 403), the token
   * works — no login is wanted, and the last login's token went through (the next step-up may
   * ask for another at once).
   */
  private served(response: Response, access: string): Response {
    if (response.status === 401 || response.status === 403) return response;
    this.wantsLogin = false;
    if (this.lastLogin?.access === access) this.lastLogin.worked = true;
    return response;
  }

  private async noteChallenge(response: Response): Promise<void> {
    this.challenge = challengeOf(response);
    await response.body?.cancel().catch(() => {});
  }

  /** The token to send now: the one held while fresh, else a renewed one; undefined when there is none. */
  private async usableToken(): Promise<Token | undefined> {
    if (this.options.spec.grant === "client_credentials") {
      if (this.clientToken !== undefined && this.fresh(this.clientToken)) return this.clientToken;
      return this.serverInfo === undefined ? undefined : this.renew(this.clientToken);
    }
    if (this.login === undefined) this.hold(await this.load());
    if (this.login === undefined) return undefined;
    const token = tokenOf(this.login);
    return this.fresh(token) ? token : this.renew(token);
  }

  /**
   * A token other than `stale` (expired, or refused by the server): one a concurrent renewal or
   * another process (a new login, a refresh) already stored, else a refresh — one at a time.
   */
  private renew(stale: Token | undefined): Promise<Token | undefined> {
    this.renewing ??= this.renewOnce(stale).finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  private async renewOnce(stale: Token | undefined): Promise<Token | undefined> {
    if (this.options.spec.grant === "client_credentials") {
      if (this.clientToken !== undefined && this.clientToken.access !== stale?.access && this.fresh(this.clientToken))
        return this.clientToken;
      return this.requestClientToken();
    }
    // Processes sharing the token file (two hosts' proxies) refresh in turn: a rotated refresh
    // token works once, so the second would be refused — in turn, it finds the first's new token.
    // A renewal is a few OAuth requests (discovery, the token), each bounded by oauthRequestTimeoutMs.
    const timeoutMs = this.options.oauthRequestTimeoutMs;
    const times = { staleMs: timeoutMs, waitMs: 3 * timeoutMs };
    return withFileLock(this.tokenFile, times, () => this.renewFromFile(stale));
  }

  private async renewFromFile(stale: Token | undefined): Promise<Token | undefined> {
    // The file is the truth: a new login replaces what is held, a deleted file logs out.
    const stored = await this.load();
    if (stored?.tokens.access_token !== this.login?.tokens.access_token) this.adopt(stored);
    if (this.login === undefined) return undefined;
    const held = tokenOf(this.login);
    if (held.access !== stale?.access && this.fresh(held)) {
      this.adoptedUnrefreshed = held.access;
      return held;
    }
    const refreshed = await this.refresh(this.login);
    if (refreshed !== undefined) return refreshed;
    // Refused: another process that does not take turns (an older version, a lock it gave up
    // waiting for) may have refreshed at the same moment; what it stored is then the way on.
    const after = await this.load();
    if (after === undefined || after.tokens.access_token === held.access) return undefined;
    this.adopt(after);
    const theirs = tokenOf(after);
    return this.fresh(theirs) ? theirs : undefined;
  }

  /** After a 401 with nothing left to renew: a new client-credentials token, or a login. */
  private async obtain(method: string, signal: AbortSignal | undefined): Promise<Token> {
    if (this.options.spec.grant === "client_credentials") return this.requestClientToken();
    if (this.options.interactive !== undefined && method !== "DELETE") return this.interactiveLoginOnce(signal);
    throw this.loginNeeded(this.refreshFailure);
  }

  /**
   * A browser login — unless the last one was made moments ago and no request has gone through
   * with its token: a server that refuses every token it issues (or asks for more scope after
   * each login) would otherwise open a browser per request.
   */
  private interactiveLoginOnce(signal: AbortSignal | undefined): Promise<Token> {
    const last = this.lastLogin;
    if (this.loggingIn === undefined && last !== undefined && !last.worked && this.now() - last.at < RELOGIN_PAUSE_MS)
      return Promise.reject(this.loginNeeded("it refused the token of a login made moments ago"));
    return this.interactiveLogin(signal);
  }

  private async requestClientToken(): Promise<Token> {
    const spec = this.options.spec;
    if (spec.grant !== "client_credentials") throw new Error("not a client-credentials upstream");
    try {
      const { tokens, info } = await requestClientCredentialsToken(
        this.options.url,
        spec,
        this.oauthFetch,
        this.serverInfo,
        this.challenge,
      );
      this.serverInfo = info;
      const now = this.now();
      this.retire(this.clientToken?.access);
      this.clientToken = {
        access: tokens.access_token,
        obtainedAt: now,
        ...(typeof tokens.expires_in === "number" && tokens.expires_in > 0
          ? { expiresAt: now + tokens.expires_in * 1000 }
          : {}),
      };
      this.logger.info("OAuth client-credentials token obtained", {
        ...(tokens.expires_in === undefined ? {} : { expiresInS: tokens.expires_in }),
      });
      return this.clientToken;
    } catch (error) {
      this.serverInfo = undefined; // discover again next time: the server may have moved
      throw new NormalizerError(
        "UPSTREAM_AUTH_FAILED",
        `upstream "${this.options.server}": no client-credentials token from its authorization server: ` +
          `${redactedMessage(error, this.secrets())}`,
        { server: this.options.server, url: describeUrl(this.options.url) },
      );
    }
  }

  private async refresh(login: StoredLogin): Promise<Token | undefined> {
    const refreshToken = login.tokens.refresh_token;
    if (refreshToken === undefined || refreshToken === this.deadRefreshToken) return undefined;
    const spec = this.options.spec;
    if (spec.grant === "authorization_code" && spec.issuer !== undefined && !sameIssuer(spec.issuer, login.issuer)) {
      // A configured client is presented to the server that issued it only (a login stored before
      // `issuer` was set may be from another).
      this.refreshFailure = `its stored login is from ${login.issuer}, not the configured issuer ${spec.issuer}`;
      return undefined;
    }
    let tokens: Awaited<ReturnType<typeof refreshAuthorization>>;
    // The status the token endpoint answered with: an HTTP 5xx is an outage, whatever its body.
    let status: number | undefined;
    const fetchFn: FetchLike = async (url, init) => {
      const response = await this.oauthFetch(url, init);
      status = response.status;
      return response;
    };
    try {
      const metadata = await this.metadataOf(login.issuer);
      tokens = await refreshAuthorization(login.issuer, {
        metadata,
        clientInformation: this.clientOf(login),
        refreshToken,
        fetchFn,
        ...(login.resource === undefined ? {} : { resource: login.resource }),
      });
    } catch (error) {
      const why = redactedMessage(error, this.secrets());
      if (isUnavailable(error, status)) {
        this.metadata.delete(login.issuer);
        throw new NormalizerError(
          "UPSTREAM_AUTH_FAILED",
          `upstream "${this.options.server}": could not refresh its OAuth token (${why}); it is tried again with the ` +
            `next request — if this persists, run "${this.options.loginCommand}"`,
          { server: this.options.server, url: describeUrl(this.options.url) },
        );
      }
      // Refused (invalid_grant…): that refresh token is done, and a login is what helps now.
      if (error instanceof OAuthError) this.deadRefreshToken = refreshToken;
      if (error instanceof InvalidClientError && login.registered) this.rejectedClient = login.client.client_id;
      return this.refreshRefused(`its authorization server did not refresh the token: ${why}`, why);
    }
    const unusable = unsendable(tokens);
    if (unusable !== undefined) return this.refreshRefused(unusable, unusable);
    const { issuer, resource, client, registered, scope, wantedScope } = login;
    const renewed = loginWithTokens(
      { issuer, resource, client, registered, scope, wantedScope },
      this.options.url,
      tokens,
      this.now(),
    );
    // A login stored while the refresh was out (`mcp-normalizer login`, for more scope) is newer
    // than what the refresh renewed: it stays, and is what is used.
    const meanwhile = await this.load();
    if (meanwhile !== undefined && meanwhile.tokens.access_token !== login.tokens.access_token) {
      this.hold(renewed);
      this.adopt(meanwhile);
      this.logger.info("OAuth token refreshed, but a new login was stored meanwhile: using the login");
      return tokenOf(meanwhile);
    }
    await this.store(renewed);
    this.logger.info("OAuth token refreshed", {
      ...(tokens.expires_in === undefined ? {} : { expiresInS: tokens.expires_in }),
    });
    return tokenOf(renewed);
  }

  /** A refresh that cannot help (refused, or a token that cannot be sent): a login is needed. */
  private refreshRefused(failure: string, error: string): undefined {
    this.refreshFailure = failure;
    this.logger.warn("OAuth token not refreshed; a new login is needed", { command: this.options.loginCommand, error });
    return undefined;
  }

  private interactiveLogin(signal: AbortSignal | undefined): Promise<Token> {
    const prompt = this.options.interactive;
    if (prompt === undefined || this.options.spec.grant !== "authorization_code")
      return Promise.reject(this.loginNeeded());
    const spec = this.options.spec;
    this.loggingIn ??= (async () => {
      const stored = this.login ?? (await readLogin(this.tokenFile)).login;
      const forgotten = stored?.registered === true && stored.client.client_id === this.rejectedClient;
      if (forgotten) this.logger.info("the authorization server refused this proxy's registration; registering again");
      const previous = forgotten ? undefined : stored;
      const login = await runLoginFlow({
        server: this.options.server,
        serverUrl: this.options.url,
        spec,
        prompt,
        oauthFetch: this.oauthFetch,
        upstreamFetch: this.oauthFetch,
        headers: this.options.headers,
        transport: this.options.transport,
        warn: (message) => this.logger.warn(message),
        challenge: this.challenge,
        previous,
      });
      await this.store(login);
      this.lastLogin = { access: login.tokens.access_token, at: this.now(), worked: false };
      this.logger.info("OAuth login stored", { file: this.tokenFile });
      return tokenOf(login);
    })().finally(() => (this.loggingIn = undefined));
    return signal === undefined ? this.loggingIn : untilAborted(this.loggingIn, signal);
  }

  /** Keeps the login in memory and on disk; a disk that refuses is logged, the token is still used. */
  private async store(login: StoredLogin): Promise<void> {
    this.adopt(login);
    try {
      await writeLogin(this.tokenFile, this.options.tokenDir, login);
    } catch (error) {
      this.logger.error("cannot write the OAuth token file; the token is used from memory", {
        file: this.tokenFile,
        error: (error as Error).message,
      });
    }
  }

  /** Holds `login` (a new one, or one another process stored): what was known of the old one's refresh goes. */
  private adopt(login: StoredLogin | undefined): void {
    this.hold(login);
    this.deadRefreshToken = undefined;
    this.refreshFailure = undefined;
  }

  /** Makes `login` the one held; the tokens it replaces stay secrets. */
  private hold(login: StoredLogin | undefined): void {
    const before = this.login?.tokens;
    if (before !== undefined && before !== login?.tokens) {
      if (before.access_token !== login?.tokens.access_token) this.retire(before.access_token);
      if (before.refresh_token !== login?.tokens.refresh_token) this.retire(before.refresh_token);
    }
    this.login = login;
  }

  private retire(value: string | undefined): void {
    if (value === undefined || value === "" || this.retired.includes(value)) return;
    this.retired.push(value);
    if (this.retired.length > RETIRED_SECRETS) this.retired.shift();
  }

  private async load(): Promise<StoredLogin | undefined> {
    const { login, problem } = await readLogin(this.tokenFile);
    if (problem !== undefined && problem !== this.lastProblem)
      this.logger.warn("OAuth token file unusable", { problem });
    this.lastProblem = problem;
    const spec = this.options.spec;
    if (
      login !== undefined &&
      spec.grant === "authorization_code" &&
      spec.clientId !== undefined &&
      login.client.client_id !== spec.clientId
    )
      return undefined;
    return login;
  }

  private metadataOf(issuer: string): Promise<AuthorizationServerMetadata | undefined> {
    let known = this.metadata.get(issuer);
    if (known === undefined) {
      known = discoverAuthorizationServer(issuer, this.oauthFetch);
      known.catch(() => this.metadata.delete(issuer));
      this.metadata.set(issuer, known);
    }
    return known;
  }

  private clientOf(login: StoredLogin): OAuthClientInformationMixed {
    const spec = this.options.spec;
    if (spec.grant === "authorization_code" && spec.clientId !== undefined)
      return {
        client_id: spec.clientId,
        ...(spec.clientSecret === undefined ? {} : { client_secret: spec.clientSecret }),
      };
    return login.client;
  }

  private fresh(token: Token): boolean {
    if (token.expiresAt === undefined) return true;
    const margin = Math.min(MAX_EXPIRY_MARGIN_MS, (token.expiresAt - token.obtainedAt) / 10);
    return this.now() < token.expiresAt - margin;
  }

  /** Requests fail until someone logs in (`mcp-normalizer login`): what `/healthz` tells the operator. */
  get needsLogin(): boolean {
    return this.wantsLogin;
  }

  private loginNeeded(why?: string): NormalizerError {
    this.wantsLogin = true;
    return new NormalizerError(
      "UPSTREAM_AUTH_REQUIRED",
      `upstream "${this.options.server}" needs an OAuth login${why === undefined ? "" : ` (${why})`}: run ` +
        `"${this.options.loginCommand}"`,
      { server: this.options.server, url: describeUrl(this.options.url) },
    );
  }

  /** The token values this layer holds or sends: never quoted to a host or a log. */
  secrets(): Array<string | undefined> {
    const spec = this.options.spec;
    return [
      this.login?.tokens.access_token,
      this.login?.tokens.refresh_token,
      this.login?.client.client_secret,
      spec.clientSecret,
      this.clientToken?.access,
      ...basicCredentials(this.login?.client.client_id, this.login?.client.client_secret),
      ...basicCredentials(spec.clientId, spec.clientSecret),
      ...this.retired,
    ];
  }
}

function tokenOf(login: StoredLogin): Token {
  return {
    access: login.tokens.access_token,
    obtainedAt: login.obtainedAt,
    ...(login.expiresAt === undefined ? {} : { expiresAt: login.expiresAt }),
  };
}

/** The request as it was, with the token; the body is sent again as is (the transports send strings). */
function withBearer(init: RequestInit | undefined, token: string): RequestInit {
  const headers = new Headers(init?.headers);
  headers.set("authorization", `Bearer ${token}`);
  return { ...init, headers };
}

/**
 * The authorization server could not be asked (network, timeout), asks to come back later, or
 * failed itself (an HTTP 5xx, OAuth's answer or a load balancer's while it is down) — an outage,
 * not a refusal: a login would not help. Any other answer (a 400, 401, 403, in OAuth's words or
 * not) refuses the refresh.
 */
function isUnavailable(error: unknown, status: number | undefined): boolean {
  if (error instanceof TemporarilyUnavailableError || error instanceof TooManyRequestsError) return true;
  if (status !== undefined && (status === 429 || status >= 500)) return true;
  if (error instanceof OAuthError) return false;
  const name = error instanceof Error ? error.name : "";
  return (
    name === "TimeoutError" ||
    name === "AbortError" ||
    (error instanceof TypeError && /fetch failed/i.test(error.message))
  );
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
