/**
 * One host session of MCP's streamable HTTP transport (MCP 2025-06-18 / 2025-11-25
 * basic/transports §"Streamable HTTP"), as a `ProxyTransport`. Our own, not the SDK's
 * `StreamableHTTPServerTransport`: that one answers 400 to protocol versions it does not know,
 * caps bodies at 4 MiB and re-validates every message with zod (never block a version,
 * forward raw JSON-RPC, large messages are normal).
 *
 * Routing, per the spec:
 * - a POST carrying requests is answered on its own response, once every request in it has its
 *   response: one JSON body (an array for a batch) or an SSE stream. The spec lets the server
 *   choose and the client MUST take either (MCP 2025-11-25 basic/transports §"Sending Messages
 *   to the Server"). A host that accepts both gets "lazy SSE": JSON when the answers come before
 *   anything else related to the POST and within `LAZY_SSE_WINDOW_MS`, else an SSE stream opened
 *   at the first related message or at the end of the window (SDK clients parse a JSON
 *   answer with one `response.json()`, an SSE one through web streams, which costs more per
 *   call). A host
 *   that accepts only one form gets that form;
 * - server→client messages sent with `relatedRequestId` go on that request's stream — this is
 *   how progress and mid-call sampling/elicitation reach the host; all others go on the GET
 *   stream (queued, bounded, until the host opens one);
 * - a POST carrying only responses/notifications gets 202 at once.
 *
 * Flow control: `queuedBytes` is what the session's open responses hold for the host, so a host
 * that stops reading any of them holds its upstream back; while the upstream is behind, the
 * endpoint leaves the next POST bodies unread (`inReadingTurn`). Messages queued for a GET stream
 * the host has not opened are bounded by count (`maxQueuedMessages`), not held back: a host that
 * never opens one must still get its answers. Past the count a notification is dropped first: a
 * server's request is owed an answer (the proxy counts it as waiting for the host).
 *
 * Resumability (MCP 2025-11-25 basic/transports §"Resumability and Redelivery"): every event
 * on a stateful session's streams carries an id, and what was sent is kept, bounded, in a
 * `ReplayLog`. A POST stream of a host on 2025-11-25 or later opens with a priming event (an id,
 * no data). When such a stream drops before all its answers are out, its POST is not given up:
 * what is sent for it from then on is kept in the log, and a GET with `Last-Event-ID` naming
 * the stream gets the events after that id and then whatever is still to come, as if the stream
 * had not dropped. A GET stream resumes the same way. A host that never comes back loses nothing
 * it could have had: the log lets its oldest events go past `limits.sseReplayBytes`.
 *
 * HTTP parsing, session ids and limits live in `streamableHttpEndpoint.ts`.
 */
import type { ServerResponse } from "node:http";
import { JSONRPC } from "../../errors/jsonRpcCodes.js";
import type { JSONRPCMessage, MessageExtraInfo, TransportSendOptions } from "../types.js";
import { HostTransportBase } from "./hostTransportBase.js";
import { replyJsonRpcError, replyJsonWire } from "./httpReplies.js";
import { errorResponse, idKey, keyId, methodOf, type RequestId, requestIdOf, responseIdOf } from "../jsonrpc.js";
import { SseWriter } from "./sseWriter.js";
import { DrainWaiter, mustWaitForDrain, SENT } from "../drainWaiter.js";
import { encodeWire, heldBytes, type WireJson } from "../wireJson.js";
import { idAsWritten } from "../idAsWritten.js";
import { EVENT_OVERHEAD_BYTES, parseEventId, type Replay, ReplayLog } from "./replayLog.js";
import { RepeatedProblem } from "../../observe/repeatedProblem.js";

/**
 * How long a POST whose host accepts both forms waits for its answers before the SSE stream is
 * opened anyway: 500 ms. Long enough that nearly every quick call (reads, lists, most tools)
 * answers as JSON, and a call slower than this pays the host's SSE parsing, small beside the
 * half second it already took. Short enough that a long-running tool has its stream, and so its
 * headers and `: keepalive` comments, within half a second: far inside the first-byte / idle
 * timeouts of reverse proxies and load balancers (typically 30–60 s), which is what the
 * keepalives are for. Never longer than the keepalive interval itself (see `lazyWindowMs`).
 */
export const LAZY_SSE_WINDOW_MS = 500;

export interface StreamableHttpSessionOptions {
  /** The `Mcp-Session-Id` given to the host; undefined for a stateless one-POST session. */
  sessionId?: string | undefined;
  /** Ends the session once its only POST is answered (protocol 2026-07-28, no session id). */
  stateless: boolean;
  /** `: keepalive` comment interval on SSE streams; 0 turns them off. */
  sseKeepAliveMs: number;
  /** GET-stream messages kept while no GET stream is open; the oldest go first. */
  maxQueuedMessages: number;
  /** Bytes of those messages held at once (the newest is always kept); the oldest go first. Default: no bound. */
  maxQueuedBytes?: number;
  /** A stateful session with no request and no open stream for this long is ended (`limits.sessionIdleMs`). */
  idleTimeoutMs: number;
  /**
   * How long a POST accepting both JSON and SSE waits for its answers before its SSE stream is
   * opened; 0 opens it at once (no JSON answers unless the host accepts only JSON). Default
   * `LAZY_SSE_WINDOW_MS`, capped by `sseKeepAliveMs` when keepalives are on.
   */
  lazySseWindowMs?: number;
  /** Bytes of sent events kept so a dropped stream can be resumed (`limits.sseReplayBytes`); 0: none. */
  sseReplayBytes?: number;
}

/** The first protocol version whose hosts take a priming event (an SSE event with empty data). */
const PRIMING_SINCE = "2025-11-25";

/** The standalone (GET) stream's number in event ids; POST streams count from 1. */
const GET_STREAM = 0;

/** A message kept for the GET stream until the host opens one. */
interface Queued {
  readonly wire: WireJson;
  /** What it holds (`heldBytes`). */
  readonly bytes: number;
  /** A server's request (owed an answer): dropped only when no notification is left to drop. */
  readonly request: boolean;
}

/** One POST that carried requests, and the answers still owed on it. */
interface Exchange {
  /** The response the answers go on: the POST's, or the GET that resumed its stream. */
  res: ServerResponse;
  /**
   * Its stream's number in event ids (see `ReplayLog`), given when the stream opens: one answered
   * as plain JSON has none (GET_STREAM), so no number names a stream the host never saw.
   */
  stream: number;
  /** Whether its host gets a priming event when the stream opens. */
  readonly prime: boolean;
  /** Whether the host has an event id of this stream, so it can resume it if the stream drops. */
  resumable: boolean;
  /** The stream dropped and the host may resume it: what is sent for it goes to the log only. */
  detached: boolean;
  /** Whether the host accepts an SSE stream: "json" exchanges never open one. */
  readonly streamable: boolean;
  /** The SSE stream once open: at once, at the first related message, or when the window ends. */
  sse: SseWriter | undefined;
  /** Ends the lazy window (opens the stream); undefined once the stream is open or answered. */
  window: NodeJS.Timeout | undefined;
  readonly pending: Set<string>;
  readonly order: readonly string[];
  /**
   * Ids `JSON.parse` rounded (integers past 2^53), as their host wrote them, by key: what an error
   * the proxy builds for one is sent under. Every other id is read back from its key.
   */
  readonly inexactIds: ReadonlyMap<string, RequestId> | undefined;
  /** Answers held, encoded, while no stream is open; in the order they came. */
  readonly answers: Map<string, WireJson>;
  readonly batch: boolean;
  done: boolean;
  /** Waits for a JSON answer to be flushed; made the first time the host is behind on it. */
  drain?: DrainWaiter;
}

export class StreamableHttpHostSession extends HostTransportBase {
  /** Each answer goes to its own request's stream (a batch's POST gathers its own). */
  override readonly keepsBatches = false;
  readonly sessionId: string | undefined;
  readonly stateless: boolean;

  private readonly keepAliveMs: number;
  private readonly maxQueued: number;
  /** Messages dropped from the queue of a host with no GET stream: a flood is a few log lines. */
  private readonly queueDrops = new RepeatedProblem((count, first) =>
    this.reportError(
      new Error(
        `Dropped ${droppedCount(count, first)}: more than limits.maxQueuedMessages (${this.maxQueued}) or ` +
          `limits.maxQueuedBytes (${this.maxQueuedBytes} bytes) queued while the host has no GET stream open`,
      ),
    ),
  );
  /** Messages for a dropped stream too large to keep for its resume. */
  private readonly replayDrops = new RepeatedProblem((count, first) =>
    this.reportError(
      new Error(
        `Dropped ${droppedCount(count, first)} for a stream the host is to resume: larger than ` +
          `limits.sseReplayBytes (${this.replay?.maxBytes} bytes)`,
      ),
    ),
  );
  private readonly idleTimeoutMs: number;
  private readonly lazyWindowMs: number;
  private readonly byRequest = new Map<string, Exchange>();
  private readonly exchanges = new Set<Exchange>();
  private standalone: SseWriter | undefined;
  /** Messages for the GET stream while none is open, encoded (their objects are not kept). */
  private queued: Queued[] = [];
  private queuedHeld = 0;
  private readonly maxQueuedBytes: number;
  /** What the streams sent, for resumes; undefined for a stateless session or with resumption off. */
  private readonly replay: ReplayLog | undefined;
  private nextStream = GET_STREAM + 1;
  /** Exchanges whose stream dropped with answers still owed, by stream number, until resumed or answered. */
  private readonly detached = new Map<number, Exchange>();
  private idleTimer: NodeJS.Timeout | undefined;
  /** When it last had a request or a stream (`idleSince`). */
  private lastActive = Date.now();
  /** POSTs waiting for their turn to be read (the upstream is behind): the host is not idle. */
  private postsWaiting = 0;
  /**
   * The `initialize` that opened this stateful session, until it is answered. An error answer,
   * or one whose HTTP request is gone (the host never learned the session id), ends the session:
   * nobody can use it, and it would hold a slot and an upstream until `limits.sessionIdleMs`.
   */
  private opening: string | undefined;
  private firstPost = true;

  constructor(options: StreamableHttpSessionOptions) {
    super();
    this.sessionId = options.sessionId;
    this.stateless = options.stateless;
    this.keepAliveMs = options.sseKeepAliveMs;
    this.maxQueued = options.maxQueuedMessages;
    this.maxQueuedBytes = options.maxQueuedBytes ?? Number.POSITIVE_INFINITY;
    this.idleTimeoutMs = options.idleTimeoutMs;
    const window = options.lazySseWindowMs ?? LAZY_SSE_WINDOW_MS;
    // The stream exists for its keepalives: it must be open before the first one is due.
    this.lazyWindowMs = this.keepAliveMs > 0 ? Math.min(window, this.keepAliveMs) : window;
    const replayBytes = options.sseReplayBytes ?? 0;
    if (this.sessionId !== undefined && replayBytes > 0) {
      this.replay = new ReplayLog(replayBytes, EVENT_OVERHEAD_BYTES, (id) =>
        encodeWire(
          errorResponse(
            id,
            JSONRPC.SERVER_ERROR,
            "The answer came while the host's stream was down and is no longer held (limits.sseReplayBytes, " +
              `${replayBytes} bytes): send the request again`,
          ),
        ),
      );
      this.replay.open(GET_STREAM);
    }
    this.touch();
  }

  /** Open streams (POST and GET), for tests and leak checks. */
  get openStreams(): number {
    return this.exchanges.size + (this.standalone?.isOpen === true ? 1 : 0);
  }

  /**
   * Reads one POST of this session in its turn (`inReadingTurn`). While it waits — the upstream
   * is behind — the session counts as busy, not idle: the host has a request outstanding.
   */
  readPostInTurn(work: () => Promise<void>): Promise<void> {
    this.postsWaiting++;
    this.touch();
    return this.inReadingTurn(work).finally(() => {
      this.postsWaiting--;
      this.touch();
    });
  }

  /**
   * Takes a parsed POST body. `form` is what the host's `Accept` asks for; `protocolVersion` its
   * `MCP-Protocol-Version` header, if any.
   */
  acceptPost(
    res: ServerResponse,
    messages: JSONRPCMessage[],
    batch: boolean,
    form: "sse" | "json" | "either",
    extra: MessageExtraInfo,
    protocolVersion?: string,
  ): void {
    this.touch();
    const keys: string[] = [];
    let inexactIds: Map<string, RequestId> | undefined;
    const first = this.firstPost && this.sessionId !== undefined;
    this.firstPost = false;
    for (const message of messages) {
      const id = requestIdOf(message);
      if (id === undefined) continue;
      const key = idKey(id);
      keys.push(key);
      const written = idAsWritten(message as { id: RequestId });
      if (written !== id) {
        inexactIds ??= new Map();
        inexactIds.set(key, written);
      }
      if (first && this.opening === undefined && methodOf(message) === "initialize") this.opening = key;
    }
    if (keys.length === 0) {
      res.writeHead(202, this.headers()).end();
      for (const message of messages) {
        this.deliver(message, extra);
        this.cancelled(message);
      }
      // A stateless POST of notifications/responses is done once the proxy has taken them.
      if (this.stateless) void this.whenStarted().then(() => this.finish());
      return;
    }
    // MCP basic §"Requests": an id MUST NOT be reused in a session. Mapping it to this POST
    // would leave the POST still waiting for it with no way to get its answer. (A batch that uses
    // an id twice is refused before a session is opened for it: streamableHttpEndpoint.)
    const clash = keys.find((key) => this.byRequest.get(key)?.done === false);
    if (clash !== undefined) {
      replyJsonRpcError(
        res,
        400,
        JSONRPC.INVALID_REQUEST,
        `Invalid Request: id ${clash.slice(2)} is already used by a request still waiting for its answer`,
        this.headers(),
      );
      return;
    }
    const lazy = form === "either" && this.lazyWindowMs > 0;
    const exchange: Exchange = {
      res,
      stream: GET_STREAM,
      prime:
        this.replay !== undefined &&
        form !== "json" &&
        protocolVersion !== undefined &&
        protocolVersion >= PRIMING_SINCE,
      resumable: false,
      detached: false,
      streamable: form !== "json",
      sse: undefined,
      window: undefined,
      pending: new Set(keys),
      order: keys,
      inexactIds,
      answers: new Map(),
      batch,
      done: false,
    };
    if (lazy) {
      exchange.window = setTimeout(() => this.openStream(exchange), this.lazyWindowMs);
      exchange.window.unref();
    }
    if (form === "sse" || (form === "either" && !lazy)) this.openStream(exchange);
    this.exchanges.add(exchange);
    for (const key of keys) this.byRequest.set(key, exchange);
    res.on("close", () => this.streamClosed(exchange, res));
    // Closed while the session was being opened (the endpoint waits for the upstream first): its
    // "close" has been and gone, and the answers owed on it have nowhere to go.
    if (res.destroyed) this.endExchange(exchange);
    // A cancel cancels only a request the proxy has been given (as the bridge sees it): one that
    // comes after it in the same body is not cancelled by it.
    const notYet = new Set(keys);
    for (const message of messages) {
      this.deliver(message, extra);
      const id = requestIdOf(message);
      if (id !== undefined) notYet.delete(idKey(id));
      this.cancelled(message, notYet);
    }
  }

  /**
   * A GET: opens (or replaces) the GET stream and flushes what was queued for it — after the
   * events it missed, when `lastEventId` resumes it. A `lastEventId` naming a POST's stream
   * resumes that stream instead, and leaves the GET stream as it is.
   */
  acceptGet(res: ServerResponse, lastEventId?: string, protocolVersion?: string): void {
    this.touch();
    const cursor = lastEventId === undefined || this.replay === undefined ? undefined : parseEventId(lastEventId);
    const primes = this.replay !== undefined && protocolVersion !== undefined && protocolVersion >= PRIMING_SINCE;
    if (cursor !== undefined && cursor.stream !== GET_STREAM) {
      this.resumePostStream(res, cursor.stream, cursor.seq, primes);
      return;
    }
    // A new GET replaces the old one: a half-open old stream must not lock the host out.
    this.standalone?.end();
    const sse = new SseWriter(res, this.headers(), this.keepAliveMs);
    this.standalone = sse;
    sse.onEnded(() => {
      if (this.standalone === sse) this.standalone = undefined;
      this.touch();
    });
    const replay = cursor === undefined ? undefined : this.replay?.after(GET_STREAM, cursor.seq);
    // The host's place first, so a stream that drops before anything comes is resumed from it,
    // not opened afresh past what it missed.
    if (primes)
      sse.prime(replay === undefined || cursor === undefined ? this.replay!.position(GET_STREAM) : `0.${cursor.seq}`);
    this.replayOn(sse, GET_STREAM, replay);
    const queued = this.queued;
    this.queued = [];
    this.queuedHeld = 0;
    this.queueDrops.flush();
    for (const { wire } of queued) void this.emit(sse, wire);
  }

  /**
   * A message related to a request reaches the host on that request's stream, or on the session's
   * GET stream; a stateless session has none, so a POST that takes JSON only cannot be asked.
   */
  reaches(related: RequestId): boolean {
    return !this.stateless || this.byRequest.get(idKey(related))?.streamable === true;
  }

  /** Not an async function: a message written at once costs no promise of its own. */
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.isClosed) return SENT;
    try {
      const answered = responseIdOf(message);
      if (answered !== undefined) return this.answer(idKey(answered), message);
      const related = options?.relatedRequestId;
      if (related !== undefined && related !== null) {
        const exchange = this.byRequest.get(idKey(related));
        if (exchange?.streamable && !exchange.done) {
          // Encoded first: a message that cannot be serialized must not open the stream.
          const wire = encodeWire(message);
          if (exchange.detached) return this.keepForResume(exchange, wire);
          return this.emitOn(exchange, this.openStream(exchange), wire);
        }
      }
      return this.sendStandalone(message);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Bytes written to the session's open responses (POST streams, JSON answers not yet flushed,
   * the GET stream) that the host has not taken. Answers held for a batch still in its lazy
   * window are not counted: they are bounded by the batch, and no socket holds them yet.
   */
  override get queuedBytes(): number {
    let bytes = this.standalone?.queuedBytes ?? 0;
    for (const exchange of this.exchanges) bytes += exchange.res.writableLength;
    return bytes;
  }

  /** Settles when one of the responses the host is behind on has drained (or ended). */
  override whenDrained(): Promise<void> {
    for (const exchange of this.exchanges) {
      if (exchange.sse !== undefined) {
        if (mustWaitForDrain(exchange.res)) return exchange.sse.drained();
      } else if (mustWaitForDrain(exchange.res)) {
        // A JSON answer written whole: it has been taken when the response finishes.
        exchange.drain ??= new DrainWaiter(exchange.res);
        return exchange.drain.wait();
      }
    }
    return this.standalone?.drained() ?? SENT;
  }

  /** Headers every response of this session carries. */
  headers(): Record<string, string> {
    return this.sessionId === undefined ? {} : { "mcp-session-id": this.sessionId };
  }

  protected release(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    for (const exchange of [...this.exchanges]) {
      // A POST in its lazy window has sent nothing yet: the answers it holds (part of a batch) go
      // out on a stream, as they would have; with none, it gets the error a JSON POST gets.
      if (exchange.streamable && exchange.sse === undefined && exchange.answers.size > 0) this.openStream(exchange);
      // Each request still waiting gets the error under its own id — on its stream, or in the
      // JSON body with what a batch had (one answered already, its response still finishing, is
      // left to finish): a stream that ended without it would leave the host waiting (a batch
      // whose initialize was refused ends the session before its other requests are answered).
      if (exchange.sse !== undefined) {
        for (const key of exchange.pending)
          void this.emitOn(exchange, exchange.sse, sessionEnded(exchange, key), keyId(key));
        exchange.pending.clear();
        exchange.sse.end();
      } else if (!exchange.done && !exchange.res.headersSent) {
        for (const key of exchange.pending) exchange.answers.set(key, sessionEnded(exchange, key));
        exchange.pending.clear();
        this.replyHeld(exchange);
      }
      this.endExchange(exchange);
    }
    this.standalone?.end();
    this.standalone = undefined;
    this.queued = [];
    this.queuedHeld = 0;
    this.queueDrops.flush();
    this.replayDrops.flush();
    this.detached.clear();
  }

  private answer(key: string, message: JSONRPCMessage): Promise<void> {
    const exchange = this.byRequest.get(key);
    const opening = key === this.opening;
    if (opening) {
      this.opening = undefined;
      // Ended once the answer is on its way: the session never started for the host.
      if (exchange === undefined || exchange.done || "error" in message) setImmediate(() => void this.close());
    }
    if (exchange === undefined || exchange.done) {
      this.reportError(
        new Error(`Response to request ${key.slice(2)} dropped: the host's HTTP request for it is no longer open`),
      );
      return SENT;
    }
    // Serialized before the request is marked answered: serializing throws on what JSON cannot write,
    // and the caller then answers the same id with an error (bad input must never go unanswered).
    const wire = encodeWire(message);
    this.byRequest.delete(key);
    exchange.pending.delete(key);
    if (exchange.detached) {
      const kept = this.keepForResume(exchange, wire, keyId(key));
      if (exchange.pending.size === 0) this.endDetached(exchange);
      return kept;
    }
    if (exchange.sse !== undefined) {
      const written = this.emitOn(exchange, exchange.sse, wire, keyId(key));
      if (exchange.pending.size === 0) exchange.sse.end();
      return written;
    }
    exchange.answers.set(key, wire);
    if (exchange.pending.size === 0) this.replyHeld(exchange);
    return SENT;
  }

  /** Every answer owed is held: they are the JSON body, in the order asked (a cancelled one has none). */
  private replyHeld(exchange: Exchange): void {
    this.closeWindow(exchange);
    // The held answers are the body, as encoded above: nothing is serialized twice.
    const wires = exchange.order.flatMap((k) => {
      const wire = exchange.answers.get(k);
      return wire === undefined ? [] : [wire];
    });
    replyJsonWire(exchange.res, exchange.batch ? wires : wires.slice(0, 1), exchange.batch, this.headers());
    // Sent: a big answer is not kept until the socket closes, and nothing is held to stream.
    exchange.answers.clear();
  }

  /**
   * The exchange's SSE stream, opened now if it is not yet (a related message came first, or
   * the lazy window ended): the answers already held go out first, in the order they came.
   */
  private openStream(exchange: Exchange): SseWriter {
    if (exchange.sse !== undefined) return exchange.sse;
    this.closeWindow(exchange);
    const sse = new SseWriter(exchange.res, this.headers(), this.keepAliveMs);
    exchange.sse = sse;
    if (this.replay !== undefined) {
      if (exchange.stream === GET_STREAM) {
        exchange.stream = this.nextStream++;
        this.replay.open(exchange.stream);
      }
      if (exchange.prime) sse.prime(this.replay.position(exchange.stream));
      // With a priming event the host can resume at once; without, from its first message on.
      exchange.resumable = exchange.prime;
    }
    for (const [key, wire] of exchange.answers) void this.emitOn(exchange, sse, wire, keyId(key));
    exchange.answers.clear();
    return sse;
  }

  /** Writes one event on the GET stream, with its id when the session keeps events for resumes. */
  private emit(sse: SseWriter, wire: WireJson): Promise<void> {
    if (this.replay === undefined) return sse.write("message", wire);
    return sse.write("message", wire, this.replay.append(GET_STREAM, wire).id);
  }

  /**
   * Writes one event on an exchange's stream, the same way; the host then holds an id of it.
   * `answers`: the request the event answers.
   */
  private emitOn(exchange: Exchange, sse: SseWriter, wire: WireJson, answers?: RequestId): Promise<void> {
    if (this.replay === undefined) return sse.write("message", wire);
    exchange.resumable = true;
    return sse.write("message", wire, this.replay.append(exchange.stream, wire, answers).id);
  }

  /**
   * A POST's stream closed: the POST is over — unless answers are still owed and the host holds
   * an event id of the stream, so it can come back for them with `Last-Event-ID`.
   */
  private streamClosed(exchange: Exchange, res: ServerResponse): void {
    // A resume moved the stream to another response: this one's end is not the stream's.
    if (exchange.res !== res || exchange.done) return;
    if (!exchange.resumable || exchange.pending.size === 0 || this.isClosed) {
      this.endExchange(exchange);
      return;
    }
    exchange.detached = true;
    exchange.sse = undefined;
    this.exchanges.delete(exchange);
    this.detached.set(exchange.stream, exchange);
    this.touch();
  }

  /** Keeps a message for a dropped stream until the host resumes it; one the log cannot hold is lost, logged. */
  private keepForResume(exchange: Exchange, wire: WireJson, answers?: RequestId): Promise<void> {
    if (!this.replay!.append(exchange.stream, wire, answers).kept) this.replayDrops.happened();
    return SENT;
  }

  /** A dropped stream's last answer is kept: the POST is over, its events wait for a resume. */
  private endDetached(exchange: Exchange): void {
    this.detached.delete(exchange.stream);
    this.endExchange(exchange);
  }

  /**
   * A GET with `Last-Event-ID` naming a POST's stream: the events after it, then — while answers
   * are still owed — the rest of that POST's messages, on this response.
   */
  private resumePostStream(res: ServerResponse, stream: number, seq: number, primes: boolean): void {
    const replay = this.replay!.after(stream, seq);
    const exchange = this.detached.get(stream) ?? [...this.exchanges].find((open) => open.stream === stream);
    // An exchange whose stream never opened has sent no id: nothing names a place in it.
    const neverOpened = exchange !== undefined && !exchange.detached && exchange.sse === undefined;
    if (stream >= this.nextStream || neverOpened || (replay === undefined && exchange !== undefined)) {
      replyJsonRpcError(
        res,
        400,
        JSONRPC.INVALID_REQUEST,
        `Cannot resume stream ${stream} after event ${seq}: this session sent no such event`,
        this.headers(),
      );
      return;
    }
    const live = exchange !== undefined && !exchange.done;
    if (!live && (replay === undefined || replay.events.length === 0)) {
      // Over, and nothing after the host's place is held: 204 tells it there is no more to come
      // (a stream that just ended would make it come back, and back).
      if (replay === undefined || replay.missing > 0)
        this.reportError(
          new Error(
            `A host resumed stream ${stream} after event ${seq}, which is over: ` +
              (replay === undefined
                ? "what it missed after that, if anything, is no longer held"
                : `${replay.missing} event(s) it missed are no longer held`) +
              " (limits.sseReplayBytes)",
          ),
        );
      res.writeHead(204, this.headers()).end();
      return;
    }
    const sse = new SseWriter(res, this.headers(), this.keepAliveMs);
    // The host's place first: should this stream drop too before anything else comes, the host
    // comes back to the same place, not with a plain GET (hosts that take a priming event).
    if (primes || exchange?.prime === true) sse.prime(`${stream}.${seq}`);
    this.replayOn(sse, stream, replay);
    if (!live) {
      sse.end();
      return;
    }
    // Still open on its first response (the host saw it drop before the proxy did): that one goes.
    const previous = exchange.sse;
    this.detached.delete(stream);
    exchange.detached = false;
    exchange.res = res;
    exchange.sse = sse;
    exchange.resumable = true;
    this.exchanges.add(exchange);
    previous?.end();
    res.on("close", () => this.streamClosed(exchange, res));
  }

  /**
   * The host cancelled a request (`notifications/cancelled`): the proxy sends it no answer, so
   * the POST is not left waiting for one — with nothing else owed, its stream ends (or, still in
   * its lazy window, it ends as an empty stream). A stream that dropped is not kept for it.
   */
  private cancelled(message: JSONRPCMessage, notYet?: ReadonlySet<string>): void {
    if (methodOf(message) !== "notifications/cancelled") return;
    const requestId = (message as { params?: { requestId?: unknown } }).params?.requestId;
    if (typeof requestId !== "string" && typeof requestId !== "number") return;
    const key = idKey(requestId);
    if (notYet?.has(key) === true) return;
    const exchange = this.byRequest.get(key);
    if (exchange === undefined || exchange.done || !exchange.pending.delete(key)) return;
    this.byRequest.delete(key);
    if (exchange.pending.size > 0) return;
    if (exchange.detached) this.endDetached(exchange);
    else if (exchange.sse !== undefined) exchange.sse.end();
    else if (exchange.answers.size > 0) this.replyHeld(exchange);
    else if (exchange.streamable) this.openStream(exchange).end();
    else {
      this.closeWindow(exchange);
      exchange.res.writeHead(202, this.headers()).end();
    }
  }

  /** Writes a resume's events (with their own ids) on `sse`; says when some are no longer held. */
  private replayOn(sse: SseWriter, stream: number, replay: Replay | undefined): void {
    if (replay === undefined) return;
    for (const event of replay.events) void sse.write("message", event.wire, event.id);
    if (replay.missing > 0)
      this.reportError(
        new Error(
          `Resumed stream ${stream} without ${replay.missing} of its events: they no longer fit ` +
            `limits.sseReplayBytes (${this.replay?.maxBytes} bytes)`,
        ),
      );
  }

  private closeWindow(exchange: Exchange): void {
    if (exchange.window === undefined) return;
    clearTimeout(exchange.window);
    exchange.window = undefined;
  }

  private sendStandalone(message: JSONRPCMessage): Promise<void> {
    const wire = encodeWire(message);
    if (this.standalone?.isOpen === true) return this.emit(this.standalone, wire);
    const bytes = heldBytes(wire, this.maxQueuedBytes);
    this.queued.push({ wire, bytes, request: requestIdOf(message) !== undefined });
    this.queuedHeld += bytes;
    // By count and by bytes; the last one left stays, however large.
    while (this.queued.length > 1 && (this.queued.length > this.maxQueued || this.queuedHeld > this.maxQueuedBytes)) {
      // A request is owed an answer (the proxy counts it as waiting for the host): a notification goes first.
      const notification = this.queued.findIndex((queued) => !queued.request);
      const [gone] = this.queued.splice(notification === -1 ? 0 : notification, 1);
      this.queuedHeld -= gone!.bytes;
      this.queueDrops.happened();
    }
    return SENT;
  }

  private endExchange(exchange: Exchange): void {
    if (exchange.done) return;
    exchange.done = true;
    this.closeWindow(exchange);
    for (const key of exchange.order) if (this.byRequest.get(key) === exchange) this.byRequest.delete(key);
    this.exchanges.delete(exchange);
    if (exchange.stream !== GET_STREAM) this.replay?.finish(exchange.stream);
    // The one POST of a stateless session is over (answered, or the host went away).
    if (this.stateless && this.exchanges.size === 0) this.finish();
    else this.touch();
  }

  /**
   * Since when the session has had no request and no open stream (what `limits.sessionIdleMs`
   * counts); undefined while it has some, or for a stateless one.
   */
  idleSince(): number | undefined {
    // Not before its first POST is taken: until then its initialize is still on its way in.
    if (this.stateless || this.isClosed || this.firstPost || this.busy) return undefined;
    return this.lastActive;
  }

  /** A stream open, a POST waiting to be read, or a dropped stream with answers owed (its host is expected back). */
  private get busy(): boolean {
    return this.openStreams > 0 || this.postsWaiting > 0 || this.detached.size > 0;
  }

  private touch(): void {
    this.lastActive = Date.now();
    if (this.stateless || this.idleTimeoutMs <= 0 || this.isClosed) return;
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.busy) this.touch();
      else this.finish(`no request and no open stream for ${this.idleTimeoutMs} ms (limits.sessionIdleMs)`);
    }, this.idleTimeoutMs);
    this.idleTimer.unref();
  }
}

/** "a server message" the first time, then "3 more server messages". */
function droppedCount(count: number, first: boolean): string {
  return first ? "a server message" : `${count} more server message${count === 1 ? "" : "s"}`;
}

/** The error a request still waiting gets when its session ends, under its id as the host wrote it. */
function sessionEnded(exchange: Exchange, key: string): WireJson {
  return encodeWire(
    errorResponse(
      exchange.inexactIds?.get(key) ?? keyId(key),
      JSONRPC.UPSTREAM_UNAVAILABLE,
      "The session ended before the request was answered",
    ),
  );
}
