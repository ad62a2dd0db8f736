/**
 * One host session joined to one upstream connection through the normalizing decorator.
 * The bridge forwards raw JSON-RPC both ways and owns what only a proxy has to care about:
 * which host requests are still waiting (so they can be answered when the upstream dies or
 * times out), and which host request a server→client message belongs to (streamable HTTP
 * routes it by `relatedRequestId`; without it progress never reaches the host).
 *
 * Each direction's memory stays bounded (`FlowHolds`): a side that is behind on what was sent to
 * it stops the other from being read.
 */
import { forwardableMcpHeaders } from "../transports/mcpHeaders.js";
import { idAsWritten, idTextOf, problemIdAsWritten } from "../transports/idAsWritten.js";
import { DEFAULT_LIMITS } from "../config/defaults.js";
import { JSONRPC } from "../errors/jsonRpcCodes.js";
import { redactedExcerpt, redactedId } from "../errors/redact.js";
import type { Logger } from "../observe/logger.js";
import { ProblemLines } from "../observe/repeatedProblem.js";
import type {
  FramingProblem,
  JSONRPCMessage,
  MessageExtraInfo,
  ProxySendOptions,
  ProxyTransport,
} from "../transports/types.js";
import {
  cancelledRequestOf,
  errorResponse,
  isObj,
  isRequest,
  isRequestId,
  isResponse,
  malformedRequest,
  progressToken,
  isFailedRequest,
  relatedRequestOf,
  type RequestId,
} from "../transports/jsonrpc.js";
import { NormalizingTransport, type NormalizationOptions } from "./withNormalization.js";
import { type InFlightRequest, RequestTable } from "./requestTable.js";
import { BatchAnswers, type HeldAnswers } from "./batchAnswers.js";
import { serverRefused } from "./serverRefused.js";
import { SENT } from "../transports/drainWaiter.js";
import { FlowHolds } from "./flowHolds.js";
import { GivenUpIds } from "./givenUpIds.js";
import {
  answerOwed,
  excerpt,
  invalidAnswer,
  isMessage,
  type OwedAnswer,
  tooManyAskedError,
  unreadAnswerReason,
  unreadRequestReason,
} from "./bridgeMessages.js";

/**
 * The first MCP protocol version without JSON-RPC batches (2025-06-18 changelog: "Remove support for JSON-RPC
 * batching").
 */
const FIRST_VERSION_WITHOUT_BATCHES = "2025-06-18";

/** Progress tokens of answered requests a session remembers (what a late progress notification names). */
const ANSWERED_TOKENS_KEPT = 256;
/** Longer tokens are not remembered (their late progress goes as before, with the latest request). */
const ANSWERED_TOKEN_MAX_CHARS = 256;

/** An answer that creates a task: its request's progress token stays the task's after it. */
function createsTask(msg: unknown): boolean {
  return isObj(msg) && isObj(msg.result) && isObj(msg.result.task);
}

export interface BridgeOptions {
  readonly host: ProxyTransport;
  readonly upstream: ProxyTransport;
  readonly normalization?: NormalizationOptions;
  readonly logger: Logger;
  /** A host request not answered in this time gets a JSON-RPC error (and the upstream a cancel). */
  readonly requestTimeoutMs?: number;
  /** Says why the upstream went away (exit code, last stderr line), for the errors hosts get. */
  readonly describeUpstreamEnd?: () => string | undefined;
  /** Called whenever no host request is waiting any more (graceful shutdown waits on it). */
  readonly onSettled?: () => void;
  /** Called once, on the first message the upstream sends (it works: the restart backoff resets). */
  readonly onUpstreamAlive?: () => void;
  /**
   * The host's `initialize` failed so that no host could start a session: in the upstream
   * transport (no connection; HTTP 401, 403, 404, 5xx), though nothing ended; or unanswered in
   * time, and the session is then ended. Not called for a login it needs, nor for a status that
   * answers that host's request (400, 422, 429), nor while the proxy shuts down.
   */
  readonly onInitializeFailed?: (why: string) => void;
  /**
   * An upstream that has not answered the session's first `initialize` in this time (or in
   * `requestTimeoutMs`, if shorter) failed to start: the host gets an error, the session ends and
   * `onInitializeFailed` is told (`limits.initializeTimeoutMs`).
   */
  readonly initializeTimeoutMs?: number;
  /** Most messages in one host batch; a bigger batch is refused whole (`limits.maxBatch`). */
  readonly maxBatch?: number;
  /** Bytes the host may leave untaken before the upstream is no longer read (`limits.hostBufferBytes`). */
  readonly hostBufferBytes?: number;
  /** The upstream's requests waiting at once for the host's answer (`limits.maxUpstreamRequests`). */
  readonly maxUpstreamRequests?: number;
  /** The host's requests waiting at once for the upstream's answer (`limits.maxHostRequests`). */
  readonly maxHostRequests?: number;
  /** Bytes the upstream may leave untaken before the host is no longer read (`limits.upstreamBufferBytes`). */
  readonly upstreamBufferBytes?: number;
}

/** A host request waiting for the upstream: an entry of the connection's one request table. */
interface Waiting extends InFlightRequest {
  /** Its id as the host wrote it (`idAsWritten`): what an answer the proxy builds for it carries. */
  readonly written: RequestId;
  /** `performance.now()` after which the request is answered with a timeout error. */
  readonly deadline: number;
  readonly progress: RequestId | undefined;
  /** The host batch it came in, when its answer goes back in one array with the others'. */
  readonly batch: BatchAnswers | undefined;
}

/** Send options of a message forwarded without host headers (shared: nothing writes to it). */
const NO_SEND_OPTIONS: ProxySendOptions = Object.freeze({});

export class Bridge {
  readonly upstream: NormalizingTransport;
  onclose?: () => void;

  private readonly host: ProxyTransport;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  /**
   * Host requests waiting, in the order they came: every one has the same timeout, so this is
   * deadline order too. The one table of requests in flight on this connection: the decorator
   * reads its entries (method, task, tool) instead of keeping a second one.
   */
  private readonly waiting = new RequestTable<Waiting>();
  /** Host requests given up (cancelled, timed out) whose late answers may still come: their ids are not reused. */
  private readonly givenUp: GivenUpIds;
  /**
   * One timer per session, due at the oldest waiting request's deadline, instead of a timer
   * set and cleared per request (that was a measurable share of a small call).
   */
  private timer: NodeJS.Timeout | undefined;
  /**
   * The last host headers object seen and its forwarded `mcp-*` headers (a WebSocket or SSE session passes the same
   * object every time).
   */
  private lastHeaders: object | undefined;
  private lastForwarded: Record<string, string> | undefined;
  private readonly byProgressToken = new Map<RequestId, RequestId>();
  /**
   * Progress tokens of requests answered — by the upstream (not with a task, whose progress goes
   * on after its answer), or by the proxy (cancelled, timed out) — newest last, at most
   * `ANSWERED_TOKENS_KEPT`: progress sent under one after that is no other request's.
   */
  private readonly answeredTokens = new Set<RequestId>();
  private lastUpstreamError: string | undefined;
  private closed = false;
  /** Whether the host has sent anything (a session whose upstream died before it had not). */
  private heard = false;
  /** What the requests still waiting were answered with when the session ended. */
  private ended: string | undefined;
  private upstreamAlive = false;
  /**
   * The session's first `initialize` while the upstream has not answered it, and its deadline's
   * timer (kept when the host cancels it: the start is still judged).
   */
  private initializing: { readonly id: RequestId; readonly timer: NodeJS.Timeout } | undefined;
  /** Set once the first `initialize` came: a later one is an ordinary request. */
  private initializeWatched = false;
  /** Set while an upstream's batch is handled for a host that takes it whole: what goes on of it. */
  private batchOut: unknown[] | undefined;
  /** Set while a host batch is looked at item by item: what the proxy answers of it at once. */
  private hostBatch: BatchAnswers | undefined;
  /** The host batches whose answers the upstream's batch being handed on holds (with `batchOut`). */
  private batchesRelayed: Set<BatchAnswers> | undefined;
  /** What the session's host batches hold of their answers, over all of them (`limits.hostBufferBytes`). */
  private readonly heldAnswers: HeldAnswers;
  /**
   * The session's protocol version: the host's initialize request, then the upstream's answer.
   * Once an answer agreed one, a later initialize (which a server refuses, or answers for
   * itself) does not change it unless it is answered with a version too.
   */
  private protocolVersion: string | undefined;
  private versionAgreed = false;
  /** Ids of upstream requests (sampling, elicitation…) the host has not answered yet. */
  private readonly upstreamAsked = new Map<RequestId, RequestId>();
  /** Set once `maxUpstreamRequests` is reached, cleared when the host answers one (one log line per episode). */
  private askedTooMuch = false;
  /** Set once `maxHostRequests` is reached, cleared once fewer wait (one log line per episode). */
  private hostAskedTooMuch = false;
  /** Set while the proxy shuts down: new host requests are answered with this, not forwarded. */
  private refusal: string | undefined;
  /** Set once the host can send nothing more: requests from the upstream are answered with this. */
  private hostGone: string | undefined;
  /** Why the session ended: "host closed", "upstream closed", or what close() was given. */
  closeReason: string | undefined;
  private readonly flow: FlowHolds;
  /** What a peer sent that could not be taken, logged throttled (over `/ws`, anyone the listener lets in). */
  private readonly problemLines: ProblemLines;

  constructor(private readonly options: BridgeOptions) {
    this.host = options.host;
    this.logger = options.logger;
    this.problemLines = new ProblemLines(options.logger);
    this.heldAnswers = { bytes: 0, maxBytes: options.hostBufferBytes ?? DEFAULT_LIMITS.hostBufferBytes };
    this.timeoutMs = options.requestTimeoutMs ?? DEFAULT_LIMITS.requestTimeoutMs;
    this.givenUp = new GivenUpIds(options.maxHostRequests ?? DEFAULT_LIMITS.maxHostRequests, this.timeoutMs);
    this.upstream = new NormalizingTransport(options.upstream, options.normalization, this.waiting);
    this.flow = new FlowHolds(
      this.host,
      this.upstream,
      {
        hostBufferBytes: options.hostBufferBytes ?? DEFAULT_LIMITS.hostBufferBytes,
        upstreamBufferBytes: options.upstreamBufferBytes ?? DEFAULT_LIMITS.upstreamBufferBytes,
      },
      () => this.closed,
    );

    this.host.onmessage = (message, extra) => this.fromHost(message, extra);
    this.host.onclose = () => void this.close("host closed");
    this.host.onerror = (error) => this.logger.warn("host transport error", { error: error.message });
    this.host.onproblem = (problem) => this.hostProblem(problem);

    this.upstream.onmessage = (message, extra) =>
      this.fromUpstream(message, relatedRequestOf(extra), isFailedRequest(extra));
    this.upstream.onclose = () => void this.close("upstream closed");
    this.upstream.onerror = (error) => {
      this.lastUpstreamError = error.message;
      this.problemLines.warn("upstream transport error", { error: error.message });
    };
    this.upstream.onproblem = (problem) => this.upstreamProblem(problem);
  }

  /** Host requests still waiting for the upstream (for tests and leak checks). */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /** True once the host has sent a message. */
  get heardFromHost(): boolean {
    return this.heard;
  }

  /** The error text requests waiting at the end were answered with; undefined while open. */
  get endMessage(): string | undefined {
    return this.ended;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * From now on host requests are answered with a JSON-RPC error naming `why` instead of being
   * forwarded (graceful shutdown: in-flight requests finish, no new work starts). Responses and
   * notifications still pass, so a request in flight can still be served (sampling answers).
   */
  refuseNewRequests(why: string): void {
    this.refusal = why;
  }

  /**
   * The host can send nothing more (its input ended, as with a pipe at EOF) while its requests
   * are still being answered: what the upstream asked of it, and asks from now on, gets a
   * JSON-RPC error naming `why` rather than waiting for an answer that cannot come.
   */
  hostCannotAnswer(why: string): void {
    this.hostGone = why;
    for (const written of this.upstreamAsked.values()) this.answerUpstream(written);
    this.upstreamAsked.clear();
  }

  /**
   * One request more than `maxUpstreamRequests` waits for the host: answered here, not
   * forwarded (each waiting one is remembered until the host answers it: a server asking without
   * end would grow the proxy). Logged once until the host has answered some.
   */
  private tooManyAsked(id: RequestId): void {
    const max = this.options.maxUpstreamRequests ?? DEFAULT_LIMITS.maxUpstreamRequests;
    if (!this.askedTooMuch)
      this.logger.warn("upstream has too many requests waiting for the host; answered with an error", { max });
    this.askedTooMuch = true;
    this.answerUpstream(id, JSONRPC.SERVER_ERROR, tooManyAskedError(max));
  }

  /** Answers a request of the upstream here, with an error (the host cannot, or is not asked). */
  private answerUpstream(
    id: RequestId,
    code: number = JSONRPC.INTERNAL_ERROR,
    message = `the host cannot answer: ${this.hostGone}`,
  ): void {
    const sending = trySend(this.upstream, errorResponse(id, code, message), NO_SEND_OPTIONS);
    if (sending !== SENT)
      sending.catch((error: unknown) =>
        this.logger.debug("could not answer the upstream", { error: errorText(error) }),
      );
  }

  /** Starts the upstream first, so no host message arrives before there is somewhere to send it. */
  async start(): Promise<void> {
    await this.upstream.start();
    // An upstream that ended as it started (a child that exited at once) closed the session.
    if (!this.closed) await this.host.start();
  }

  /**
   * Ends the session. `refuseHost`: it never started — the host's waiting requests are answered
   * with it (`-32001`) and the host transport ends saying why, where it can.
   */
  async close(reason = "closed", refuseHost?: string): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closeReason = reason;
    const why = this.options.describeUpstreamEnd?.() ?? this.lastUpstreamError;
    const message =
      why === undefined ? `upstream connection ended (${reason})` : `upstream connection ended (${reason}): ${why}`;
    this.ended = message;
    for (const waiting of [...this.waiting.values()]) this.answer(waiting.id, JSONRPC.UPSTREAM_UNAVAILABLE, message);
    clearTimeout(this.timer);
    this.timer = undefined;
    this.stopInitializeWatch();
    const host =
      refuseHost !== undefined && this.host.refuseStart !== undefined
        ? this.host.refuseStart(JSONRPC.UPSTREAM_UNAVAILABLE, refuseHost)
        : this.host.close();
    await Promise.allSettled([this.upstream.close(), host]);
    this.problemLines.flush();
    this.logger.debug("session closed", { reason });
    this.onclose?.();
  }

  private fromHost(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    this.heard = true;
    let out: unknown;
    let forwarded: unknown[] | undefined;
    if (!Array.isArray(message)) {
      // A single message (nearly all traffic): no arrays built around it.
      if (!this.admit(message)) return;
      out = message;
    } else {
      const items = message as unknown[];
      // A host that reads messages whole gets a batch's answers back as one array (JSON-RPC 2.0 §6).
      const batch = items.length > 0 && this.host.keepsBatches === true && this.hasBatches() ? this.batch() : undefined;
      this.hostBatch = batch;
      try {
        if (this.refuseBatch(items)) return;
        forwarded = items.filter((msg) => this.admit(msg));
      } finally {
        this.hostBatch = undefined;
        batch?.seal();
      }
      if (forwarded.length === 0) return;
      out = forwarded.length === items.length ? message : forwarded;
    }
    const headers = this.forwardedHeaders(extra);
    const options: ProxySendOptions = headers === undefined ? NO_SEND_OPTIONS : { forwardHeaders: headers };
    const sending = trySend(this.upstream, out, options);
    // The shared settled promise of a message taken at once (nearly all): nothing to wait for.
    if (sending !== SENT) {
      // The ids of its requests, not the messages: an upstream that reads slowly has many sends pending.
      const requests = (forwarded ?? [out]).flatMap((msg) => (isRequest(msg) ? [msg.id] : []));
      sending.catch((error: unknown) => this.notSentUpstream(errorText(error), requests));
    }
    this.flow.sentUpstream();
  }

  /** What the host sent could not be written to the upstream: its requests are answered with an error. */
  private notSentUpstream(text: string, requests: readonly RequestId[]): void {
    this.logger.warn("could not send to upstream", { error: text });
    for (const id of requests) {
      // Never sent, so never answered: not a start the watch should judge as hung.
      this.endInitializeWatch(id);
      this.answer(id, JSONRPC.UPSTREAM_UNAVAILABLE, `could not send the request to the upstream: ${text}`);
    }
  }

  /**
   * Decides one host message: true when it goes on to the upstream (a request is then waiting);
   * false when it was answered here or dropped.
   */
  private admit(msg: unknown): boolean {
    if (!isMessage(msg)) {
      // JSON-RPC 2.0 §5.1: Invalid Request, answered with the id when one can be read, else null.
      this.problemLines.warn("host sent JSON that is not a JSON-RPC message; not forwarded", { excerpt: excerpt(msg) });
      // An error with a null id is the host's own parse-error report: never answered back.
      if (isObj(msg) && msg.id === null && "error" in msg) return false;
      const id = isObj(msg) && isRequestId(msg.id) ? idAsWritten(msg as { id: RequestId }) : null;
      this.toHost(
        {
          jsonrpc: "2.0",
          id,
          error: {
            code: JSONRPC.INVALID_REQUEST,
            message: "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
          },
        },
        id ?? undefined,
      );
      return false;
    }
    if (isRequest(msg)) {
      const invalid = malformedRequest(msg);
      // Answered under the id as the host wrote it, as every answer built here is.
      const refused = this.refuse(msg) ?? (invalid === undefined ? undefined : { ...invalid, id: idAsWritten(msg) });
      if (refused !== undefined) {
        this.toHost(refused, msg.id);
        return false;
      }
      this.remember(msg, this.hostBatch);
      if (msg.method === "initialize") {
        if (!this.versionAgreed && isObj(msg.params) && typeof msg.params.protocolVersion === "string")
          this.protocolVersion = msg.params.protocolVersion;
        this.watchInitialize(msg.id);
      }
    } else if (isResponse(msg) && this.upstreamAsked.delete(msg.id)) {
      this.askedTooMuch = false;
    } else if (isResponse(msg)) {
      // A response to nothing the upstream asked (or a second one): not the upstream's business.
      this.problemLines.warn("host answered a request the upstream did not send; not forwarded", { id: msg.id });
      return false;
    } else {
      const cancelled = cancelledRequestOf(msg);
      if (cancelled !== undefined && cancelled === this.initializing?.id) {
        // The spec forbids cancelling initialize (an SDK client does when its own wait runs out):
        // not forwarded. The host is owed nothing more, but the watch goes on, so a hung start
        // is still told as one.
        this.logger.debug("host cancelled its initialize; not forwarded", { id: cancelled });
        this.forget(cancelled)?.batch?.withdraw();
        return false;
      }
      if (cancelled !== undefined) this.givenUpOn(cancelled)?.batch?.withdraw();
    }
    return true;
  }

  /** MCP HTTP headers a host sends that an HTTP upstream must see as they were. */
  private forwardedHeaders(extra: MessageExtraInfo | undefined): Record<string, string> | undefined {
    const headers = extra?.requestInfo?.headers;
    if (headers === undefined) return undefined;
    // Host transports never change a headers object once they have passed it on.
    if (headers === this.lastHeaders) return this.lastForwarded;
    this.lastHeaders = headers;
    this.lastForwarded = forwardableMcpHeaders(headers);
    return this.lastForwarded;
  }

  /**
   * Why a host request is not forwarded, as the error response the host gets: during shutdown;
   * or when its id is already waiting (MCP basic §"Requests": an id MUST NOT be reused within
   * a session; two answers to one id would reach the wrong request and leak the first timer).
   */
  private refuse(msg: { id: RequestId; method: string }): Record<string, unknown> | undefined {
    if (this.refusal !== undefined)
      return errorResponse(
        idAsWritten(msg),
        JSONRPC.UPSTREAM_UNAVAILABLE,
        `${msg.method} not forwarded: ${this.refusal}`,
      );
    // A cancelled initialize still waits for the upstream's answer, which would answer its id's reuse.
    if (this.waiting.has(msg.id) || msg.id === this.initializing?.id)
      return this.reusedId(msg, "a request still waiting", "for its answer");
    if (this.givenUp.holds(msg.id))
      return this.reusedId(
        msg,
        "a request given up",
        "(cancelled or timed out) whose answer may still come; use a new id",
      );
    // Each waiting request is remembered until answered: a host asking without end of an upstream
    // that never answers would grow the proxy.
    const max = this.options.maxHostRequests ?? DEFAULT_LIMITS.maxHostRequests;
    if (this.waiting.size >= max) {
      if (!this.hostAskedTooMuch)
        this.logger.warn("host has too many requests waiting for the upstream; answered with an error", { max });
      this.hostAskedTooMuch = true;
      return errorResponse(
        idAsWritten(msg),
        JSONRPC.SERVER_ERROR,
        `${msg.method} not forwarded: too many requests waiting for the upstream: limits.maxHostRequests (${max})`,
      );
    }
    this.hostAskedTooMuch = false;
    return undefined;
  }

  /** `onStream`: the request whose response stream carried the message, when the upstream says. */
  private fromUpstream(message: JSONRPCMessage, onStream: RequestId | undefined, failed = false): void {
    // An answer the transport made up for a request that failed says nothing of the server working.
    if (failed) {
      this.fromUpstreamOne(message, onStream, true);
      return;
    }
    if (!this.upstreamAlive) {
      this.upstreamAlive = true;
      this.options.onUpstreamAlive?.();
    }
    if (!Array.isArray(message)) this.fromUpstreamOne(message, onStream);
    else if ((message as unknown[]).length === 0) this.problemLines.warn("upstream sent an empty array; not forwarded");
    else if (this.host.keepsBatches === true && this.hasBatches()) this.batchToHost(message as unknown[], onStream);
    // Split: each response must find its own request's stream on the host side, and a host of a
    // protocol without batches could not read an array (an SDK client drops it: its requests wait).
    else for (const msg of message as unknown[]) this.fromUpstreamOne(msg, onStream);
  }

  /** Whether the session's protocol version has JSON-RPC batches (known once initialize came). */
  private hasBatches(): boolean {
    return this.protocolVersion !== undefined && this.protocolVersion < FIRST_VERSION_WITHOUT_BATCHES;
  }

  /**
   * An upstream's batch to a host that takes messages whole: each item is handled as if it came
   * alone, and what goes on of them goes as one array (the batch itself when all of it does).
   */
  private batchToHost(items: unknown[], onStream: RequestId | undefined): void {
    const out: unknown[] = [];
    const relayed = new Set<BatchAnswers>();
    this.batchOut = out;
    this.batchesRelayed = relayed;
    try {
      for (const msg of items) this.fromUpstreamOne(msg, onStream);
    } finally {
      this.batchOut = undefined;
      this.batchesRelayed = undefined;
    }
    for (const batch of relayed) batch.relayEnded(out);
    if (out.length === 0) return;
    const whole = out.length === items.length && out.every((msg, i) => msg === items[i]);
    this.toHost(whole ? items : out, undefined);
  }

  /** `value` quoted from the upstream for a log line: what the proxy sent it is not shown. */
  private upstreamExcerpt(value: unknown): string {
    return excerpt(value, this.options.upstream.secretsSent?.() ?? []);
  }

  /** An id the upstream sent, for a log line: a string holding what the proxy sent it is redacted. */
  private upstreamId(id: RequestId): RequestId {
    return redactedId(id, this.options.upstream.secretsSent?.() ?? []);
  }

  private fromUpstreamOne(msg: unknown, onStream: RequestId | undefined, failed = false): void {
    let related: RequestId | undefined;
    let batch: BatchAnswers | undefined;
    if (!isMessage(msg)) {
      this.problemLines.warn("upstream sent JSON that is not a JSON-RPC message; not forwarded", {
        excerpt: this.upstreamExcerpt(msg),
      });
      return;
    }
    if (isResponse(msg)) {
      this.endInitializeWatch(msg.id);
      const waiting = this.forget(msg.id);
      if (waiting?.progress !== undefined && !createsTask(msg)) this.tokenAnswered(waiting.progress);
      if (waiting === undefined) {
        // Late (after a timeout or a cancel) or never asked: a second answer to one id, or an
        // answer to none, would reach the host as a response with no request. A late one is
        // what a cancel races with, and frees its id.
        if (this.givenUp.answered(msg.id)) {
          this.logger.debug("upstream answered a request given up (cancelled or timed out); not forwarded", {
            id: this.upstreamId(msg.id),
          });
          return;
        }
        this.problemLines.warn("upstream answered a request that is not waiting; not forwarded", {
          id: this.upstreamId(msg.id),
        });
        return;
      }
      batch = waiting.batch;
      const invalid = invalidAnswer(msg);
      if (invalid !== undefined) {
        // Forwarded as is, a host's SDK would drop it while parsing and its request would wait
        // forever (the fuzz suite found this): the host is answered with an error.
        this.problemLines.warn("upstream sent an invalid JSON-RPC response; answered with an error", {
          id: this.upstreamId(msg.id),
          why: invalid,
          excerpt: this.upstreamExcerpt(msg),
        });
        this.toHost(
          errorResponse(
            waiting.written,
            JSONRPC.INTERNAL_ERROR,
            `the upstream's answer is not a valid JSON-RPC response: ${invalid}`,
          ),
          msg.id,
          batch,
        );
        return;
      }
      if (waiting.method === "initialize" && isObj(msg.result)) {
        // Answered: agreed — on the version it names, else (a server that names none) the one asked.
        if (typeof msg.result.protocolVersion === "string") this.protocolVersion = msg.result.protocolVersion;
        this.versionAgreed = true;
      }
      if (failed && waiting.method === "initialize" && serverRefused(msg.error))
        this.options.onInitializeFailed?.(String((msg.error as { message?: unknown }).message));
      // The transport's own answer (a failed POST) has the id as parsed: the host's, past 2^53, as written.
      if (failed && waiting.written !== msg.id) {
        this.toHost({ ...msg, id: waiting.written }, msg.id, batch);
        return;
      }
      related = msg.id;
    } else {
      if (isRequest(msg)) {
        if (this.hostGone !== undefined) {
          this.answerUpstream(idAsWritten(msg));
          return;
        }
        // An id still waiting is not asked again (MCP: never reused within a session): one
        // entry each, reused ids would pass maxUpstreamRequests and flood the host without end.
        // Integers past 2^53 are matched by the number they parse to, as the host's are.
        if (this.upstreamAsked.has(msg.id)) {
          const id = idTextOf(msg);
          const what = "upstream reused the id of a request still waiting for the host; answered with an error";
          this.problemLines.warn(what, { id, method: msg.method });
          const why = `Invalid Request: id ${id} is already used by a request still waiting for the host's answer`;
          this.answerUpstream(idAsWritten(msg), JSONRPC.INVALID_REQUEST, why);
          return;
        }
        if (this.upstreamAsked.size >= (this.options.maxUpstreamRequests ?? DEFAULT_LIMITS.maxUpstreamRequests)) {
          this.tooManyAsked(idAsWritten(msg));
          return;
        }
        this.upstreamAsked.set(msg.id, idAsWritten(msg));
      } else {
        // The upstream withdrew a question: nothing is owed on it any more (not even an error at EOF).
        const withdrawn = cancelledRequestOf(msg);
        if (withdrawn !== undefined) this.upstreamAsked.delete(withdrawn);
      }
      related = this.relatedRequest(msg, onStream);
    }
    this.toHost(msg, related, batch);
  }

  /**
   * A host batch the session's protocol has no batches for (or an empty one, JSON-RPC 2.0 §6, or
   * one over `maxBatch`) is answered, not forwarded: an upstream of that version would drop it
   * and its requests would wait forever. Every request in it gets -32600; true when the batch
   * was refused.
   */
  private refuseBatch(items: unknown[]): boolean {
    const version = this.protocolVersion;
    // Not known before initialize: a host batch is then forwarded (an upstream array still split).
    const noBatches = version !== undefined && !this.hasBatches();
    const maxBatch = this.options.maxBatch ?? DEFAULT_LIMITS.maxBatch;
    if (items.length > 0 && !noBatches && items.length <= maxBatch) return false;
    const why =
      items.length === 0
        ? "Invalid Request: an empty batch"
        : noBatches
          ? `Invalid Request: protocol version ${version} has no JSON-RPC batches; send each message on its own`
          : `Invalid Request: a batch of ${items.length} messages exceeds limits.maxBatch (${maxBatch}); nothing of ` +
            `it was forwarded — send smaller batches`;
    this.problemLines.warn("host sent a batch; refused", { messages: items.length, protocolVersion: version });
    const requests = items.filter(isRequest);
    if (requests.length === 0)
      this.toHost({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: why } }, undefined);
    for (const msg of requests) this.toHost(errorResponse(idAsWritten(msg), JSONRPC.INVALID_REQUEST, why), msg.id);
    return true;
  }

  /** `batch`: the host batch `msg` answers a request of, whose answers go back together. */
  private toHost(msg: unknown, related: RequestId | undefined, batch?: BatchAnswers): void {
    if (batch !== undefined) {
      this.batchesRelayed?.add(batch);
      batch.answer(msg, this.batchOut);
    } else if (this.hostBatch !== undefined) this.hostBatch.add(msg);
    else if (this.batchOut !== undefined) this.batchOut.push(msg);
    else this.write(msg, related);
  }

  /** The answers to a host batch, gathered; sent as one array (or, past what the session may hold, in parts). */
  private batch(): BatchAnswers {
    return new BatchAnswers((answers) => this.write(answers, undefined), this.heldAnswers);
  }

  private write(msg: unknown, related: RequestId | undefined): void {
    const options = related === undefined ? undefined : { relatedRequestId: related };
    const sending = trySend(this.host, msg, options);
    if (sending !== SENT) {
      // What a failed send needs, not the message: a host that reads slowly has many sends
      // pending, and each would keep its whole parsed message alive until written.
      const owed = Array.isArray(msg) ? (msg as unknown[]).map(answerOwed) : [answerOwed(msg)];
      sending.catch((error: unknown) => this.notSentToHost(errorText(error), owed));
    }
    this.flow.sentToHost();
  }

  private notSentToHost(text: string, owed: ReadonlyArray<OwedAnswer | undefined>): void {
    this.logger.warn("could not send to host", { error: text });
    // A response the host transport could not write (what JSON cannot write, a closed stream):
    // the host still gets an answer to its request, if it can take one.
    for (const each of owed)
      if (each !== undefined)
        this.toHost(
          errorResponse(each.written, JSONRPC.INTERNAL_ERROR, `the upstream's answer could not be forwarded: ${text}`),
          each.id,
        );
  }

  /**
   * Which waiting host request a server→client message belongs to: the request whose progress
   * token it carries; else the one whose response stream carried it (`onStream`: a streamable
   * HTTP upstream says; none once that one is answered); else the most recent request still
   * waiting. Over stdio the upstream says nothing more; any waiting request's stream reaches the
   * same host session.
   */
  private relatedRequest(msg: unknown, onStream: RequestId | undefined): RequestId | undefined {
    const token = isObj(msg) && isObj(msg.params) ? msg.params.progressToken : undefined;
    if (isRequestId(token)) {
      const id = this.byProgressToken.get(token);
      if (id !== undefined) return id;
      // A progress token names its request: one whose request was answered is none of the
      // others', whatever stream it came on.
      if (this.answeredTokens.has(token)) return undefined;
    }
    // Its own request's stream, or — that request answered — none (an HTTP host's GET stream),
    // never another request's.
    if (onStream !== undefined) return this.waiting.has(onStream) ? onStream : undefined;
    let last: Waiting | undefined;
    for (const waiting of this.waiting.values()) last = waiting;
    return last?.id;
  }

  private remember(msg: Record<string, unknown> & { id: RequestId; method: string }, batch?: BatchAnswers): void {
    batch?.owe();
    const token = progressToken(msg);
    this.waiting.add({
      id: msg.id,
      written: idAsWritten(msg),
      method: msg.method,
      resultOf: undefined,
      tool: undefined,
      deadline: performance.now() + this.timeoutMs,
      progress: token,
      batch,
    });
    if (token !== undefined) {
      this.byProgressToken.set(token, msg.id);
      this.answeredTokens.delete(token);
    }
    if (this.timer === undefined) this.armTimer(this.timeoutMs);
  }

  private armTimer(ms: number): void {
    this.timer = setTimeout(this.onTimer, ms);
    this.timer.unref();
  }

  /** Answers every request past its deadline, then waits for the next oldest one. */
  private readonly onTimer = (): void => {
    this.timer = undefined;
    if (this.closed) return;
    const now = performance.now();
    for (const waiting of this.waiting.values()) {
      if (waiting.deadline > now) {
        this.armTimer(waiting.deadline - now);
        return;
      }
      if (this.initializing?.id === waiting.id) {
        // The same failed start as past initializeTimeoutMs; closing answers whatever else waits.
        this.initializeTimedOut(waiting.id, `${this.timeoutMs} ms (limits.requestTimeoutMs)`);
        return;
      }
      this.problemLines.warn(
        "upstream did not answer a request within limits.requestTimeoutMs; answered with an error",
        {
          id: waiting.id,
          method: waiting.method,
          timeoutMs: this.timeoutMs,
        },
      );
      this.answer(
        waiting.id,
        JSONRPC.REQUEST_TIMEOUT,
        `upstream did not answer ${waiting.method} within ${this.timeoutMs} ms (limits.requestTimeoutMs)`,
      );
      this.givenUp.add(waiting.id);
      this.upstream
        .send({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: waiting.written, reason: "timeout in mcp-normalizer" },
        } as JSONRPCMessage)
        .catch(() => {});
    }
  };

  /**
   * An upstream that does not answer `initialize` cannot be used by anyone: past
   * `initializeTimeoutMs` it is a start that failed (the host told, the session ended), not a
   * session holding a hung upstream until `requestTimeoutMs`.
   */
  private watchInitialize(id: RequestId): void {
    if (this.initializeWatched) return;
    this.initializeWatched = true;
    const ms = this.options.initializeTimeoutMs ?? DEFAULT_LIMITS.initializeTimeoutMs;
    const timer = setTimeout(() => this.initializeTimedOut(id, `${ms} ms (limits.initializeTimeoutMs)`), ms);
    timer.unref();
    this.initializing = { id, timer };
  }

  /**
   * Request `id` is over for the upstream — answered, readably or not (even after the host
   * cancelled it), or never sent: if it is the watched `initialize`, there is no hung start to tell.
   */
  private endInitializeWatch(id: RequestId): void {
    if (this.initializing?.id === id) this.stopInitializeWatch();
  }

  private stopInitializeWatch(): void {
    clearTimeout(this.initializing?.timer);
    this.initializing = undefined;
  }

  /** `within`: the time and the limit it is, for the host's error (unless it cancelled the request). */
  private initializeTimedOut(id: RequestId, within: string): void {
    this.stopInitializeWatch();
    if (this.closed) return;
    const why = `upstream did not answer initialize within ${within}`;
    this.answer(id, JSONRPC.REQUEST_TIMEOUT, why);
    // A proxy shutting down ends its sessions anyway: no start failed.
    if (this.refusal === undefined) this.options.onInitializeFailed?.(why);
    void this.close("upstream failed to start", why);
  }

  private tokenAnswered(token: RequestId): void {
    // A long one is not kept: 256 of a host's megabyte tokens would hold as many megabytes.
    if (typeof token === "string" && token.length > ANSWERED_TOKEN_MAX_CHARS) return;
    this.answeredTokens.delete(token);
    this.answeredTokens.add(token);
    if (this.answeredTokens.size > ANSWERED_TOKENS_KEPT)
      this.answeredTokens.delete(this.answeredTokens.values().next().value as RequestId);
  }

  private forget(id: RequestId): Waiting | undefined {
    const waiting = this.waiting.take(id);
    if (waiting === undefined) return undefined;
    // Only its own: a host may have given a later request the same token.
    if (waiting.progress !== undefined && this.byProgressToken.get(waiting.progress) === id)
      this.byProgressToken.delete(waiting.progress);
    if (this.waiting.size === 0) this.options.onSettled?.();
    return waiting;
  }

  /** A host request whose id is taken (`whose`: by what), logged and answered Invalid Request. */
  private reusedId(msg: { id: RequestId; method: string }, whose: string, why: string): Record<string, unknown> {
    // The id as written: two past 2^53 that round to one number are told apart.
    const id = idTextOf(msg);
    this.problemLines.warn(`host reused the id of ${whose}`, { id, method: msg.method });
    return errorResponse(
      idAsWritten(msg),
      JSONRPC.INVALID_REQUEST,
      `Invalid Request: id ${id} is already used by ${whose} ${why}`,
    );
  }

  /** Forgets a request the host cancelled; its id stays taken until a late answer or the timeout. */
  private givenUpOn(id: RequestId): Waiting | undefined {
    const waiting = this.forget(id);
    if (waiting !== undefined) this.givenUp.add(id);
    // The server may still send its progress: it is no other request's.
    if (waiting?.progress !== undefined) this.tokenAnswered(waiting.progress);
    return waiting;
  }

  /** Answers a waiting host request with an error (once: the request is forgotten). */
  private answer(id: RequestId, code: number, message: string): void {
    const waiting = this.forget(id);
    if (waiting === undefined) return;
    if (waiting.progress !== undefined) this.tokenAnswered(waiting.progress);
    this.toHost(errorResponse(waiting.written, code, message), id, waiting.batch);
  }

  private hostProblem(problem: FramingProblem): void {
    this.problemLines.warn("host sent a message that could not be read", {
      kind: problem.kind,
      bytes: problem.bytes,
      excerpt: problem.excerpt,
    });
    if (problem.kind === "too-large" && problem.asks !== true) {
      // The host's answer to a request of the upstream's, dropped unread: the upstream is told
      // rather than left waiting; the host's own requests, which may share its id, are untouched,
      // and an answer is never answered. Its id unseen (neither end kept shows it, or its body was
      // cut off before its end — SDK hosts write the id last), it answers the one request the
      // upstream has waiting, if only one.
      const only = problem.answers === true && this.upstreamAsked.size === 1;
      const id = problem.id ?? (only ? this.upstreamAsked.keys().next().value : undefined);
      if (id === undefined) return;
      const written = this.upstreamAsked.get(id);
      if (written === undefined) return;
      this.upstreamAsked.delete(id);
      this.askedTooMuch = false;
      this.answerUpstream(
        written,
        JSONRPC.MESSAGE_TOO_LARGE,
        `the host's answer of ${problem.bytes} bytes is over limits.maxMessageBytes`,
      );
    } else if (problem.kind === "too-large" && problem.id !== undefined) {
      this.toHost(
        errorResponse(
          problemIdAsWritten(problem.id, problem.idText),
          JSONRPC.MESSAGE_TOO_LARGE,
          `message of ${problem.bytes} bytes is over limits.maxMessageBytes`,
        ),
        problem.id,
      );
    } else if (problem.kind === "too-large") {
      // Its id was not where a look at its start and end finds one: the error goes to no id
      // (as JSON-RPC says when the id cannot be read) rather than nowhere.
      this.toHost(
        {
          jsonrpc: "2.0",
          id: null,
          error: {
            code: JSONRPC.MESSAGE_TOO_LARGE,
            message: `a message of ${problem.bytes} bytes is over limits.maxMessageBytes; its id could not be read`,
          },
        },
        undefined,
      );
    } else if (problem.kind === "too-complex") {
      // Refused unparsed: a request is answered under the id its top level shows.
      const id = problem.asks === true ? problem.id : undefined;
      this.toHost(
        {
          jsonrpc: "2.0",
          id: id === undefined ? null : problemIdAsWritten(id, problem.idText),
          error: {
            code: JSONRPC.MESSAGE_TOO_LARGE,
            message:
              `Message too large: more than limits.maxMessageNodes (${problem.limit}) objects, arrays, members and ` +
              `elements in one message of ${problem.bytes} bytes; not forwarded`,
          },
        },
        id,
      );
    } else if (problem.kind === "invalid-json") {
      this.toHost(
        {
          jsonrpc: "2.0",
          id: null,
          error: { code: JSONRPC.PARSE_ERROR, message: "Parse error: the message is not valid JSON" },
        },
        undefined,
      );
    } else if (problem.kind === "not-jsonrpc") {
      this.toHost(
        {
          jsonrpc: "2.0",
          id: null,
          error: { code: JSONRPC.INVALID_REQUEST, message: "Invalid Request: JSON that is not an object or array" },
        },
        undefined,
      );
    }
  }

  private upstreamProblem(problem: FramingProblem): void {
    this.problemLines.warn("upstream sent a message that could not be read", {
      kind: problem.kind,
      bytes: problem.bytes,
      // What the proxy sent it (an `env` value a child prints) is not shown, nor its start at the cut.
      excerpt: redactedExcerpt(problem.excerpt, problem.excerpt.length, this.options.upstream.secretsSent?.() ?? []),
    });
    if (problem.id === undefined) return;
    if (problem.asks === true) {
      // A request of the upstream's own the host never got: the upstream is told at once, rather
      // than left waiting on an answer that cannot come (and the host's call behind it).
      const unread = unreadRequestReason(problem);
      if (unread !== undefined)
        this.answerUpstream(problemIdAsWritten(problem.id, problem.idText), JSONRPC.MESSAGE_TOO_LARGE, unread);
      return;
    }
    this.endInitializeWatch(problem.id);
    const unread = unreadAnswerReason(problem);
    if (unread !== undefined) {
      // The answer was dropped unread (too large, or too costly to parse): the error the host gets
      // instead takes the request out.
      this.answer(problem.id, JSONRPC.MESSAGE_TOO_LARGE, unread);
    } else if (problem.kind === "invalid-json") {
      // Not UTF-8, but its id readable at one end: the request it answers need not wait for its timeout.
      this.answer(problem.id, JSONRPC.INTERNAL_ERROR, "the upstream's answer could not be read: it is not UTF-8");
    }
  }
}

/**
 * `transport.send`, a throw from a transport that throws instead of rejecting (a message
 * JSON.stringify cannot write) turned into a rejection. Callers attach a failure handler only
 * when the answer is not the shared settled `SENT` (nearly all messages are taken at once).
 */
function trySend(transport: ProxyTransport, message: unknown, options: ProxySendOptions | undefined): Promise<void> {
  try {
    return transport.send(message as JSONRPCMessage, options);
  } catch (error) {
    return Promise.reject(error);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
