/**
 * From a `mcpServers` entry to a live upstream transport (the entry's fields → the upstream
 * transports of src/transports/upstream).
 */
import type { ServerConfig } from "../config/schema.js";
import { isStdioServer } from "../config/serverKind.js";
import type { Logger } from "../observe/logger.js";
import {
  createUpstreamTransport,
  type FetchLike,
  isStdioSpec,
  transportKindOf,
  type UpstreamSpec,
  type UpstreamTransportKind,
} from "../transports/upstream/index.js";
import type { UpstreamTransport } from "../transports/types.js";
import { defaultChildEnvironment, isDefaultChildVariable } from "./defaultChildEnvironment.js";

const TYPE_TO_TRANSPORT = {
  http: "streamable-http",
  "streamable-http": "streamable-http",
  sse: "sse",
  ws: "websocket",
  websocket: "websocket",
} as const;

/**
 * What a stdio upstream's environment starts from, before its configured `env`:
 * - `"inherit"`: everything the proxy was given (`stdio` and `audit` with an upstream on the
 *   command line: the host or the shell already chose);
 * - `{ withhold }` (`serve`): the variables desktop hosts pass (the SDK's `getDefaultEnvironment()`,
 *   mirrored by `defaultChildEnvironment`: HOME, LOGNAME, PATH, SHELL, TERM, USER), or the whole
 *   environment for a server with `inheritEnv: true` — never the `withhold` variables (those the
 *   config reads where it holds credentials), unless every host passes them anyway (HOME…);
 * - `{ withhold, inheritAll: true }` (`stdio` and `audit` with `--config`): the whole environment
 *   the host or shell gave, less the config's `withhold` variables.
 * A server's own `env` is the operator's explicit choice and is passed as configured.
 */
export type ChildEnvironment = "inherit" | { readonly withhold: readonly string[]; readonly inheritAll?: boolean };

export function childBaseEnv(
  server: ServerConfig,
  policy: ChildEnvironment,
  proxyEnv: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string | undefined> | undefined {
  if (policy === "inherit") return undefined;
  const whole = policy.inheritAll === true || (isStdioServer(server) && server.inheritEnv === true);
  const base: Record<string, string | undefined> = whole ? { ...proxyEnv } : defaultChildEnvironment();
  // What every desktop host passes every server (HOME, PATH…) is no secret, whoever reads it.
  for (const name of policy.withhold) if (!isDefaultChildVariable(name)) delete base[name];
  return base;
}

export function upstreamSpec(server: ServerConfig, policy: ChildEnvironment = "inherit"): UpstreamSpec {
  if (isStdioServer(server)) {
    const baseEnv = childBaseEnv(server, policy);
    return {
      command: server.command,
      ...(server.args === undefined ? {} : { args: server.args }),
      ...(server.env === undefined ? {} : { env: server.env }),
      ...(baseEnv === undefined ? {} : { baseEnv }),
      ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
    };
  }
  const transport = server.transport ?? (server.type === undefined ? undefined : TYPE_TO_TRANSPORT[server.type]);
  return {
    url: server.url,
    ...(transport === undefined ? {} : { transport }),
    ...(server.headers === undefined ? {} : { headers: server.headers }),
  };
}

/** What the factory takes of the OAuth layers (`UpstreamAuths`): a server's fetch with its token. */
export interface AuthLayers {
  for(
    name: string,
    server: ServerConfig,
  ): { readonly fetch: FetchLike; secrets(): Array<string | undefined> } | undefined;
}

/**
 * The transport a remote server is reached with, by the rule its upstream transport is built by
 * (its login asks it as that transport opens a session: a legacy SSE server with the GET of its stream).
 */
export function transportOfServer(server: ServerConfig): UpstreamTransportKind | undefined {
  const spec = upstreamSpec(server);
  return isStdioSpec(spec) ? undefined : transportKindOf(spec);
}

/** Builds (does not start) the upstream transport of one server for one session. */
export type UpstreamFactory = (name: string, server: ServerConfig, logger: Logger) => UpstreamTransport;

export interface UpstreamFactoryOptions {
  readonly maxMessageBytes: number;
  /** `limits.upstreamAckTimeoutMs`: how long what follows a notification waits for a streamable HTTP server's 202. */
  readonly upstreamAckTimeoutMs: number;
  /** `limits.upstreamStreamWaitMs`: how long `notifications/initialized` waits for the GET stream's answer. */
  readonly upstreamStreamWaitMs: number;
  /** `limits.requestTimeoutMs`: also how long a streamable HTTP notification's POST may go unacknowledged. */
  readonly requestTimeoutMs: number;
  /** `limits.upstreamIdleConnections`: idle keep-alive connections kept to each streamable HTTP server. */
  readonly upstreamIdleConnections: number;
  /** `limits.connectTimeoutMs`: how long an HTTP or WebSocket upstream may take to connect, and to close. */
  readonly connectTimeoutMs: number;
  /** `limits.killGraceMs`: how long a stdio upstream has between SIGTERM and SIGKILL. */
  readonly killGraceMs: number;
  /** `limits.stderrLinesLogged`: lines of a stdio upstream's stderr logged per 10 s. */
  readonly stderrLinesLogged?: number;
  /** 0 is off; the host transports the proxy writes to splice raw strings back. */
  readonly rawStringBytes?: number;
  /** `limits.maxUpstreamMessageNodes`: an upstream's message of more nodes is not parsed. */
  readonly maxUpstreamMessageNodes: number;
  /** `limits.maxSkippedMessageBytes`: how far past the limit an upstream's message may run without end. */
  readonly maxSkippedMessageBytes: number;
  /** `limits.maxPendingPongs`: pongs not yet written past which a pinging WebSocket upstream is ended. */
  readonly maxPendingPongs: number;
  /**
   * Whether what hosts are told about an upstream's end quotes its stderr. `serve`: no (its
   * hosts and unauthenticated clients are not the operator; the line goes to the log).
   * `stdio`: yes (the host started the proxy: it is the operator).
   */
  readonly stderrToHosts: boolean;
  /** Where a stdio upstream's environment starts from (see `ChildEnvironment`). */
  readonly childEnvironment: ChildEnvironment;
  /** The OAuth layers of remote servers with `auth` (their fetch carries the token). */
  readonly auths?: AuthLayers;
}

export function createUpstreamFactory(options: UpstreamFactoryOptions): UpstreamFactory {
  const rawStringBytes =
    options.rawStringBytes === undefined || options.rawStringBytes === 0 ? undefined : options.rawStringBytes;
  return (name: string, server: ServerConfig, logger: Logger): UpstreamTransport => {
    const auth = options.auths?.for(name, server);
    const transport: UpstreamTransport = createUpstreamTransport(upstreamSpec(server, options.childEnvironment), {
      logger,
      maxMessageBytes: options.maxMessageBytes,
      ackTimeoutMs: options.upstreamAckTimeoutMs,
      serverStreamWaitMs: options.upstreamStreamWaitMs,
      unacknowledgedTimeoutMs: options.requestTimeoutMs,
      idleConnections: options.upstreamIdleConnections,
      connectTimeoutMs: options.connectTimeoutMs,
      killGraceMs: options.killGraceMs,
      stderrLinesLogged: options.stderrLinesLogged,
      rawStringBytes,
      maxMessageNodes: options.maxUpstreamMessageNodes,
      maxSkippedMessageBytes: options.maxSkippedMessageBytes,
      maxPendingPongs: options.maxPendingPongs,
      stderrInErrors: options.stderrToHosts,
      ...(auth === undefined ? {} : { fetch: auth.fetch, secrets: () => auth.secrets() }),
    });
    return transport;
  };
}
