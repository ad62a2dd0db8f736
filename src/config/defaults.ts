/**
 * Every default of a configurable value, as plain data: the one place a default is written.
 * The zod schema (schema.ts) takes its `.default(...)`s from here, and so does the config built
 * from command-line flags alone (flagConfig.ts), which never loads zod. Code below `config/`
 * (the engine, the transports, the fit layer) declares no defaults of its own: its callers fill
 * every option from these values.
 *
 * Nothing is imported here but types: this module is on the start-up path of every command.
 */
import type { FitPolicyOptions } from "../fit/fitPolicy.js";
import type { ImageFormat } from "../fit/settings.js";
import type { PolicySettings } from "../normalize/policy.js";

export const DEFAULT_PORT = 8808;
export const DEFAULT_HOST = "127.0.0.1";
/** The config file `serve` and `login` read when no `--config` is given (relative to the cwd). */
export const DEFAULT_CONFIG_FILE = "proxy.config.json";
/**
 * The loopback host names, as a URL or a `Host` header writes them (IPv6 in brackets): the one
 * list behind the bind check, the default `allowedHosts` and the loopback redirect origins.
 */
export const LOOPBACK_HOSTS: readonly string[] = Object.freeze(["localhost", "127.0.0.1", "[::1]"]);
/** Host names allowed in the `Host` header by default: loopback only (DNS rebinding defence). */
export const DEFAULT_ALLOWED_HOSTS: readonly string[] = LOOPBACK_HOSTS;
export const DEFAULT_LOG_LEVEL = "info" as const;
/** `audit` logs less than a proxy by default: its report is the output, log lines only noise. */
export const DEFAULT_AUDIT_LOG_LEVEL = "warn" as const;

/** `limits.*`: the value each limit takes when the config does not set it. */
export const DEFAULT_LIMITS = Object.freeze({
  /** Largest message on any transport: 256 MiB. */
  maxMessageBytes: 256 * 1024 * 1024,
  /** Entries whose text/blob is longer pass untouched: 256 MiB. */
  maxNormalizeBytes: 256 * 1024 * 1024,
  /** Bytes charset detection reads over one message's entries: eight full samples of 8 KiB. */
  charsetDetectionBytes: 64 * 1024,
  requestTimeoutMs: 300_000,
  /**
   * An upstream that has not answered a session's first `initialize` in this time failed to start:
   * below an SDK client's own wait (60 s), after which it closes and nothing would be told.
   */
  initializeTimeoutMs: 30_000,
  /** What a host sent after a notification waits at most this long for a streamable HTTP server's 202. */
  upstreamAckTimeoutMs: 10_000,
  /**
   * `notifications/initialized` waits at most this long for a streamable HTTP server to answer the
   * session's GET stream, opened just before it (short: a server that sends its headers only with
   * its first event holds every session's start this long).
   */
  upstreamStreamWaitMs: 1_000,
  /** Idle keep-alive connections kept open to each streamable HTTP server, shared by its sessions. */
  upstreamIdleConnections: 1000,
  /** An HTTP or WebSocket upstream has this long to connect (and to close). */
  connectTimeoutMs: 10_000,
  /** A stdio upstream has this long between SIGTERM and SIGKILL when it is ended. */
  killGraceMs: 2_000,
  /** Lines of one stdio upstream's stderr logged per 10 s; past them they are counted. */
  stderrLinesLogged: 500,
  maxSessions: 1000,
  /** Live host sessions one client address may hold. */
  maxSessionsPerClient: 100,
  /** How long SIGTERM/SIGINT wait for in-flight requests. */
  shutdownGraceMs: 10_000,
  /** First wait before a new upstream after one died (doubles per consecutive failure). */
  restartBackoffMs: 250,
  /** The backoff never grows past this. */
  maxRestartBackoffMs: 30_000,
  /** Bytes a host connection may leave untaken before the proxy stops reading its upstream: 1 MiB. */
  hostBufferBytes: 1024 * 1024,
  /** Bytes an upstream may leave untaken before the proxy stops reading its host: 1 MiB. */
  upstreamBufferBytes: 1024 * 1024,
  /** Payload strings from an upstream this long stay bytes: 256 KiB. */
  rawStringBytes: 256 * 1024,
  /** Messages in one JSON-RPC batch from a host. */
  maxBatch: 100,
  /** Nodes (objects, arrays, members and elements) in one message a host sends `serve` over HTTP or WebSocket. */
  maxMessageNodes: 50_000,
  /** Nodes in one message from an upstream (a result of more is not parsed: its request gets an error). */
  maxUpstreamMessageNodes: 250_000,
  /**
   * Bytes an upstream's message over `maxMessageBytes` may run on past it, dropped, before its
   * stream is cut (64 MiB): a result a little too large that ends is skipped and reading goes on;
   * one without end would hold a core for as long as it is sent.
   */
  maxSkippedMessageBytes: 64 * 1024 * 1024,
  /** Pongs to a WebSocket upstream's pings not yet written, past which it is ended (`ws`'s own bound). */
  maxPendingPongs: 60,
  /** Requests of an upstream waiting at once for its host's answer (sampling, elicitation, roots), per session. */
  maxUpstreamRequests: 1000,
  /** Requests of a host waiting at once for its upstream's answer, per session. */
  maxHostRequests: 10_000,
  /** HTTP request bodies held at once over every connection: 256 MiB (one body as large as the default allows). */
  bodyBytesInFlight: 256 * 1024 * 1024,
  /** Started upstreams per server (and token) serving stateless requests. */
  statelessPoolSize: 4,
  /** Longest a pooled upstream is not read for one stateless host that is behind: 5 s. */
  statelessHoldMs: 5000,
  /** A streamable HTTP session (or a pooled stateless upstream) idle this long is ended: 10 min. */
  sessionIdleMs: 10 * 60 * 1000,
  /** A WebSocket host is pinged this often and must answer before the next ping. */
  pingIntervalMs: 30_000,
  /** An SSE stream to a host gets a keep-alive comment this often, so idle proxies do not cut it. */
  sseKeepAliveMs: 15_000,
  /** Server messages kept for a streamable HTTP session while its host has no GET stream open. */
  maxQueuedMessages: 1000,
  /** Bytes of those messages held at once (the newest is kept even when larger): 1 MiB. */
  maxQueuedBytes: 1024 * 1024,
  /** Bytes of sent SSE events a streamable HTTP session keeps so a host can resume a dropped stream: 1 MiB. */
  sseReplayBytes: 1024 * 1024,
  /** A WebSocket host has this long to answer the proxy's close frame before its connection is cut. */
  closeTimeoutMs: 2_000,
  /** A connection has this long to send its request headers. */
  headersTimeoutMs: 10_000,
  /** A request (headers and body) must have arrived in this time. */
  requestBodyTimeoutMs: 120_000,
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: 5_000,
  /** Open HTTP connections (streams, keep-alive, upgrades) at once. */
  maxConnections: 2_000,
  /** How long an OAuth browser login waits for the redirect back: 5 min. */
  loginTimeoutMs: 5 * 60_000,
  /** One request to an authorization server or metadata URL. */
  oauthRequestTimeoutMs: 30_000,
  /** Width × height above which an image is refused before decoding (8192 × 8192). */
  imageMaxPixels: 8192 * 8192,
  /** A message waits at most this long for its images to be fitted. */
  fitTimeoutMs: 30_000,
  /**
   * In process, over a transport that cannot stop reading (the SDK's own): bytes of messages held
   * behind a result whose images are fitted, past which that result goes on as it came: 64 MiB.
   */
  fitHeldBytes: 64 * 1024 * 1024,
  /** Images decoded and encoded at the same time, over all sessions. */
  fitConcurrency: 2,
  /** How long the pages of a cut tool result can be read: 10 min. */
  spillTtlMs: 10 * 60_000,
  /** UTF-8 bytes of pages held at once, over all sessions: 64 MiB. */
  spillMaxBytes: 64 * 1024 * 1024,
  /** Task ids (task → creating method) remembered per upstream connection. */
  maxTrackedTasks: 1000,
});

/** `normalize.images` when set to `true`, and the fields an object leaves out. */
export const DEFAULT_IMAGES = Object.freeze({
  /** The long side Claude's API recommends (larger is downscaled anyway). */
  maxDimension: 1568,
  /** Bytes of one image after fitting (1 MiB). */
  maxBytes: 1024 * 1024,
  /** What every host that takes images accepts. */
  formats: Object.freeze(["image/png", "image/jpeg", "image/gif", "image/webp"]) as readonly ImageFormat[],
  resources: false,
});

/**
 * The engine's `normalize.*` switches when the config leaves them out: every rewrite happens
 * unless turned off. (`maxNormalizeBytes` is a limit: `limits.maxNormalizeBytes`.)
 */
export const DEFAULT_NORMALIZE: Readonly<Omit<PolicySettings, "maxNormalizeBytes">> = Object.freeze({
  unwrapBlobs: true,
  transcode: true,
  reencodeBinaryText: true,
  fixMime: true,
  media: true,
  detectCharset: true,
  charset: "transcode",
  extraTextualTypes: Object.freeze([]) as readonly string[],
  dryRun: false,
});

/**
 * The fit layer's `normalize.*` keys when the config leaves them out: everything off — images
 * pass as they are, embedded resources are kept, tool results are never cut.
 */
export const DEFAULT_FIT: Readonly<Required<Omit<FitPolicyOptions, "rules">>> = Object.freeze({
  images: false,
  embeddedResources: "keep",
  maxResultBytes: false,
  dryRun: false,
});
