/**
 * Upstream (client-side) transports, and the one function that turns a `mcpServers` entry
 * (`{command, args, env, cwd}` or `{url, transport, headers}`) into one.
 */
import type { Logger } from "../../observe/logger.js";
import type { UpstreamTransport } from "../types.js";
import { SseUpstreamTransport } from "./sseUpstream.js";
import { StdioUpstreamTransport } from "./stdioUpstream.js";
import { StreamableHttpUpstreamTransport, type FetchLike } from "./streamableHttpUpstream.js";
import { WebSocketUpstreamTransport } from "./wsUpstream.js";

export {
  StdioUpstreamTransport,
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_MAX_STDERR_LINE_BYTES,
  type StdioUpstreamOptions,
  type UpstreamExit,
} from "./stdioUpstream.js";
export {
  StreamableHttpUpstreamTransport,
  DEFAULT_HTTP_CONNECT_TIMEOUT_MS,
  DEFAULT_SERVER_STREAM_RETRIES,
  DEFAULT_SERVER_STREAM_RETRY_MS,
  type HttpUpstreamOptions,
  type FetchLike,
} from "./streamableHttpUpstream.js";
export { SseUpstreamTransport, type SseUpstreamOptions } from "./sseUpstream.js";
export { WebSocketUpstreamTransport, WEBSOCKET_SUBPROTOCOL, type WebSocketUpstreamOptions } from "./wsUpstream.js";

export type UpstreamTransportKind = "streamable-http" | "sse" | "websocket";

export interface StdioUpstreamSpec {
  command: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  /** The environment the child starts from, before `env`. Default `process.env`. */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
}

export interface UrlUpstreamSpec {
  url: string;
  /** Default: `websocket` for `ws:`/`wss:` URLs, else `streamable-http`. */
  transport?: UpstreamTransportKind;
  headers?: Readonly<Record<string, string>>;
}

export type UpstreamSpec = StdioUpstreamSpec | UrlUpstreamSpec;

export interface UpstreamOptions {
  logger?: Logger;
  /** Largest message accepted from the upstream, in bytes (`limits.maxMessageBytes`). */
  maxMessageBytes: number;
  /** stdio: time from SIGTERM to SIGKILL on close, in ms. */
  killGraceMs?: number;
  /** stdio: lines of stderr logged per 10 s (`limits.stderrLinesLogged`). */
  stderrLinesLogged?: number;
  /** stdio: errors quote the child's last stderr line (default true; `serve` turns it off). */
  stderrInErrors?: boolean;
  /** `limits.rawStringBytes` (stdio, streamable HTTP JSON bodies, WebSocket): payload literals this long stay bytes. */
  rawStringBytes?: number | undefined;
  /** `limits.maxUpstreamMessageNodes`: a message of more nodes is not parsed (its request answered an error). */
  maxMessageNodes?: number | undefined;
  /** `limits.maxSkippedMessageBytes` (stdio, SSE streams): how far past the limit a message may run without end. */
  maxSkippedMessageBytes?: number | undefined;
  /** WebSocket: `limits.maxPendingPongs`, pongs not yet written past which a pinging upstream is ended. */
  maxPendingPongs?: number | undefined;
  /** HTTP/WebSocket: connection timeout, in ms. */
  connectTimeoutMs?: number;
  /** Streamable HTTP: how long what follows a notification waits for its 202 (`limits.upstreamAckTimeoutMs`). */
  ackTimeoutMs?: number;
  /** Streamable HTTP: how long `notifications/initialized` waits for the GET stream (`limits.upstreamStreamWaitMs`). */
  serverStreamWaitMs?: number;
  /** Streamable HTTP: how long a notification's POST may go unacknowledged before it is ended (ms). */
  unacknowledgedTimeoutMs?: number;
  /** Streamable HTTP: idle keep-alive connections kept per server (`limits.upstreamIdleConnections`). */
  idleConnections?: number;
  /** HTTP: injection point for tests; the OAuth layer's fetch, which adds its token. */
  fetch?: FetchLike;
  /** HTTP: values the injected fetch sends (an OAuth layer's tokens), removed wherever the server is quoted. */
  secrets?: () => Iterable<string | undefined>;
}

export type { UpstreamTransport } from "../types.js";

export function isStdioSpec(spec: UpstreamSpec): spec is StdioUpstreamSpec {
  return "command" in spec && typeof spec.command === "string";
}

/** The transport a URL spec uses when it names none. */
export function transportKindOf(spec: UrlUpstreamSpec): UpstreamTransportKind {
  if (spec.transport) return spec.transport;
  const protocol = new URL(spec.url).protocol;
  return protocol === "ws:" || protocol === "wss:" ? "websocket" : "streamable-http";
}

/** Builds (does not start) the transport for one `mcpServers` entry. */
export function createUpstreamTransport(spec: UpstreamSpec, options: UpstreamOptions): UpstreamTransport {
  const { logger, maxMessageBytes, connectTimeoutMs } = options;
  if (isStdioSpec(spec)) {
    return new StdioUpstreamTransport({
      ...spec,
      logger,
      maxMessageBytes,
      killGraceMs: options.killGraceMs,
      stderrLinesLogged: options.stderrLinesLogged,
      rawStringBytes: options.rawStringBytes,
      maxMessageNodes: options.maxMessageNodes,
      maxSkippedMessageBytes: options.maxSkippedMessageBytes,
      ...(options.stderrInErrors === undefined ? {} : { stderrInErrors: options.stderrInErrors }),
    });
  }
  const common = {
    url: spec.url,
    headers: spec.headers,
    logger,
    maxMessageBytes,
    connectTimeoutMs,
    rawStringBytes: options.rawStringBytes,
    maxMessageNodes: options.maxMessageNodes,
    maxSkippedMessageBytes: options.maxSkippedMessageBytes,
  };
  switch (transportKindOf(spec)) {
    case "websocket":
      return new WebSocketUpstreamTransport({ ...common, maxPendingPongs: options.maxPendingPongs });
    case "sse":
      return new SseUpstreamTransport({ ...common, fetch: options.fetch, secrets: options.secrets });
    case "streamable-http":
      return new StreamableHttpUpstreamTransport({
        ...common,
        fetch: options.fetch,
        secrets: options.secrets,
        ...(options.ackTimeoutMs === undefined ? {} : { ackTimeoutMs: options.ackTimeoutMs }),
        ...(options.serverStreamWaitMs === undefined ? {} : { serverStreamWaitMs: options.serverStreamWaitMs }),
        ...(options.idleConnections === undefined ? {} : { idleConnections: options.idleConnections }),
        ...(options.unacknowledgedTimeoutMs === undefined
          ? {}
          : { unacknowledgedTimeoutMs: options.unacknowledgedTimeoutMs }),
      });
  }
}
