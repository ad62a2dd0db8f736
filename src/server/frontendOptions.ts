/**
 * Options of the HTTP listener (`serve`), every limit named with its unit and a
 * documented default. `resolveFrontendOptions` applies the defaults once, so the
 * rest of src/server reads a complete object.
 */
import type { Logger } from "../observe/logger.js";
import { silentLogger } from "../observe/logger.js";
import type { OnHostSession, ProblemSite } from "../transports/host/hostSession.js";
import { DEFAULT_SSE_KEEP_ALIVE_MS } from "../transports/host/sseWriter.js";
import { DEFAULT_MAX_QUEUED_MESSAGES, DEFAULT_SESSION_IDLE_TIMEOUT_MS } from "../transports/host/streamableHttpHost.js";
import { DEFAULT_PING_INTERVAL_MS } from "../transports/host/wsHeartbeat.js";
import { DEFAULT_MAX_MESSAGE_BYTES, type FramingProblem } from "../transports/types.js";

import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  DEFAULT_MAX_BATCH,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_CLIENT,
  DEFAULT_REQUEST_BODY_TIMEOUT_MS,
  DEFAULT_ALLOWED_HOSTS,
} from "../config/schema.js";

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
   * Default `DEFAULT_ALLOWED_HOSTS` (loopback names).
   */
  allowedHosts?: readonly string[];
  /** When non-empty, every path but `/healthz` needs `Authorization: Bearer <one of these>`. */
  bearerTokens?: readonly string[];
  /** Largest message (HTTP body, WebSocket frame) accepted, in bytes. Default 256 MiB. */
  maxMessageBytes?: number;
  /** Largest HTTP request body (one message or a batch) on `/mcp` and `/messages`, in bytes. Default `maxMessageBytes`. */
  maxBodyBytes?: number;
  /** Most messages in one POSTed JSON-RPC batch; a bigger one gets 413. Default 100. */
  maxBatch?: number;
  /** Live host sessions of all kinds; the next gets 503. Default 1000. */
  maxSessions?: number;
  /** Live host sessions one client address may hold; the next gets 503. Default 100. */
  maxSessionsPerClient?: number;
  /** Interval of SSE keep-alive comments, in ms; 0 turns them off. Default 15 000. */
  sseKeepAliveMs?: number;
  /** A streamable HTTP session with no traffic and no open stream ends after this. Default 10 min. */
  sessionIdleTimeoutMs?: number;
  /** WebSocket ping interval; a host that has not answered by the next ping is dropped. 0: off. Default 30 s. */
  pingIntervalMs?: number;
  /** Messages kept for a streamable HTTP session's GET stream while none is open. Default 1000. */
  maxQueuedMessages?: number;
  /** A connection that has not sent its whole request header in this time is closed, in ms. Default 10 s. */
  headersTimeoutMs?: number;
  /** A request whose headers and body have not all arrived in this time is closed, in ms. Default 120 s. */
  requestBodyTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this, in ms. Default 5 s. */
  keepAliveTimeoutMs?: number;
  /** Open connections at once; more are closed as they arrive. Default 2000. */
  maxConnections?: number;
  /** Operational log (refusals, listener errors). Default silent. */
  logger?: Logger;
  /** Bodies that could not be delivered (answered to the host already), for the log. */
  onproblem?: (problem: FramingProblem, site: ProblemSite) => void;
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
  readonly maxSessions: number;
  readonly maxSessionsPerClient: number;
  readonly sseKeepAliveMs: number;
  readonly sessionIdleTimeoutMs: number;
  readonly pingIntervalMs: number;
  readonly maxQueuedMessages: number;
  readonly headersTimeoutMs: number;
  readonly requestBodyTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
  readonly logger: Logger;
  readonly onproblem: HttpFrontendOptions["onproblem"];
}

export function resolveFrontendOptions(options: HttpFrontendOptions): ResolvedFrontendOptions {
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
    maxMessageBytes: positive(options.maxMessageBytes, DEFAULT_MAX_MESSAGE_BYTES, "maxMessageBytes"),
    maxBodyBytes: positive(
      options.maxBodyBytes,
      positive(options.maxMessageBytes, DEFAULT_MAX_MESSAGE_BYTES, "maxMessageBytes"),
      "maxBodyBytes",
    ),
    maxBatch: positive(options.maxBatch, DEFAULT_MAX_BATCH, "maxBatch"),
    maxSessions: positive(options.maxSessions, DEFAULT_MAX_SESSIONS, "maxSessions"),
    maxSessionsPerClient: positive(
      options.maxSessionsPerClient,
      DEFAULT_MAX_SESSIONS_PER_CLIENT,
      "maxSessionsPerClient",
    ),
    sseKeepAliveMs: options.sseKeepAliveMs ?? DEFAULT_SSE_KEEP_ALIVE_MS,
    sessionIdleTimeoutMs: options.sessionIdleTimeoutMs ?? DEFAULT_SESSION_IDLE_TIMEOUT_MS,
    pingIntervalMs: options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS,
    maxQueuedMessages: options.maxQueuedMessages ?? DEFAULT_MAX_QUEUED_MESSAGES,
    headersTimeoutMs: positive(options.headersTimeoutMs, DEFAULT_HEADERS_TIMEOUT_MS, "headersTimeoutMs"),
    requestBodyTimeoutMs: positive(
      options.requestBodyTimeoutMs,
      DEFAULT_REQUEST_BODY_TIMEOUT_MS,
      "requestBodyTimeoutMs",
    ),
    keepAliveTimeoutMs: positive(options.keepAliveTimeoutMs, DEFAULT_KEEP_ALIVE_TIMEOUT_MS, "keepAliveTimeoutMs"),
    maxConnections: positive(options.maxConnections, DEFAULT_MAX_CONNECTIONS, "maxConnections"),
    logger: options.logger ?? silentLogger,
    onproblem: options.onproblem,
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

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`createHttpFrontend: ${name} must be a positive number, got ${value}`);
  return value;
}
