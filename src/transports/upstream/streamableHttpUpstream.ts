/**
 * Streamable HTTP client (MCP spec 2025-06-18 / 2025-11-25 "Transports › Streamable HTTP"),
 * written on `fetch` rather than the SDK's `StreamableHTTPClientTransport`, which validates
 * every message with zod (strips what we must forward) and parses SSE in ways not built for
 * 50 MiB events.
 *
 * - Every message is one POST (`Accept: application/json, text/event-stream`). 202 answers
 *   notifications and responses; a request is answered by a JSON body (one message or a batch)
 *   or an SSE stream, read in the background so one long stream never blocks other sends.
 * - `Mcp-Session-Id` from any response is sent back; `MCP-Protocol-Version` is the version the
 *   upstream's initialize result gave, or the host's own header when the proxy forwards it.
 *   The host's `mcp-*` headers (`ProxySendOptions.forwardHeaders`) go out verbatim, so a
 *   version the SDK has never heard of (the stateless `2026-07-28`: no initialize, no session)
 *   passes through: nothing here insists on initialize.
 * - The optional GET stream for server-initiated messages is the `ServerStream`'s: opened just
 *   before `notifications/initialized` goes, which waits for its answer, and kept open.
 * - Event ids belong to the stream that carried them. The GET stream reconnects with its own
 *   last id; a POST's stream that ends before its answers is resumed (a GET carrying that
 *   stream's last id) when it had ids. A GET never carries another stream's id: the server
 *   would replay that stream on it, and what it sends the session (roots/list, sampling,
 *   elicitation, resource updates) would go nowhere.
 * - A request that cannot be answered (network error, HTTP error status, a stream that ends
 *   first) gets a JSON-RPC error response delivered in its place, so the host is answered;
 *   `onerror` says the same. Errors name the URL without userinfo or query, never header values.
 */
import { JSONRPC } from "../../errors/jsonRpcCodes.js";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { silentLogger, type Logger } from "../../observe/logger.js";
import type { Framed } from "../lineFraming.js";
import type {
  FramingProblem,
  JSONRPCMessage,
  ProxySendOptions,
  UpstreamMessageExtra,
  UpstreamTransport,
} from "../types.js";
import {
  errorBodyReason,
  sentSecrets,
  framedFromEvent,
  framingProblemOf,
  mediaTypeEssence,
  readJsonBody,
  readSseBody,
  UnendedEventError,
} from "./httpBodies.js";
import {
  describeUrl,
  forwardableHeaders,
  networkErrorText,
  statusLine,
  withoutSecrets,
  withoutSecretsInError,
} from "./upstreamMessages.js";
import { HttpFlowControl } from "./httpFlowControl.js";
import { SENT } from "../drainWaiter.js";
import { messageText } from "../wireJson.js";
import { PostAbort, type AbortLike } from "./postAbort.js";
import {
  headerRecord,
  nodeFetchWith,
  withAbortSignals,
  type BodyStreamLike,
  type FetchLikeLight,
  type ResponseLike,
} from "./nodeFetch.js";
import { sameOriginRedirects } from "./sameOriginRedirects.js";
import {
  LONGEST_TIMER_MS,
  newStreamCursor,
  reconnectDelayMs,
  type StreamCursor,
  waitToReconnect,
} from "./streamCursor.js";
import {
  DEFAULT_SERVER_STREAM_RETRIES,
  DEFAULT_SERVER_STREAM_RETRY_MS,
  ServerStream,
  type StreamAnswer,
} from "./serverStream.js";
import { settledWithin } from "./settledWithin.js";
import {
  cancelledRequestOf,
  errorResponse,
  FAILED_REQUEST,
  idKey,
  isObj,
  methodOf,
  requestIdsOf,
  responseIdOf,
  type RequestId,
} from "../jsonrpc.js";
import { timeoutSignal } from "./timeoutSignal.js";

/** Default time `start()` waits for the reachability probe, and `close()` for the DELETE (ms). */
export const DEFAULT_HTTP_CONNECT_TIMEOUT_MS = 10_000;
export { DEFAULT_SERVER_STREAM_RETRIES, DEFAULT_SERVER_STREAM_RETRY_MS } from "./serverStream.js";

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** What every HTTP-based upstream transport (streamable HTTP, legacy SSE) is configured with. */
export interface HttpConnectionOptions {
  url: string | URL;
  /** Sent with every request (e.g. `Authorization`). Values are never logged. */
  headers?: Readonly<Record<string, string>>;
  /** Injection point for tests; default the global `fetch`. */
  fetch?: FetchLike;
  /**
   * Values `fetch` sends that are not in `headers` (an OAuth layer's tokens). They and the
   * configured header values are removed from whatever of the server's answers is quoted.
   */
  secrets?: (() => Iterable<string | undefined>) | undefined;
  logger?: Logger;
  /** Largest message accepted from the upstream, in bytes (`limits.maxMessageBytes`). */
  maxMessageBytes: number;
  /** JSON bodies: payload literals this long are read as raw strings (off by default; the proxy sets it). */
  rawStringBytes?: number | undefined;
  /** A message of more nodes is not parsed (`limits.maxUpstreamMessageNodes`); unbounded when absent. */
  maxMessageNodes?: number | undefined;
  /**
   * An SSE event over `maxMessageBytes` still running this many bytes past it without end cuts
   * its stream (`limits.maxSkippedMessageBytes`); never cut when absent.
   */
  maxSkippedMessageBytes?: number | undefined;
}

export interface HttpUpstreamOptions extends HttpConnectionOptions {
  /** Timeout of the `start()` probe and the session DELETE in `close()`, in ms. Default 10 s. */
  connectTimeoutMs?: number;
  /**
   * How long what the host sent after a notification (or a response to the upstream) waits for
   * that POST to be acknowledged before it goes anyway, in ms (`limits.upstreamAckTimeoutMs`);
   * 0: it never waits; undefined: it waits until the acknowledgement comes or the transport closes.
   */
  ackTimeoutMs?: number;
  /**
   * How long `notifications/initialized` waits for the server's answer to the session's GET
   * stream, opened just before it, in ms (`limits.upstreamStreamWaitMs`); 0: it never waits;
   * undefined: until the answer comes or the transport closes.
   */
  serverStreamWaitMs?: number;
  /**
   * How long the POST of a message that expects no answer (a notification, an answer to the
   * server's request) may go unacknowledged before it is ended, in ms (the proxy passes
   * `limits.requestTimeoutMs`); undefined: until the transport closes.
   */
  unacknowledgedTimeoutMs?: number;
  /**
   * Idle keep-alive connections kept open to the server, shared with every other session to it
   * (`limits.upstreamIdleConnections`); undefined: Node's agent default. Without an injected fetch only.
   */
  idleConnections?: number;
  /** Open the GET stream for server-initiated messages after initialization. Default true. */
  openServerStream?: boolean;
  serverStreamRetries?: number;
}

/** What becomes of a JSON array the server sends: on as one message, or each item on its own. */
type Arrays = "whole" | "split";

export class StreamableHttpUpstreamTransport implements UpstreamTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: UpstreamMessageExtra) => void) | undefined;
  onproblem?: ((problem: FramingProblem) => void) | undefined;

  private readonly url: URL;
  private readonly where: string;
  private readonly fetch: FetchLikeLight;
  private readonly logger: Logger;
  private readonly maxMessageBytes: number;
  /** The configured headers, read once as `fetch` reads them (`headerRecord`): every request starts from a copy. */
  private readonly baseHeaders: Record<string, string>;
  private readonly abort = new AbortController();
  private readonly initializeIds = new Set<RequestId>();
  private readonly reading = new Set<Promise<void>>();
  private readonly flow = new HttpFlowControl();
  private protocolVersion: string | undefined;
  /** The latest `MCP-Protocol-Version` a host sent: for what has none, before (or without) an initialize answer. */
  private hostVersion: string | undefined;
  private session: string | undefined;
  private started = false;
  private closed = false;
  /** The session's GET stream, for what the server sends outside a call. */
  private readonly serverStream: ServerStream;
  /** Set once a GET of this session was answered with an event stream: the server has GET streams. */
  private streamServed = false;
  private lastError: string | undefined;
  /** Set once the server answered a request sent under the session it gave. */
  private sessionServed = false;
  /**
   * Set when the server ended a session that had worked (404 to its id): the connection ends, and
   * no failure of the server. A 404 to a session that never worked (replicas behind a balancer
   * that does not keep a session to one of them) is a failure like any other refusal.
   */
  private sessionEnded = false;
  /**
   * Set while a POST that expects no answer (a notification, or a response to the upstream's
   * request) has not been acknowledged: what the host sent after it waits until then.
   */
  private unacknowledged: Promise<void> | undefined;
  /**
   * Every POST runs under an abort of its own (a `PostAbort`), from `send()` until its answer is read, which
   * `close()` pulls. A request's is also kept here by its id: when the request is cancelled (by
   * the host, or by the proxy's deadline) its POST is ended — or never sent, if it still waits
   * behind a notification — whether it waits for response headers or its response stream has yet
   * to answer, so a server that never answers cannot keep a connection per request open for the
   * life of the session. A notification's is pulled when `unacknowledgedTimeoutMs` passes without its 202.
   */
  private readonly inFlight = new Set<PostAbort>();
  private readonly cancellable = new Map<string, PostAbort>();

  /** What the proxy sends this upstream, never quoted from its answers (made once, used per message). */
  private readonly sentSecrets = (): Array<string | undefined> => sentSecrets(this.options);

  secretsSent(): Iterable<string | undefined> {
    return this.sentSecrets();
  }

  constructor(private readonly options: HttpUpstreamOptions) {
    this.url = new URL(options.url);
    this.where = describeUrl(this.url);
    // Without an injected fetch (the OAuth layer's, a test's), requests go out on node:http.
    // Either way a redirect is followed only within the upstream's origin.
    this.fetch = sameOriginRedirects(
      options.fetch === undefined ? nodeFetchWith(options.idleConnections) : withAbortSignals(options.fetch),
    );
    this.logger = (options.logger ?? silentLogger).child({ upstream: this.where });
    this.maxMessageBytes = options.maxMessageBytes;
    this.baseHeaders = headerRecord(options.headers);
    this.serverStream = new ServerStream(
      {
        logger: this.logger,
        closed: () => this.closed,
        get: (lastEventId) => this.getStream(lastEventId, this.abort.signal, "the GET stream"),
        // What the server sends of its own accord as an array (a batch of notifications) goes on whole.
        read: (body, cursor) => this.readStream(body, new Set(), cursor, this.abort.signal, "whole"),
        initializing: () => this.initializeIds.size > 0,
        track: (work) => void this.keep(work),
        sentSecrets: this.sentSecrets,
      },
      {
        enabled: options.openServerStream !== false,
        retries: options.serverStreamRetries ?? DEFAULT_SERVER_STREAM_RETRIES,
        waitMs: options.serverStreamWaitMs,
      },
    );
  }

  get sessionId(): string | undefined {
    return this.session;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  /** Why the connection ended or last failed, for the proxy to tell hosts. */
  describeEnd(): string | undefined {
    return this.lastError;
  }

  endedBySession(): boolean {
    return this.sessionEnded;
  }

  /**
   * Checks the upstream answers HTTP at all (an OPTIONS request: no side effects, any status
   * will do), so a wrong URL or a server that is down fails here with a clear error.
   */
  async start(): Promise<void> {
    if (this.started) throw new Error("StreamableHttpUpstreamTransport already started");
    this.started = true;
    try {
      const response = await this.fetch(this.url, {
        method: "OPTIONS",
        headers: { ...this.baseHeaders },
        // Closed while it starts (a shutdown): the probe ends then, not when its time is up.
        signal: AbortSignal.any([this.abort.signal, this.timeoutSignal()]),
      });
      await response.body?.cancel().catch(() => {});
    } catch (error) {
      throw new NormalizerError(
        "UPSTREAM_UNREACHABLE",
        `cannot reach upstream ${this.where}: ${
          (error as Error | undefined)?.name === "TimeoutError"
            ? `no answer within ${this.connectTimeoutMs} ms (limits.connectTimeoutMs)`
            : networkErrorText(error, this.sentSecrets())
        }`,
        { url: this.where },
        { cause: error },
      );
    }
  }

  /**
   * Messages reach the upstream in the order the host sent them across a notification: one that
   * expects no answer is acknowledged (202) before anything sent after it goes out, as the SDK's
   * own client does. The upstream sees `notifications/initialized` before the session's first
   * request (and after the session's GET stream is open: `ServerStream`), and that request
   * goes on the warm connection the notification just freed instead of
   * a new one (which, under a burst of sessions, waits in the upstream's accept queue). Requests
   * never wait for each other. A notification not acknowledged within `ackTimeoutMs` holds what
   * follows no longer (logged): a server that never answers it cannot stall the session. What
   * waits counts as queued for the upstream from the moment it is sent, so a host that goes on
   * sending meanwhile is held back like one whose POSTs are slow.
   */
  send(message: JSONRPCMessage, options?: ProxySendOptions): Promise<void> {
    let body: string;
    try {
      body = messageText(message);
    } catch (error) {
      return Promise.reject(error);
    }
    const bytes = Buffer.byteLength(body);
    this.flow.posting(bytes);
    const ids = requestIdsOf(message);
    const own = new PostAbort();
    this.inFlight.add(own);
    const single = ids.length === 1 ? idKey(ids[0]!) : undefined;
    if (single !== undefined) this.cancellable.set(single, own);
    let before = this.unacknowledged;
    const initializing = carries(message, "initialize");
    const early = this.serverStream.sending(initializing, carries(message, "notifications/initialized"), before);
    if (early !== undefined) before = early.waited;
    const go = (): Promise<void> => {
      // Closed while the notification waited for the GET stream: the session has ended, nothing is owed.
      if (early !== undefined && this.closed) return this.unsent(bytes, own);
      return this.post(message, body, bytes, ids, own, single, options);
    };
    const sent = before === undefined ? go() : before.then(go);
    if (early !== undefined) this.serverStream.askAgainIfRefused(sent, early.answered);
    this.abortCancelled(message, own);
    // The session's id comes with the answer to `initialize`: what the host sent after it (piped
    // at once, its `notifications/initialized` too) waits for that answer's headers, however long
    // (the request's own timeout ends it), or it would go without the id.
    if (ids.length > 0) {
      if (this.sessionId === undefined && initializing) this.holdFollowers(before, sent, message, undefined);
      return sent;
    }
    // The waits for the acknowledgement start when the POST does.
    void (before ?? SENT).then(() => this.endIfUnacknowledged(sent, message, own));
    const limit = this.options.ackTimeoutMs;
    if (limit !== 0) this.holdFollowers(before, sent, message, limit);
    // Not held for the acknowledgement, what follows still goes after the notification's POST does.
    else if (early?.waited !== undefined) this.holdFollowers(undefined, early.waited, message, undefined);
    return sent;
  }

  /** What is sent after `message` waits until its POST has its answer's headers, or `limit` ms. */
  private holdFollowers(
    before: Promise<void> | undefined,
    sent: Promise<void>,
    message: JSONRPCMessage,
    limit: number | undefined,
  ): void {
    const acknowledged = (before ?? SENT).then(() => this.acknowledgedWithin(sent, message, limit));
    this.unacknowledged = acknowledged;
    void acknowledged.then(() => {
      if (this.unacknowledged === acknowledged) this.unacknowledged = undefined;
    });
  }

  /**
   * Settles when `sent` does, or `limit` ms after it started (if there is a limit), whichever
   * comes first. The POST itself goes on: a late acknowledgement still delivers the message.
   */
  private acknowledgedWithin(sent: Promise<void>, message: JSONRPCMessage, limit: number | undefined): Promise<void> {
    return settledWithin(sent, limit, () => {
      if (this.closed) return;
      this.logger.warn("upstream has not acknowledged a message; what the host sent after it goes on", {
        message: methodOf(message) ?? "response",
        waitedMs: limit,
        limit: "limits.upstreamAckTimeoutMs",
      });
    });
  }

  /** Ends the POSTs of the requests the `notifications/cancelled` in `message` (one, or a batch) name. */
  private abortCancelled(message: unknown, own: PostAbort): void {
    if (Array.isArray(message)) {
      for (const item of message) this.abortCancelled(item, own);
      return;
    }
    const id = cancelledRequestOf(message);
    if (id === undefined) return;
    const target = this.cancellable.get(idKey(id));
    // A batch that cancels its own request is sent as it is: the server sorts that out.
    if (target !== own) target?.abort();
  }

  /**
   * Ends the POST of a message that expects no answer if the server has not acknowledged it within
   * `unacknowledgedTimeoutMs` (logged): a server that never acknowledges cannot keep a connection
   * open per notification for the life of the session.
   */
  private endIfUnacknowledged(sent: Promise<void>, message: JSONRPCMessage, own: PostAbort): void {
    const limit = this.options.unacknowledgedTimeoutMs;
    if (limit === undefined || this.closed) return;
    const timer = setTimeout(() => {
      if (this.closed) return;
      this.logger.warn("upstream has not acknowledged a message; its POST is ended", {
        message: methodOf(message) ?? "response",
        waitedMs: limit,
        limit: "limits.requestTimeoutMs",
      });
      own.abort();
    }, limit);
    timer.unref();
    const clear = (): void => clearTimeout(timer);
    void sent.then(clear, clear);
  }

  /**
   * POSTs one message, whose `bytes` `send` counted as queued: they are uncounted once it has its
   * answer's headers. It runs under `own` (see `inFlight`), let go once its answer is read; a
   * request cancelled before its turn (it waited behind a notification) is not sent at all.
   */
  private async post(
    message: JSONRPCMessage,
    body: string,
    bytes: number,
    ids: RequestId[],
    own: PostAbort,
    single: string | undefined,
    options?: ProxySendOptions,
  ): Promise<void> {
    const release = (): void => {
      this.inFlight.delete(own);
      if (single !== undefined && this.cancellable.get(single) === own) this.cancellable.delete(single);
    };
    if (own.aborted && !this.closed) {
      this.flow.posted(bytes);
      release();
      this.logger.debug("cancelled request not sent: it was cancelled before its turn", { id: ids[0] });
      return;
    }
    const handedOff = await this.exchange(message, body, bytes, ids, own, options).catch((error: unknown) => {
      release();
      throw error;
    });
    if (handedOff) void handedOff.reading.then(release, release);
    else release();
  }

  /**
   * Sends one POST under `signal` and handles its answer; resolves once the response headers are
   * in, with the reading of its body (still going on in the background) when there is one.
   */
  private async exchange(
    message: JSONRPCMessage,
    body: string,
    bytes: number,
    ids: RequestId[],
    signal: AbortLike,
    options?: ProxySendOptions,
  ): Promise<{ reading: Promise<void> } | void> {
    if (this.closed) {
      this.flow.posted(bytes);
      throw new NormalizerError("UPSTREAM_CLOSED", `upstream ${this.where} is closed`);
    }
    // Its answer gives the protocol version, alone or in a batch's answers.
    for (const item of Array.isArray(message) ? (message as unknown[]) : [message]) {
      const id = methodOf(item) === "initialize" ? requestIdsOf(item as JSONRPCMessage)[0] : undefined;
      if (id !== undefined) this.initializeIds.add(id);
    }
    const what = methodOf(message) ?? (ids.length > 0 ? "batch" : "response");
    let response: ResponseLike;
    try {
      response = await this.fetch(this.url, {
        method: "POST",
        headers: this.headers("application/json, text/event-stream", options?.forwardHeaders, true),
        body,
        signal,
      });
    } catch (error) {
      if (this.closed) return;
      if (signal.aborted) {
        // Cancelled, or a notification not acknowledged in time: nothing more is owed.
        this.forget(ids);
        this.logger.debug("POST ended before the upstream answered", { message: what, id: ids[0] });
        return;
      }
      // An injected fetch (the OAuth layer) throws NormalizerErrors that already say what to do.
      if (error instanceof NormalizerError) return this.fail(ids, error);
      return this.fail(
        ids,
        new NormalizerError(
          "UPSTREAM_UNREACHABLE",
          `cannot reach upstream ${this.where} (POST ${what}): ${networkErrorText(error, this.sentSecrets())}`,
          { url: this.where },
        ),
      );
    } finally {
      this.flow.posted(bytes);
    }
    // A request answered under the session it had already given: the session worked (a later 404
    // ends it, not the server). A notification's 202, or a GET stream, may come from a replica
    // that never checks the session: they do not count.
    if (response.ok && ids.length > 0 && this.session !== undefined) this.sessionServed = true;
    this.rememberSession(response);
    if (!response.ok) return this.failStatus(ids, response, `POST ${what}`, signal);
    this.serverStream.serverAnswered();
    if (response.status === 202 || ids.length === 0) {
      await response.body?.cancel().catch(() => {});
      // The spec answers 202 only to notifications and responses: a request's answer may never come.
      if (ids.length > 0)
        this.logger.warn("upstream answered a request with 202 and no body; its answer may never come", {
          request: what,
          waitsAtMost: "limits.requestTimeoutMs",
        });
      return;
    }
    const type = mediaTypeEssence(response.headers.get("content-type"));
    if (!response.body || (type !== "text/event-stream" && type !== "application/json")) {
      await response.body?.cancel().catch(() => {});
      if (signal.aborted) return this.forget(ids);
      return this.fail(
        ids,
        new NormalizerError(
          "UPSTREAM_HTTP_ERROR",
          `upstream ${this.where} answered POST ${what} with content type ${JSON.stringify(type ?? "none")}, ` +
            `expected application/json or text/event-stream`,
          { url: this.where },
        ),
      );
    }
    const pending = new Set(ids);
    const stream = response.body;
    // An array answering a batch goes on whole; one answering a single message is taken apart.
    const arrays: Arrays = Array.isArray(message) ? "whole" : "split";
    const reading = this.background(
      type === "application/json"
        ? this.readJson(stream, pending, what, signal, arrays)
        : this.readPostStream(stream, pending, signal, arrays),
      pending,
      what,
      signal,
    );
    return { reading };
  }

  /** Bytes of POST bodies the upstream has not answered with response headers yet. */
  get queuedBytes(): number {
    return this.flow.queuedBytes;
  }

  whenDrained(): Promise<void> {
    return this.flow.whenDrained();
  }

  /** Stops pulling the upstream's SSE response streams (a JSON body in progress is still read whole). */
  pauseReading(): void {
    this.flow.gate.close();
  }

  resumeReading(): void {
    this.flow.gate.open();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.serverStream.close();
    this.abort.abort();
    for (const own of this.inFlight) own.abort();
    this.inFlight.clear();
    this.cancellable.clear();
    this.flow.end();
    await Promise.allSettled([...this.reading]);
    if (this.session !== undefined) {
      // Spec: clients that no longer need a session SHOULD DELETE it (405 = not supported).
      try {
        const response = await this.fetch(this.url, {
          method: "DELETE",
          headers: this.headers(undefined, undefined, false),
          signal: this.timeoutSignal(),
        });
        await response.body?.cancel().catch(() => {});
      } catch (error) {
        this.logger.debug("session DELETE failed", { error: networkErrorText(error, this.sentSecrets()) });
      }
    }
    this.onclose?.();
  }

  /**
   * A request's headers as a plain object with lower-case names (what `node:http` takes, and a
   * `fetch` reads as well): no `Headers` object per request.
   */
  private headers(
    accept: string | undefined,
    forward: Readonly<Record<string, string>> | undefined,
    json: boolean,
  ): Record<string, string> {
    const headers = { ...this.baseHeaders };
    if (accept) headers.accept = accept;
    if (json) headers["content-type"] = "application/json";
    if (this.session !== undefined) headers["mcp-session-id"] = this.session;
    for (const [name, value] of forwardableHeaders(forward)) {
      headers[name] = value;
      if (name === "mcp-protocol-version") this.hostVersion = value;
    }
    // The version the initialize answer gave; without one (a pooled upstream serving stateless
    // hosts is never initialized here), the latest a host sent. A host's header never stands in
    // for the negotiated version: one bad header must not stick to a session.
    const version = this.protocolVersion ?? this.hostVersion;
    if (version !== undefined && headers["mcp-protocol-version"] === undefined)
      headers["mcp-protocol-version"] = version;
    return headers;
  }

  private rememberSession(response: ResponseLike): void {
    const session = response.headers.get("mcp-session-id");
    if (session) this.session = session;
  }

  private get connectTimeoutMs(): number {
    return this.options.connectTimeoutMs ?? DEFAULT_HTTP_CONNECT_TIMEOUT_MS;
  }

  private timeoutSignal(): AbortSignal {
    return timeoutSignal(this.connectTimeoutMs);
  }

  /**
   * Runs a body reader in the background; requests it leaves unanswered get an error, unless
   * `signal` ended it (the transport closed, or the request was cancelled: nothing is owed then).
   */
  private background(reading: Promise<void>, pending: Set<RequestId>, what: string, signal: AbortLike): Promise<void> {
    let cut: UnendedEventError | undefined;
    const done = reading
      .catch((error: unknown) => {
        if (error instanceof UnendedEventError) cut = error;
        if (!this.closed && !signal.aborted)
          this.logger.warn("response stream failed", {
            request: what,
            error: networkErrorText(error, this.sentSecrets()),
          });
      })
      .then(() => {
        if (this.closed || pending.size === 0) return;
        if (signal.aborted) {
          this.forget([...pending]);
          this.logger.debug("cancelled request's response stream ended before the upstream answered", {
            id: [...pending][0],
          });
          return;
        }
        this.fail(
          [...pending],
          cut === undefined
            ? new NormalizerError(
                "UPSTREAM_CLOSED",
                `upstream ${this.where} ended the response to POST ${what} before answering`,
                { url: this.where },
              )
            : new NormalizerError(
                "UPSTREAM_UNREADABLE",
                `upstream ${this.where}'s response to POST ${what}: ${cut.message}`,
                {
                  url: this.where,
                },
              ),
        );
      });
    return this.keep(done);
  }

  /**
   * Keeps `work` among what `close()` waits for, until it settles; the promise kept, which is the
   * one to handle (a rejection of `work` is also its rejection).
   */
  private keep(work: Promise<void>): Promise<void> {
    const kept = work.finally(() => this.reading.delete(kept));
    this.reading.add(kept);
    return kept;
  }

  private async readJson(
    body: BodyStreamLike,
    pending: Set<RequestId>,
    what: string,
    signal: AbortLike,
    arrays: Arrays,
  ): Promise<void> {
    // The request this body answers: what else it carries belongs to it, still once it is answered.
    const carrier = firstOf(pending);
    const framed = await readJsonBody(
      body,
      this.maxMessageBytes,
      signal,
      this.options.rawStringBytes,
      this.options.maxMessageNodes,
    );
    if (!framed) return;
    if (framed.problem) {
      const problem = framed.problem;
      // A JSON body answers its own POST: an answer left unread (over maxMessageBytes, or of more
      // nodes than allowed) whose id could not be read (the SDK writes the id last) is that one
      // request's, answered as any such answer (not a message of the server's own, which answers nothing).
      const unread = problem.kind === "too-large" || problem.kind === "too-complex";
      const owned = unread && problem.id === undefined && !problem.asks && pending.size === 1;
      this.deliver(owned ? { problem: { ...problem, id: carrier! } } : framed, pending, arrays);
      if (pending.size === 0 || this.closed || signal.aborted) return;
      // An answer that cannot be read (an HTML error page sent as JSON): said so, not "no answer".
      const ids = [...pending];
      pending.clear();
      const why =
        problem.kind === "too-large"
          ? `a JSON body of ${problem.bytes} bytes, over limits.maxMessageBytes`
          : problem.kind === "too-complex"
            ? `a JSON body of more nodes than limits.maxUpstreamMessageNodes (${problem.limit})`
            : `a JSON body that could not be read (${problem.kind})`;
      return this.fail(
        ids,
        new NormalizerError("UPSTREAM_HTTP_ERROR", `upstream ${this.where} answered POST ${what} with ${why}`, {
          url: this.where,
        }),
      );
    }
    this.deliver(framed, pending, arrays, carrier);
  }

  /**
   * A POST's SSE stream; when it ends or drops (the connection cut) before answering and it
   * carried event ids, it is resumed with a GET carrying its last id, up to `serverStreamRetries`
   * times in a row without a new event (a server that closes streams to have clients poll long
   * calls; a network blip). A drop it could not resume is thrown, for the log.
   */
  private async readPostStream(
    body: BodyStreamLike,
    pending: Set<RequestId>,
    signal: AbortLike,
    arrays: Arrays,
  ): Promise<void> {
    const cursor = newStreamCursor(DEFAULT_SERVER_STREAM_RETRY_MS);
    let dropped = await this.readToEnd(body, pending, cursor, signal, arrays);
    const retries = this.options.serverStreamRetries ?? DEFAULT_SERVER_STREAM_RETRIES;
    let idle = 0;
    // A stream the proxy cut (an event without end) is not asked for again: it would bring the same.
    const resumable = (): boolean => !(dropped instanceof UnendedEventError) && cursor.lastEventId !== undefined;
    while (pending.size > 0 && resumable() && !signal.aborted && !this.closed && idle < retries) {
      if (dropped !== undefined)
        this.logger.info("response stream dropped; resuming it", {
          error: networkErrorText(dropped, this.sentSecrets()),
        });
      if (!(await waitToReconnect(reconnectDelayMs(cursor), signal))) return;
      const before = cursor.lastEventId;
      let resumed: StreamAnswer;
      try {
        resumed = await this.getStream(cursor.lastEventId, signal, "a stream's resumption");
      } catch (error) {
        dropped = error;
        idle++;
        continue;
      }
      if (resumed.body === undefined) {
        if (!this.closed)
          this.logger.warn("stream not resumed", { status: resumed.status, contentType: resumed.contentType });
        return;
      }
      dropped = await this.readToEnd(resumed.body, pending, cursor, signal, arrays);
      idle = cursor.lastEventId === before ? idle + 1 : 0;
    }
    if (dropped !== undefined && pending.size > 0) throw dropped;
  }

  /** Reads an SSE stream to its end; what cut it short, if anything did. */
  private async readToEnd(
    body: BodyStreamLike,
    pending: Set<RequestId>,
    cursor: StreamCursor,
    signal: AbortLike,
    arrays: Arrays,
  ): Promise<unknown> {
    try {
      await this.readStream(body, pending, cursor, signal, arrays);
      return undefined;
    } catch (error) {
      return error;
    }
  }

  /**
   * A GET for an SSE stream (resuming the stream `lastEventId` came from, when given); no body
   * when the server has none to give (405, an error status, not an event stream). A 404 once a
   * GET of the session was served means the session is gone: the connection is ended too.
   */
  private async getStream(
    lastEventId: string | undefined,
    signal: AbortLike,
    what: "the GET stream" | "a stream's resumption",
  ): Promise<StreamAnswer> {
    const headers = this.headers("text/event-stream", undefined, false);
    if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
    const response = await this.fetch(this.url, { method: "GET", headers, signal });
    this.rememberSession(response);
    const type = mediaTypeEssence(response.headers.get("content-type"));
    if (response.status === 405 || !response.ok || type !== "text/event-stream" || !response.body) {
      await response.body?.cancel().catch(() => {});
      if (response.status === 404 && this.session !== undefined && this.streamServed) {
        // The session is gone (a server restarted, or it expired the session), as for a POST: a
        // host that only listens would otherwise never learn it, and its session never end. Only
        // once a GET of this session was served: a server with no GET route at all answers 404
        // (where the spec says 405), and its sessions work without one.
        this.session = undefined;
        this.sessionEnded = this.sessionServed;
        this.lastError = `upstream ${this.where} answered ${what} with HTTP 404; the upstream ended its session`;
        this.logger.warn("upstream ended its session", { status: 404 });
        void this.close();
      }
      return { status: response.status, contentType: type, body: undefined };
    }
    this.streamServed = true;
    return { status: response.status, contentType: type, body: response.body };
  }

  private readStream(
    body: BodyStreamLike,
    pending: Set<RequestId>,
    cursor: StreamCursor,
    signal: AbortLike,
    arrays: Arrays,
  ): Promise<void> {
    // The request this stream belongs to, still after it is answered (a server may send more).
    const carrier = firstOf(pending);
    return readSseBody(
      body,
      { maxEventBytes: this.maxMessageBytes, cutPastBytes: this.options.maxSkippedMessageBytes },
      {
        onEvent: (event) => {
          if (event.lastEventId) cursor.lastEventId = event.lastEventId;
          if (event.type !== "message") return;
          const framed = framedFromEvent(event, this.options.maxMessageNodes);
          if (!framed) return;
          // Only an event that carries something counts (a priming or keep-alive one does not).
          cursor.events++;
          this.deliver(framed, pending, arrays, carrier);
        },
        onProblem: (problem) => this.deliver({ problem: framingProblemOf(problem) }, pending, arrays),
        onRetry: (ms) => (cursor.retryMs = Math.min(ms, LONGEST_TIMER_MS)),
      },
      signal,
      this.flow.gate,
    );
  }

  private deliver(framed: Framed, pending: Set<RequestId>, arrays: Arrays, carrier?: RequestId): void {
    if (this.closed) return;
    if (framed.problem) {
      // The proxy answers a too-large response from the problem's id; do not answer it twice. A
      // message of the server's own with the same id answers nothing: the request still waits.
      if (framed.problem.id !== undefined && framed.problem.asks !== true) pending.delete(framed.problem.id);
      this.onproblem?.(withoutSecrets(framed.problem, this.sentSecrets));
      return;
    }
    if (!Array.isArray(framed.message)) {
      this.deliverOne(framed.message, pending, carrier);
      return;
    }
    const items = framed.message as unknown[];
    if (arrays === "whole") {
      this.deliverBatch(items, pending, carrier);
      return;
    }
    if (items.length === 0) this.logger.warn("upstream answered with an empty array; it answers nothing");
    for (const item of items) {
      // JSON-RPC has no array inside a batch: what it holds answers nothing (its requests still wait).
      if (Array.isArray(item)) this.logger.warn("upstream sent an array inside an array; not forwarded");
      else this.deliverOne(item, pending, carrier);
    }
  }

  private deliverOne(item: unknown, pending: Set<RequestId>, carrier: RequestId | undefined): void {
    const message = withoutSecretsInError(item as JSONRPCMessage, this.sentSecrets);
    if (this.answered(message, pending)) {
      this.onmessage?.(message);
      return;
    }
    // A request's stream carries what belongs to that request (its progress, logs, questions to
    // the client): the proxy sends it on the same host request's stream, so a host reading several
    // streams sees each request's messages in the order they were sent.
    const related = firstOf(pending) ?? carrier;
    this.onmessage?.(message, related === undefined ? undefined : { relatedRequestId: related });
  }

  /**
   * An array answering a batch (or sent on the GET stream) goes on as one message, as a stdio
   * server's array does: a host whose protocol has batches gets its batch answered as one, and
   * the proxy takes it apart for the others. What it carries besides answers is related to the
   * last request it answers (still waiting while the items before that answer are handled), else
   * to the request still waiting, else to the stream's own request.
   */
  private deliverBatch(items: unknown[], pending: Set<RequestId>, carrier: RequestId | undefined): void {
    const batch = withoutSecretsInError(items, this.sentSecrets);
    let related: RequestId | undefined;
    for (const item of batch) {
      const id = responseIdOf(item);
      if (id !== undefined && pending.has(id)) related = id;
    }
    related ??= firstOf(pending) ?? carrier;
    for (const item of batch) this.answered(item, pending);
    this.onmessage?.(
      batch as unknown as JSONRPCMessage,
      related === undefined ? undefined : { relatedRequestId: related },
    );
  }

  /** Whether `message` answers a request (no longer pending; an initialize's answer gives the version). */
  private answered(message: unknown, pending: Set<RequestId>): boolean {
    const id = responseIdOf(message);
    if (id === undefined) return false;
    pending.delete(id);
    if (this.initializeIds.delete(id)) {
      const version = (message as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
      if (typeof version === "string") this.protocolVersion = version;
      if (isObj(message) && isObj(message.result)) this.serverStream.initialized();
      else this.serverStream.initializeEnded();
    }
    return true;
  }

  private async failStatus(ids: RequestId[], response: ResponseLike, what: string, signal: AbortLike): Promise<void> {
    const secrets = this.sentSecrets();
    const reason = await errorBodyReason(response, secrets);
    const status = statusLine(response.status, response.statusText, secrets);
    // Spec: 404 to a request with a session id means the server ended the session. Nothing sent
    // on it can succeed any more, so the connection ends (no DELETE: the session is gone), and
    // with it the host's session: the host is told, and initializes again.
    const sessionGone = response.status === 404 && this.session !== undefined;
    if (sessionGone) {
      this.session = undefined;
      this.sessionEnded = this.sessionServed;
    }
    // Cancelled (or closed) while the error was read: nothing is owed.
    if (signal.aborted) {
      this.forget(ids);
    } else {
      const message = `upstream ${this.where} answered ${what} with ${status}${reason ? `: ${reason}` : ""}${
        sessionGone ? "; the upstream ended its session" : ""
      }`;
      this.fail(ids, new NormalizerError("UPSTREAM_HTTP_ERROR", message, { url: this.where, status: response.status }));
    }
    if (sessionGone) void this.close();
  }

  /** Requests that will get no answer and are owed none (cancelled): nothing is kept for them. */
  private forget(ids: readonly RequestId[]): void {
    for (const id of ids) if (this.initializeIds.delete(id)) this.serverStream.initializeEnded();
  }

  private fail(ids: RequestId[], error: NormalizerError): void {
    this.lastError = error.message;
    // Logged by the owner (`onerror`), once per kind in a flood: a client may send such requests without end.
    this.onerror?.(error);
    for (const id of ids) {
      if (this.initializeIds.delete(id)) this.serverStream.initializeEnded();
      this.onmessage?.(
        errorResponse(id, JSONRPC.UPSTREAM_UNAVAILABLE, error.message, { code: error.code, ...error.details }),
        FAILED_REQUEST,
      );
    }
  }

  /** Lets go of a message never sent: its bytes no longer count as queued. */
  private unsent(bytes: number, own: PostAbort): Promise<void> {
    this.flow.posted(bytes);
    this.inFlight.delete(own);
    return SENT;
  }
}

/** Whether `message` is, or (a batch) holds, a message of `method`. */
function carries(message: unknown, method: string): boolean {
  return Array.isArray(message) ? message.some((item) => methodOf(item) === method) : methodOf(message) === method;
}

/** The oldest of a stream's requests still unanswered. */
function firstOf(pending: ReadonlySet<RequestId>): RequestId | undefined {
  for (const id of pending) return id;
  return undefined;
}
