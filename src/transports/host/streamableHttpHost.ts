/**
 * One host session of MCP's streamable HTTP transport (MCP 2025-06-18 / 2025-11-25
 * basic/transports §"Streamable HTTP"), as a `ProxyTransport`. Our own, not the SDK's
 * `StreamableHTTPServerTransport`: that one answers 400 to protocol versions it does not know,
 * caps bodies at 4 MiB and re-validates every message with zod (issue 3: never block a version,
 * forward raw JSON-RPC, large messages are normal).
 *
 * Routing, per the spec:
 * - a POST carrying requests is answered on its own response: an SSE stream by default, or one
 *   JSON body when the host accepts only JSON; the stream ends once every request in it has
 *   its response;
 * - server→client messages sent with `relatedRequestId` go on that request's stream — this is
 *   how progress and mid-call sampling/elicitation reach the host; all others go on the GET
 *   stream (queued, bounded, until the host opens one);
 * - a POST carrying only responses/notifications gets 202 at once.
 *
 * HTTP parsing, session ids and limits live in `streamableHttpEndpoint.ts`.
 */
import type { ServerResponse } from "node:http";
import { JSONRPC } from "../../errors/NormalizerError.js";
import type { JSONRPCMessage, MessageExtraInfo, TransportSendOptions } from "../types.js";
import { HostTransportBase } from "./hostTransportBase.js";
import { replyJsonRpcError } from "./httpReplies.js";
import { idKey, requestIdOf, responseIdOf } from "../jsonrpc.js";
import { DEFAULT_SSE_KEEP_ALIVE_MS, SseWriter } from "./sseWriter.js";
import { encodeWire, writeWire } from "../wireJson.js";

/** Default number of GET-stream messages kept while the host has no GET stream open. */
export const DEFAULT_MAX_QUEUED_MESSAGES = 1000;
/** Default time a stateful session lives with no request and no open stream: 30 minutes. */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 30 * 60 * 1000;

export interface StreamableHttpSessionOptions {
  /** The `Mcp-Session-Id` given to the host; undefined for a stateless one-POST session. */
  sessionId?: string | undefined;
  /** Ends the session once its only POST is answered (protocol 2026-07-28, no session id). */
  stateless: boolean;
  /** `: keepalive` comment interval on SSE streams; 0 turns them off. Default 15 s. */
  sseKeepAliveMs?: number;
  /** GET-stream messages kept while no GET stream is open; the oldest go first. Default 1000. */
  maxQueuedMessages?: number;
  /** A stateful session with no request and no open stream for this long is ended. Default 30 min. */
  idleTimeoutMs?: number;
}

/** One POST that carried requests, and the answers still owed on it. */
interface Exchange {
  readonly res: ServerResponse;
  readonly sse: SseWriter | undefined;
  readonly pending: Set<string>;
  readonly order: readonly string[];
  readonly answers: Map<string, JSONRPCMessage>;
  readonly batch: boolean;
  done: boolean;
}

export class StreamableHttpHostSession extends HostTransportBase {
  readonly sessionId: string | undefined;
  readonly stateless: boolean;

  private readonly keepAliveMs: number;
  private readonly maxQueued: number;
  private readonly idleTimeoutMs: number;
  private readonly byRequest = new Map<string, Exchange>();
  private readonly exchanges = new Set<Exchange>();
  private standalone: SseWriter | undefined;
  private queued: JSONRPCMessage[] = [];
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(options: StreamableHttpSessionOptions) {
    super();
    this.sessionId = options.sessionId;
    this.stateless = options.stateless;
    this.keepAliveMs = options.sseKeepAliveMs ?? DEFAULT_SSE_KEEP_ALIVE_MS;
    this.maxQueued = options.maxQueuedMessages ?? DEFAULT_MAX_QUEUED_MESSAGES;
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_SESSION_IDLE_TIMEOUT_MS;
    this.touch();
  }

  /** Open streams (POST and GET), for tests and leak checks. */
  get openStreams(): number {
    return this.exchanges.size + (this.standalone?.isOpen === true ? 1 : 0);
  }

  /** Takes a parsed POST body. `form` is what the host's `Accept` asks for. */
  acceptPost(res: ServerResponse, messages: JSONRPCMessage[], batch: boolean, form: "sse" | "json", extra: MessageExtraInfo): void {
    this.touch();
    const keys: string[] = [];
    for (const message of messages) {
      const id = requestIdOf(message);
      if (id !== undefined) keys.push(idKey(id));
    }
    if (keys.length === 0) {
      res.writeHead(202, this.headers()).end();
      for (const message of messages) this.deliver(message, extra);
      // A stateless POST of notifications/responses is done once the proxy has taken them.
      if (this.stateless) void this.whenStarted().then(() => this.finish());
      return;
    }
    // MCP basic §"Requests": an id MUST NOT be reused in a session. Mapping it to this POST
    // would leave the POST still waiting for it with no way to get its answer (issue 5).
    const clash = keys.find((key) => this.byRequest.get(key)?.done === false);
    if (clash !== undefined) {
      replyJsonRpcError(res, 400, JSONRPC.INVALID_REQUEST, `Invalid Request: id ${clash.slice(2)} is already used by a request still waiting for its answer`, this.headers());
      return;
    }
    const exchange: Exchange = {
      res,
      sse: form === "sse" ? new SseWriter(res, this.headers(), this.keepAliveMs) : undefined,
      pending: new Set(keys),
      order: keys,
      answers: new Map(),
      batch,
      done: false,
    };
    this.exchanges.add(exchange);
    for (const key of keys) this.byRequest.set(key, exchange);
    res.on("close", () => this.endExchange(exchange));
    for (const message of messages) this.deliver(message, extra);
  }

  /** Opens (or replaces) the GET stream and flushes what was queued for it. */
  acceptGet(res: ServerResponse): void {
    this.touch();
    // A new GET replaces the old one: a half-open old stream must not lock the host out.
    this.standalone?.end();
    const sse = new SseWriter(res, this.headers(), this.keepAliveMs);
    this.standalone = sse;
    sse.onEnded(() => {
      if (this.standalone === sse) this.standalone = undefined;
      this.touch();
    });
    const queued = this.queued;
    this.queued = [];
    for (const message of queued) void sse.write("message", encodeWire(message));
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.isClosed) return;
    const answered = responseIdOf(message);
    if (answered !== undefined) return this.answer(idKey(answered), message);
    const related = options?.relatedRequestId;
    if (related !== undefined && related !== null) {
      const exchange = this.byRequest.get(idKey(related));
      if (exchange?.sse !== undefined && !exchange.done) return exchange.sse.write("message", encodeWire(message));
    }
    return this.sendStandalone(message);
  }

  /** Headers every response of this session carries. */
  headers(): Record<string, string> {
    return this.sessionId === undefined ? {} : { "mcp-session-id": this.sessionId };
  }

  protected release(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    for (const exchange of [...this.exchanges]) {
      if (exchange.sse !== undefined) exchange.sse.end();
      else replyJsonRpcError(exchange.res, 503, JSONRPC.UPSTREAM_UNAVAILABLE, "The session ended before the request was answered", this.headers());
      this.endExchange(exchange);
    }
    this.standalone?.end();
    this.standalone = undefined;
    this.queued = [];
  }

  private answer(key: string, message: JSONRPCMessage): Promise<void> {
    const exchange = this.byRequest.get(key);
    if (exchange === undefined || exchange.done) {
      this.reportError(new Error(`Response to request ${key.slice(2)} dropped: the host's HTTP request for it is no longer open`));
      return Promise.resolve();
    }
    // Serialized before the request is marked answered: JSON.stringify throws on a message nested
    // too deeply, and the caller then answers the same id with an error (issue 5, bad input).
    const text = encodeWire(message);
    this.byRequest.delete(key);
    exchange.pending.delete(key);
    if (exchange.sse !== undefined) {
      const written = exchange.sse.write("message", text);
      if (exchange.pending.size === 0) exchange.sse.end();
      return written;
    }
    exchange.answers.set(key, message);
    if (exchange.pending.size === 0) {
      const body = exchange.batch ? exchange.order.map((k) => exchange.answers.get(k)) : exchange.answers.get(exchange.order[0]!);
      // Encoded once: the length comes from the bytes, not from a second pass over the string.
      const wire = encodeWire(body);
      const bytes = typeof wire === "string" ? Buffer.from(wire, "utf8") : wire;
      exchange.res.writeHead(200, { ...this.headers(), "content-type": "application/json", "content-length": Buffer.isBuffer(bytes) ? bytes.length : bytes.byteLength });
      if (Buffer.isBuffer(bytes)) exchange.res.end(bytes);
      else {
        writeWire(exchange.res, bytes);
        exchange.res.end();
      }
    }
    return Promise.resolve();
  }

  private sendStandalone(message: JSONRPCMessage): Promise<void> {
    if (this.standalone?.isOpen === true) return this.standalone.write("message", encodeWire(message));
    this.queued.push(message);
    if (this.queued.length > this.maxQueued) {
      this.queued.shift();
      this.reportError(new Error(`Dropped a server message: more than ${this.maxQueued} queued while the host has no GET stream open`));
    }
    return Promise.resolve();
  }

  private endExchange(exchange: Exchange): void {
    if (exchange.done) return;
    exchange.done = true;
    for (const key of exchange.order) if (this.byRequest.get(key) === exchange) this.byRequest.delete(key);
    this.exchanges.delete(exchange);
    // The one POST of a stateless session is over (answered, or the host went away).
    if (this.stateless && this.exchanges.size === 0) this.finish();
    else this.touch();
  }

  private touch(): void {
    if (this.stateless || this.idleTimeoutMs <= 0 || this.isClosed) return;
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.openStreams > 0) this.touch();
      else this.finish();
    }, this.idleTimeoutMs);
    this.idleTimer.unref();
  }
}
