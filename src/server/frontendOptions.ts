/**
 * Options of the HTTP listener (`serve`), every limit named with its unit and a
 * documented default. `resolveFrontendOptions` applies the defaults once, so the
 * rest of src/server reads a complete object.
 */
import type { Logger } from "../observe/logger.js";
import { silentLogger } from "../observe/logger.js";
import type { OnHostSession, OnStatelessAnswerTooLarge, ProblemSite } from "../transports/host/hostSession.js";
import type { FramingProblem } from "../transports/types.js";
import { DEFAULT_ALLOWED_HOSTS, DEFAULT_LIMITS } from "../config/defaults.js";

/** A body for `/metrics` or `/report`, produced on request. */
export interface HttpDocument {
  readonly contentType: string;
  readonly body: string | Buffer;
}

export interface HttpFrontendOptions {
  /** The server NAMEs served at `/mcp/NAME`, `/sse/NAME` + `/messages/NAME`, `/ws/NAME`. */
  serverNames: readonly string[];
  /** Called for every new host session; the proxy bridges the transport to an upstream. */
  onSession: OnHostSession;
  /**
   * `GET /healthz` answers 200 with this value as JSON. `detailed` is true only for a request
   * with a valid bearer token (or when no tokens are configured): without it, give the status
   * alone — probes need no more, and details (errors, counts) are for the operator.
   */
  health: (detailed: boolean) => unknown | Promise<unknown>;
  /** `GET /metrics` (Prometheus text); 404 when absent. */
  metrics?: () => Promise<HttpDocument> | HttpDocument;
  /** `GET /report` (live HTML size report); 404 when absent. */
  report?: () => Promise<HttpDocument> | HttpDocument;
  /**
   * Origins allowed besides loopback ones (`http://localhost:*`, `http://127.0.0.1:*`,
   * `http://[::1]:*`), compared exactly after URL normalization. Requests without `Origin`
   * (non-browser hosts) are allowed. Default: none beyond loopback.
   */
  allowedOrigins?: readonly string[];
  /** Allow loopback origins without listing them. Default true. */
  allowLoopbackOrigins?: boolean;
  /**
   * Accepted `Host` header names (with or without `:port`); `"*"` turns the check off.
   * Default `DEFAULT_ALLOWED_HOSTS` (loopback names, config/defaults.ts).
   */
  allowedHosts?: readonly string[];
  /** When non-empty, every path but `/healthz` needs `Authorization: Bearer <one of these>`. */
  bearerTokens?: readonly string[];
  /** Largest message (HTTP body, WebSocket frame) accepted, in bytes. Default: `limits.maxMessageBytes`'s. */
  maxMessageBytes?: number;
  /**
   * Largest HTTP request body (one message or a batch) on `/mcp` and `/messages`, in bytes. Default `maxMessageBytes`.
   */
  maxBodyBytes?: number;
  /** Most messages in one POSTed JSON-RPC batch; a bigger one gets 413. Default: `limits.maxBatch`'s. */
  maxBatch?: number;
  /**
   * Most nodes (objects, arrays, members, elements) in one message a host sends; more gets 413 (-32003 over WebSocket).
   * Default: `limits.maxMessageNodes`'s.
   */
  maxMessageNodes?: number;
  /** Bytes of request bodies held at once over every connection; past it 503. Default: `limits.bodyBytesInFlight`'s. */
  bodyBytesInFlight?: number;
  /** Live host sessions of all kinds; the next gets 503. Default: `limits.maxSessions`'s. */
  maxSessions?: number;
  /** Live host sessions one client address may hold; the next gets 503. Default: `limits.maxSessionsPerClient`'s. */
  maxSessionsPerClient?: number;
  /** Interval of SSE keep-alive comments, in ms; 0 turns them off. Default: `limits.sseKeepAliveMs`'s. */
  sseKeepAliveMs?: number;
  /**
   * A streamable HTTP session with no traffic and no open stream ends after this. Default: `limits.sessionIdleMs`'s.
   */
  sessionIdleTimeoutMs?: number;
  /**
   * WebSocket ping interval; a host that has not answered by the next ping is dropped. 0: off. Default:
   * `limits.pingIntervalMs`'s.
   */
  pingIntervalMs?: number;
  /**
   * A WebSocket host that has not answered the proxy's close frame in this time is cut off.
   * Default: `limits.closeTimeoutMs`'s.
   */
  closeTimeoutMs?: number;
  /**
   * Messages kept for a streamable HTTP session's GET stream while none is open. Default:
   * `limits.maxQueuedMessages`'s.
   */
  maxQueuedMessages?: number;
  /** Bytes of those messages held at once. Default: `limits.maxQueuedBytes`'s. */
  maxQueuedBytes?: number;
  /**
   * Bytes of sent SSE events each streamable HTTP session keeps so a host can resume a dropped
   * stream; 0 turns resumption off. Default: `limits.sseReplayBytes`'s.
   */
  sseReplayBytes?: number;
  /**
   * A connection that has not sent its whole request header in this time is closed, in ms. Default:
   * `limits.headersTimeoutMs`'s.
   */
  headersTimeoutMs?: number;
  /**
   * A request whose headers and body have not all arrived in this time is closed, in ms. Default:
   * `limits.requestBodyTimeoutMs`'s.
   */
  requestBodyTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this, in ms. Default: `limits.keepAliveTimeoutMs`'s. */
  keepAliveTimeoutMs?: number;
  /** Open connections at once; more are closed as they arrive. Default: `limits.maxConnections`'s. */
  maxConnections?: number;
  /** Open connections from one client address. Default: half of `maxConnections` (`limits.maxConnectionsPerClient`). */
  maxConnectionsPerClient?: number;
  /** Operational log (refusals, listener errors). Default silent. */
  logger?: Logger;
  /** Bodies that could not be delivered (answered to the host already), for the log. */
  onproblem?: (problem: FramingProblem, site: ProblemSite) => void;
  /** A stateless host's answer over the limit: the pooled upstream that asked is told. */
  onStatelessAnswerTooLarge?: OnStatelessAnswerTooLarge;
}

export interface ResolvedFrontendOptions {
  readonly serverNames: ReadonlySet<string>;
  readonly onSession: OnHostSession;
  readonly health: HttpFrontendOptions["health"];
  readonly metrics: HttpFrontendOptions["metrics"];
  readonly report: HttpFrontendOptions["report"];
  readonly allowedOrigins: ReadonlySet<string>;
  readonly allowLoopbackOrigins: boolean;
  readonly allowedHosts: readonly string[];
  readonly bearerTokens: readonly string[];
  readonly maxMessageBytes: number;
  readonly maxBodyBytes: number;
  readonly maxBatch: number;
  readonly maxMessageNodes: number;
  readonly bodyBytesInFlight: number;
  readonly maxSessions: number;
  readonly maxSessionsPerClient: number;
  readonly sseKeepAliveMs: number;
  readonly sessionIdleTimeoutMs: number;
  readonly pingIntervalMs: number;
  readonly closeTimeoutMs: number;
  readonly maxQueuedMessages: number;
  readonly maxQueuedBytes: number;
  readonly sseReplayBytes: number;
  readonly headersTimeoutMs: number;
  readonly requestBodyTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxConnectionsPerClient: number;
  readonly logger: Logger;
  readonly onproblem: HttpFrontendOptions["onproblem"];
  readonly onStatelessAnswerTooLarge: HttpFrontendOptions["onStatelessAnswerTooLarge"];
}

export function resolveFrontendOptions(options: HttpFrontendOptions): ResolvedFrontendOptions {
  const maxConnections = positive(options.maxConnections, DEFAULT_LIMITS.maxConnections, "maxConnections");
  const origins = new Set<string>();
  for (const origin of options.allowedOrigins ?? []) origins.add(normalizeOrigin(origin) ?? origin);
  return {
    serverNames: new Set(options.serverNames),
    onSession: options.onSession,
    health: options.health,
    metrics: options.metrics,
    report: options.report,
    allowedOrigins: origins,
    allowLoopbackOrigins: options.allowLoopbackOrigins ?? true,
    allowedHosts: (options.allowedHosts ?? DEFAULT_ALLOWED_HOSTS).map((h) => h.toLowerCase()),
    bearerTokens: (options.bearerTokens ?? []).filter((t) => t !== ""),
    maxMessageBytes: positive(options.maxMessageBytes, DEFAULT_LIMITS.maxMessageBytes, "maxMessageBytes"),
    maxBodyBytes: positive(
      options.maxBodyBytes,
      positive(options.maxMessageBytes, DEFAULT_LIMITS.maxMessageBytes, "maxMessageBytes"),
      "maxBodyBytes",
    ),
    maxBatch: positive(options.maxBatch, DEFAULT_LIMITS.maxBatch, "maxBatch"),
    maxMessageNodes: positive(options.maxMessageNodes, DEFAULT_LIMITS.maxMessageNodes, "maxMessageNodes"),
    // Never below one body as large as allowed: alone, it always fits.
    bodyBytesInFlight: Math.max(
      positive(options.bodyBytesInFlight, DEFAULT_LIMITS.bodyBytesInFlight, "bodyBytesInFlight"),
      positive(options.maxBodyBytes, options.maxMessageBytes ?? DEFAULT_LIMITS.maxMessageBytes, "maxBodyBytes"),
    ),
    maxSessions: positive(options.maxSessions, DEFAULT_LIMITS.maxSessions, "maxSessions"),
    maxSessionsPerClient: positive(
      options.maxSessionsPerClient,
      DEFAULT_LIMITS.maxSessionsPerClient,
      "maxSessionsPerClient",
    ),
    sseKeepAliveMs: options.sseKeepAliveMs ?? DEFAULT_LIMITS.sseKeepAliveMs,
    sessionIdleTimeoutMs: options.sessionIdleTimeoutMs ?? DEFAULT_LIMITS.sessionIdleMs,
    pingIntervalMs: options.pingIntervalMs ?? DEFAULT_LIMITS.pingIntervalMs,
    closeTimeoutMs: positive(options.closeTimeoutMs, DEFAULT_LIMITS.closeTimeoutMs, "closeTimeoutMs"),
    maxQueuedMessages: positive(options.maxQueuedMessages, DEFAULT_LIMITS.maxQueuedMessages, "maxQueuedMessages"),
    maxQueuedBytes: positive(options.maxQueuedBytes, DEFAULT_LIMITS.maxQueuedBytes, "maxQueuedBytes"),
    sseReplayBytes: options.sseReplayBytes ?? DEFAULT_LIMITS.sseReplayBytes,
    headersTimeoutMs: positive(options.headersTimeoutMs, DEFAULT_LIMITS.headersTimeoutMs, "headersTimeoutMs"),
    requestBodyTimeoutMs: positive(
      options.requestBodyTimeoutMs,
      DEFAULT_LIMITS.requestBodyTimeoutMs,
      "requestBodyTimeoutMs",
    ),
    keepAliveTimeoutMs: positive(options.keepAliveTimeoutMs, DEFAULT_LIMITS.keepAliveTimeoutMs, "keepAliveTimeoutMs"),
    maxConnections,
    maxConnectionsPerClient: positive(
      options.maxConnectionsPerClient,
      defaultConnectionsPerClient(maxConnections),
      "maxConnectionsPerClient",
    ),
    logger: options.logger ?? silentLogger,
    onproblem: options.onproblem,
    onStatelessAnswerTooLarge: options.onStatelessAnswerTooLarge,
  };
}

/** `scheme://host[:port]` as the browser would send it, or null for what is not a URL origin. */
export function normalizeOrigin(origin: string): string | null {
  try {
    const url = new URL(origin);
    return url.origin === "null" ? null : url.origin;
  } catch {
    return null;
  }
}

/** Connections one client may hold however few the listener takes: a host's streams and requests. */
const MIN_CONNECTIONS_PER_CLIENT = 16;

/**
 * Half the listener by default — one client cannot take it all, and raising `maxConnections`
 * (for many sessions of one client) raises it too — but never under a host's few connections
 * (all of a listener smaller than that).
 */
function defaultConnectionsPerClient(maxConnections: number): number {
  return Math.max(Math.ceil(maxConnections / 2), Math.min(maxConnections, MIN_CONNECTIONS_PER_CLIENT));
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`createHttpFrontend: ${name} must be a positive number, got ${value}`);
  return value;
}
