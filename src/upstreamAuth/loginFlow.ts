/**
 * The browser login (authorization code + PKCE S256), driven by the SDK's `auth()`:
 * discovery from the server's 401 (resource metadata → authorization-server metadata), dynamic
 * client registration when no client id is configured, the authorization URL with `state`,
 * the RFC 8707 `resource` and the S256 challenge, then the code exchange. This file supplies what
 * `auth()` asks of a client: the loopback redirect, the state, where the URL is shown, and
 * memory for the verifier, the registration and the tokens until the login is stored.
 */
import { randomBytes } from "node:crypto";
import { auth, type OAuthClientProvider, type OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { LOOPBACK_HOSTS } from "../config/defaults.js";
import { NormalizerError } from "../errors/NormalizerError.js";
import { discoverServerInfo, OtherIssuerError } from "./discovery.js";
import { describeUrl, networkErrorText } from "../transports/upstream/upstreamMessages.js";
import { listenForCallback, type CallbackListener } from "./callbackListener.js";
import { probe, type ProbeTransport, scopeUnion } from "./challenge.js";
import { openInBrowser } from "./openBrowser.js";
import { basicCredentials } from "../errors/redact.js";
import { redactedMessage } from "./oauthFetch.js";
import { loginWithTokens, type StoredLogin, unsendable } from "./tokenStore.js";
import type { AuthorizationCodeSpec, Challenge, FetchLike, LoginPrompt } from "./types.js";

export interface LoginFlowOptions {
  /** The server's name, for messages. */
  readonly server: string;
  readonly serverUrl: string;
  readonly spec: AuthorizationCodeSpec;
  readonly prompt: LoginPrompt;
  /** For the OAuth requests (bounded in time). */
  readonly oauthFetch: FetchLike;
  /** For the probe of the server itself, with its configured headers. */
  readonly upstreamFetch: FetchLike;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** How the server is reached: the probe asks it as that transport opens a session (default streamable HTTP). */
  readonly transport?: ProbeTransport | undefined;
  /** The challenge of a 401 already seen; without it the server is probed. */
  readonly challenge?: Challenge | undefined;
  /** Told of each request to the callback refused for its state (up to a few per login), in one line. */
  readonly warn?: ((message: string) => void) | undefined;
  /** The login stored before, whose registration is reused when its redirect port is free. */
  readonly previous?: StoredLogin | undefined;
  readonly now?: () => number;
}

export const CLIENT_NAME = "mcp-normalizer";

/** Runs the whole login; resolves with what is to be stored. The listener is closed on every path. */
export async function runLoginFlow(options: LoginFlowOptions): Promise<StoredLogin> {
  const what = `login to "${options.server}"`;
  const { spec } = options;
  let challenge = options.challenge;
  /** What the server answered a request without a token, when that was not a 401 challenge. */
  let unchallenged: number | undefined;
  if (challenge === undefined) {
    try {
      const probed = await probe(options.serverUrl, options.upstreamFetch, options.headers, options.transport);
      challenge = probed.challenge;
      if (probed.status !== 401) unchallenged = probed.status;
    } catch (error) {
      throw new NormalizerError(
        "LOGIN_FAILED",
        `${what}: cannot reach ${describeUrl(options.serverUrl)}: ${networkErrorText(error)}`,
      );
    }
  }
  const reusable = spec.clientId === undefined && options.previous?.registered === true ? options.previous : undefined;
  const provider = new LoginProvider(options.server, spec, options.prompt, reusable?.client);
  const listener = await listen(spec, reusable, provider, what, options.warn);
  const step = <T>(run: () => Promise<T>): Promise<T> =>
    loginStep(run, what, provider, options.serverUrl, unchallenged);
  try {
    provider.redirectUrl = listener.redirectUrl;
    // The configured scopes, else the server's challenge; with what a 403 asked for since the last login.
    const wanted = options.previous?.wantedScope;
    const scope = scopeUnion(
      spec.scopes !== undefined && spec.scopes.length > 0 ? spec.scopes.join(" ") : challenge?.scope,
      wanted === undefined ? undefined : (options.previous?.scope ?? options.previous?.tokens.scope),
      wanted,
    );
    const flow = {
      serverUrl: options.serverUrl,
      fetchFn: options.oauthFetch,
      ...(scope === undefined ? {} : { scope }),
      ...(challenge?.resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl: challenge.resourceMetadataUrl }),
    };
    // Discovered once — a server down or throttling told as that, not read as one without
    // metadata (whose origin the SDK would guess) — checked against a configured issuer, and
    // kept: `auth()` then asks the MCP server nothing again (it could name another authorization
    // server the second time).
    provider.saveDiscoveryState(await step(() => discoverChecked(spec.issuer, flow, what)));
    const started = await step(() => auth(provider, flow));
    if (started !== "REDIRECT")
      throw new NormalizerError("LOGIN_FAILED", `${what}: the authorization server did not start a browser login`);
    const code = await listener.waitForCode(options.prompt.timeoutMs);
    provider.code = code;
    await step(() => auth(provider, { ...flow, authorizationCode: code }));
    const tokens = provider.savedTokens;
    const discovery = provider.discovery;
    const client = provider.client;
    if (tokens === undefined || discovery === undefined || client === undefined)
      throw new NormalizerError("LOGIN_FAILED", `${what}: the token exchange gave no tokens`);
    const why = unsendable(tokens);
    if (why !== undefined) throw new NormalizerError("LOGIN_FAILED", `${what}: ${why}; nothing was stored`);
    const base = {
      issuer: discovery.authorizationServerUrl,
      ...(discovery.resourceMetadata === undefined ? {} : { resource: discovery.resourceMetadata.resource }),
      // A configured client's secret stays in the config; only its id is kept with the tokens.
      client: provider.registered ? client : { client_id: client.client_id },
      registered: provider.registered,
      ...(scope === undefined ? {} : { scope }),
    };
    return loginWithTokens(base, options.serverUrl, tokens, (options.now ?? Date.now)());
  } finally {
    await listener.close();
  }
}

/** The configured callback port, else the port of a reusable registration, else any free port. */
async function listen(
  spec: AuthorizationCodeSpec,
  reusable: StoredLogin | undefined,
  provider: LoginProvider,
  what: string,
  warn: ((message: string) => void) | undefined,
): Promise<CallbackListener> {
  const expected = (): string | undefined => provider.sentState;
  if (spec.callbackPort !== undefined) {
    try {
      return await listenForCallback(spec.callbackPort, expected, what, warn);
    } catch (error) {
      throw new NormalizerError(
        "LOGIN_FAILED",
        `${what}: cannot listen on 127.0.0.1:${spec.callbackPort} (callbackPort): ${networkErrorText(error)}`,
      );
    }
  }
  const previousPort = portOf(reusable?.client);
  if (previousPort !== undefined) {
    try {
      return await listenForCallback(previousPort, expected, what, warn);
    } catch {
      provider.forgetClient(); // its redirect port is taken: register again on a free one
    }
  }
  return listenForCallback(0, expected, what, warn);
}

function portOf(client: OAuthClientInformationMixed | undefined): number | undefined {
  const uri = client !== undefined && "redirect_uris" in client ? client.redirect_uris[0] : undefined;
  if (uri === undefined) return undefined;
  try {
    const port = Number(new URL(uri).port);
    return Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One step of the SDK's `auth()`, its failure said in one line: the SDK quotes a whole schema
 * report when an answer is not OAuth's (a server with no login answers its well-known URLs with
 * 404 pages), and a server that did not ask for a login is named as such.
 */
async function loginStep<T>(
  run: () => Promise<T>,
  what: string,
  provider: LoginProvider,
  serverUrl: string,
  unchallenged: number | undefined,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof NormalizerError) throw error;
    const reason = oneLine(redactedMessage(error, provider.secrets()));
    const hint =
      unchallenged === undefined
        ? ""
        : ` (${describeUrl(serverUrl)} answered HTTP ${unchallenged} to a request without a token, not 401: ` +
          "it may need no login)";
    throw new NormalizerError("LOGIN_FAILED", `${what} failed: ${reason}${hint}`);
  }
}

/** The first line of an error. */
function oneLine(text: string): string {
  const line = text.split("\n", 1)[0]!.trim();
  return line.endsWith(":") ? line.slice(0, -1) : line;
}

/**
 * Where the server's OAuth is, discovered by the proxy (an outage thrown as one). A configured
 * client is presented to the authorization server that issued it only: the one the MCP server
 * names is checked first, so another gets no request (not even for its metadata, nor a dynamic
 * registration, nor a browser sent to it).
 */
async function discoverChecked(
  issuer: string | undefined,
  flow: { serverUrl: string; fetchFn: FetchLike; resourceMetadataUrl?: URL },
  what: string,
): Promise<OAuthDiscoveryState> {
  try {
    return await discoverServerInfo(flow.serverUrl, {
      fetchFn: flow.fetchFn,
      resourceMetadataUrl: flow.resourceMetadataUrl,
      issuer,
    });
  } catch (error) {
    if (error instanceof OtherIssuerError) throw new NormalizerError("LOGIN_FAILED", `${what}: ${error.message}`);
    throw error;
  }
}

/** An https URL, or an http one on a loopback host (an authorization server on the same machine). */
function isWebPage(url: URL): boolean {
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && LOOPBACK_HOSTS.includes(url.hostname);
}

/** The client `auth()` drives during one login: everything in memory until the login is stored. */
class LoginProvider implements OAuthClientProvider {
  redirectUrl: string | undefined;
  sentState: string | undefined;
  code: string | undefined;
  client: OAuthClientInformationMixed | undefined;
  registered: boolean;
  savedTokens: OAuthTokens | undefined;
  discovery: OAuthDiscoveryState | undefined;
  private verifier: string | undefined;

  constructor(
    private readonly server: string,
    private readonly spec: AuthorizationCodeSpec,
    private readonly prompt: LoginPrompt,
    previous: OAuthClientInformationMixed | undefined,
  ) {
    if (spec.clientId !== undefined) {
      // Stamped with its issuer: the SDK presents it to no other authorization server.
      this.client = {
        client_id: spec.clientId,
        ...(spec.clientSecret === undefined ? {} : { client_secret: spec.clientSecret }),
        ...(spec.issuer === undefined ? {} : { issuer: spec.issuer }),
      } as OAuthClientInformationMixed;
      this.registered = false;
    } else {
      this.client = previous;
      this.registered = previous !== undefined;
    }
  }

  get clientMetadata(): OAuthClientMetadata {
    const scope =
      this.spec.scopes !== undefined && this.spec.scopes.length > 0 ? this.spec.scopes.join(" ") : undefined;
    return {
      client_name: CLIENT_NAME,
      redirect_uris: this.redirectUrl === undefined ? [] : [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...(scope === undefined ? {} : { scope }),
    };
  }

  forgetClient(): void {
    this.client = undefined;
    this.registered = false;
  }

  state(): string {
    this.sentState = randomBytes(32).toString("base64url");
    return this.sentState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }

  saveClientInformation(information: OAuthClientInformationMixed): void {
    // Called after a registration, and to stamp a configured client with its issuer. A configured
    // client is never replaced by a registration (at an authorization server it was not issued by).
    if (this.spec.clientId !== undefined && information.client_id !== this.spec.clientId)
      throw new Error(`the configured client ${this.spec.clientId} is not replaced by a registration`);
    if (this.spec.clientId === undefined) this.registered = true;
    this.client = information;
  }

  /** A login always asks anew: stored tokens are never refreshed here. */
  tokens(): undefined {
    return undefined;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.savedTokens = tokens;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    // Only a web page is shown or opened: the authorization server chose this URL, and an OS
    // opener runs what other schemes name (`file:`, `search-ms:`, `ms-msdt:` …).
    if (!isWebPage(authorizationUrl))
      throw new NormalizerError(
        "LOGIN_FAILED",
        `login to "${this.server}": the authorization server's login page is not an https URL ` +
          `(${JSON.stringify(authorizationUrl.protocol)}); it is not opened`,
      );
    this.prompt.announce(authorizationUrl, this.server);
    if (this.prompt.openBrowser) openInBrowser(authorizationUrl.href);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error("no PKCE verifier: the login was not started");
    return this.verifier;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  secrets(): Array<string | undefined> {
    return [
      this.verifier,
      this.code,
      this.sentState,
      this.savedTokens?.access_token,
      this.savedTokens?.refresh_token,
      this.client?.client_secret,
      this.spec.clientSecret,
      ...basicCredentials(this.client?.client_id, this.client?.client_secret),
      ...basicCredentials(this.spec.clientId, this.spec.clientSecret),
    ];
  }
}
