/**
 * Stateless host requests (protocol 2026-07-28: no initialize, no session; every POST stands
 * alone) served by a small pool of started upstreams of one server, instead of an upstream —
 * for a stdio server, a child process — per POST.
 *
 * Each POST is a short-lived host transport. Its requests go to the least busy upstream of the
 * pool (a new one is started while every one is busy and the pool has fewer than `size`); one
 * that has nothing in flight for `idleMs` is ended. Upstreams are shared by POSTs that each
 * number their requests from 1, so ids are the pool's own on the way up — and progress tokens,
 * and the ids of requests an upstream sends to a host — and restored on the way back: every
 * answer reaches the POST that asked, with the id it used. A request an upstream sends to a host
 * goes out under an id nobody can guess: the host answers it in a POST of its own, and another
 * client of the pool (the same bearer token, or every local client when none is configured) must
 * not answer it in that host's stead.
 *
 * What an upstream sends that is not tied to a request (a list-changed notification, a log
 * line; no progress token, not on a request's own response stream) goes to the one POST with
 * requests in flight. With none it has no host to go to, and with several a guess could give one
 * host's question, and its answer, to another: it is logged and dropped (a `ping` the proxy
 * answers itself). A request an upstream sends with no POST to carry it is answered with an
 * error, so it does not wait forever.
 *
 * Flow control as in the Bridge, bounded in time: when a POST's host has more than
 * `hostBufferBytes` sent to it and not taken, its upstream is no longer read until that host has
 * taken it (the upstream's own writes then block), so a host that reads late loses nothing. But an
 * upstream here serves many clients (every local one when no bearer token is configured): new
 * POSTs go to an upstream that is not held when there is one (or room for one), and one POST holds
 * its upstream for at most `holdMs` in all — then it is cut off: it gets no more notifications
 * (its progress, its logs: dropped; the cut and the count logged), only its answers, and the
 * upstream serves the others again. For `holdMs` after a POST was cut off, no other POST holds
 * that upstream (each is cut off at once), and new POSTs go elsewhere when they can: slow readers
 * cannot take turns to hold it. A POST ends with its last answer, so what a host that never
 * reads holds stays bounded.
 */
import { randomBytes } from "node:crypto";
import { JSONRPC } from "../errors/jsonRpcCodes.js";
import { redactedExcerpt, redactedId, redactSecrets } from "../errors/redact.js";
import type { Logger } from "../observe/logger.js";
import { ProblemLines } from "../observe/repeatedProblem.js";
import {
  cancelledRequestOf,
  errorResponse,
  isObj,
  isRequest,
  isResponse,
  malformedRequest,
  progressToken,
  isFailedRequest,
  relatedRequestOf,
  type RequestId,
} from "../transports/jsonrpc.js";
import { rememberOrigin } from "../transports/wireOrigin.js";
import { idAsWritten, problemIdAsWritten, progressTokenAsWritten } from "../transports/idAsWritten.js";
import type { SpillStore } from "../fit/spill/spillStore.js";
import type { UpstreamPages } from "../fit/spill/upstreamPages.js";
import { pageReadAnswer } from "./pageRead.js";
import type {
  FramingProblem,
  JSONRPCMessage,
  MessageExtraInfo,
  ProxySendOptions,
  ProxyTransport,
} from "../transports/types.js";
import { DEFAULT_LIMITS } from "../config/defaults.js";
import { forwardableMcpHeaders } from "../transports/mcpHeaders.js";
import type { NormalizingTransport } from "./withNormalization.js";
import { type InFlightRequest, RequestTable } from "./requestTable.js";
import { serverRefused } from "./serverRefused.js";
import { taskNamedBy } from "./taskOrigins.js";
import { excerpt, isMessage, tooManyAskedError, unreadAnswerReason, unreadRequestReason } from "./bridgeMessages.js";

/** An upstream the pool may use: started, normalizing, and able to say why it ended. */
export interface PooledUpstream {
  readonly id: string;
  readonly transport: NormalizingTransport;
  describeEnd(): string | undefined;
  /** Whether it was started from the server's entry as it is now (none came by SIGHUP since). */
  fromCurrentEntry?(): boolean;
}

export interface StatelessPoolOptions {
  readonly server: string;
  /** Most upstreams at once (`limits.statelessPoolSize`). */
  readonly size: number;
  /** An upstream with nothing in flight for this long is ended. */
  readonly idleMs: number;
  /** A request not answered in this time gets an error (and the upstream a cancel). */
  readonly requestTimeoutMs: number;
  /** An upstream's requests waiting at once for hosts' answers (`limits.maxUpstreamRequests`). */
  readonly maxUpstreamRequests?: number;
  readonly logger: Logger;
  /**
   * Starts one more upstream (rejects when it cannot start), its normalizing decorator reading
   * `requests`: the pool's table of the requests in flight on it.
   */
  readonly startUpstream: (requests: RequestTable) => Promise<PooledUpstream>;
  /** An upstream ended: `onItsOwn` when nobody asked it to (a failure). */
  readonly onUpstreamEnded: (upstream: PooledUpstream, onItsOwn: boolean) => void;
  /**
   * An upstream answered a request (`refused` undefined: it works), or its transport answered
   * for it with an error no host could get past (`refused`: why — no answer, HTTP 401, 5xx…).
   */
  readonly onUpstreamAnswer?: (upstream: PooledUpstream, refused?: string) => void;
  /** Called whenever nothing is in flight any more (graceful shutdown waits on it). */
  readonly onSettled?: () => void;
  /** Bytes a POST's host may leave untaken before its upstream is no longer read (`limits.hostBufferBytes`). */
  readonly hostBufferBytes?: number;
  /** Longest an upstream is not read for one POST's host that is behind (`limits.statelessHoldMs`). */
  readonly holdMs?: number;
  /**
   * The client's pages of cut results. A read of one is answered here, from them, whatever the
   * fit settings of the upstream that would take it (a SIGHUP may have turned cutting off since):
   * the URI is the proxy's, never the server's.
   */
  readonly pages?: SpillStore;
  /** Pages of an mcp-normalizer upstream the pool's upstreams linked to: their reads go to one. */
  readonly upstreamPages?: UpstreamPages;
}

/** A host request in flight on an upstream, under the pool's id (`id`): an entry of its request table. */
interface InFlight extends InFlightRequest {
  readonly id: number;
  readonly post: Post;
  readonly hostId: RequestId;
  /** The host's id as the answers it gets carry it: as written, when JSON.parse rounded it. */
  readonly idOut: RequestId;
  readonly timer: NodeJS.Timeout;
  /** The host's progress token and the pool's stand-in for it. */
  readonly progress: { readonly host: RequestId; readonly pool: number } | undefined;
  /** The task it asks about (`tasks/result`, `tasks/get`, …): what the upstream says of that task goes to it. */
  readonly task: string | undefined;
}

/** One stateless POST: its transport and its requests in flight (pool ids). */
interface Post {
  readonly transport: ProxyTransport;
  readonly lane: Lane;
  readonly waiting: Set<number>;
  /** Its host stayed behind past `holdMs`: it gets no more notifications, only its answers. */
  cutOff: boolean;
  /** How long it has held its upstream, over every time its host was behind. */
  heldMs: number;
  /** Notifications not sent to it since it was cut off. */
  dropped: number;
  /** Ended by the pool: its host took nothing while more than `hostBufferBytes` waited. */
  ended: boolean;
  /** The questions its upstream asked of its host that wait for an answer, by the id they went out with. */
  readonly asked: Set<string>;
}

interface Lane {
  readonly upstream: PooledUpstream | undefined;
  readonly ready: Promise<PooledUpstream>;
  /** POSTs given this upstream and not ended yet (counted from the moment it was chosen). */
  posts: number;
  /** The one table of requests in flight on this upstream, shared with its decorator. */
  readonly inFlight: RequestTable<InFlight>;
  /** Requests this upstream sent to hosts, by the pool id they went out with. */
  readonly asked: Set<string>;
  /** The same, by the upstream's own id (what its cancel names), oldest first: an upstream may reuse one. */
  readonly askIds: Map<RequestId, string[]>;
  /** Set once `maxUpstreamRequests` is reached, cleared when a host answers one (one log line per episode). */
  askedTooMuch: boolean;
  idle: NodeJS.Timeout | undefined;
  closing: boolean;
  /** Started from a server config replaced since (SIGHUP): given no new POSTs; ends once idle, as others do. */
  retired: string | undefined;
  /** The POST whose host is behind while the upstream is not read (for at most `holdMs`). */
  heldFor: Post | undefined;
  /** Until when it is held for no POST: a POST was cut off just before. */
  noHoldUntil: number;
}

/** A request an upstream sent to a host, waiting for its answer under the pool's id. */
interface AskedOfHost {
  readonly lane: Lane;
  /** Its id as parsed: what the upstream's cancels name. */
  readonly upstreamId: RequestId;
  /** Its id as the upstream wrote it: what answers to it carry. */
  readonly idOut: RequestId;
  readonly timer: NodeJS.Timeout;
  readonly owner: InFlight;
}

export class StatelessPool {
  private readonly lanes = new Set<Lane>();
  /**
   * Requests upstreams sent to hosts, by pool id. A host answers in a later POST; one that has
   * not within `requestTimeoutMs` never will: the upstream gets an error and the entry goes.
   */
  private readonly askedByHosts = new Map<string, AskedOfHost>();
  private nextId = 0;
  private refusal: string | undefined;
  /** What hosts or upstreams sent that could not be taken, logged throttled (anyone may post). */
  private readonly problemLines: ProblemLines;

  constructor(private readonly options: StatelessPoolOptions) {
    this.problemLines = new ProblemLines(options.logger);
  }

  /** Upstreams running or starting. */
  get upstreams(): number {
    return this.lanes.size;
  }

  /** Host requests in flight over every upstream. */
  get waitingCount(): number {
    let total = 0;
    for (const lane of this.lanes) total += lane.inFlight.size;
    return total;
  }

  /** From now on new requests are answered with this error (graceful shutdown). */
  refuseNewRequests(why: string): void {
    this.refusal = why;
  }

  /**
   * The server's config changed: the upstreams running now were started from the old one. New
   * POSTs go to upstreams started from now on; an old one serves what it has and answers a
   * host's late reply to what it asked, then ends as soon as it is idle while a new one serves
   * (so repeated changes under load do not pile old upstreams up), else once idle for `idleMs`,
   * as any upstream of the pool (the pool's pages of cut results go with its last upstream).
   */
  retireUpstreams(why: string): void {
    for (const lane of this.lanes) lane.retired = why;
  }

  /** Whether an upstream started from the current config runs (or starts). */
  private serves(): boolean {
    for (const lane of this.lanes) if (!lane.closing && lane.retired === undefined) return true;
    return false;
  }

  /** Ends the retired upstreams with nothing left to do, now that a new one serves. */
  private endIdleRetired(): void {
    for (const lane of this.lanes)
      if (lane.retired !== undefined && lane.posts === 0 && lane.inFlight.size === 0 && lane.asked.size === 0)
        void this.endLane(lane, lane.retired);
  }

  /**
   * Serves one stateless POST's transport. Resolves once it is wired to a started upstream;
   * rejects when none can be started (the POST is then answered with that error).
   */
  async serve(transport: ProxyTransport): Promise<void> {
    if (this.refusal !== undefined) throw new Error(this.refusal);
    const lane = this.pick();
    lane.posts++;
    let upstream: PooledUpstream;
    try {
      upstream = await lane.ready;
    } catch (error) {
      lane.posts--;
      throw error;
    }
    const post: Post = {
      transport,
      lane,
      waiting: new Set(),
      cutOff: false,
      heldMs: 0,
      dropped: 0,
      ended: false,
      asked: new Set(),
    };
    transport.onmessage = (message, extra) => this.fromHost(post, upstream, message, extra);
    transport.onclose = () => this.postEnded(post, upstream);
    transport.onerror = (error) =>
      this.options.logger.debug("stateless host transport error", { error: error.message });
    // The host may have gone while the upstream started: its end was not seen by the handler.
    if ((transport as { isClosed?: boolean }).isClosed === true) {
      this.postEnded(post, upstream);
      return;
    }
    await transport.start();
  }

  /** Ends every upstream (proxy shutdown). */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.lanes].map((lane) => this.endLane(lane, "proxy shutting down")));
    this.problemLines.flush();
  }

  /**
   * The least busy upstream (fewest POSTs), one not held for a slow host first; a new one while
   * every one is busy (or held) and there is room.
   */
  private pick(): Lane {
    let best: Lane | undefined;
    let serving = 0;
    const now = Date.now();
    // Held for a slow host last, one that just cut a slow host off before the rest.
    const rank = (lane: Lane): number =>
      (lane.heldFor === undefined ? 0 : 2e9) + (now < lane.noHoldUntil ? 1e9 : 0) + lane.posts;
    for (const lane of this.lanes) {
      if (lane.closing || lane.retired !== undefined) continue;
      serving++;
      if (best === undefined || rank(lane) < rank(best)) best = lane;
    }
    const free = best !== undefined && best.heldFor === undefined && now >= best.noHoldUntil && best.posts === 0;
    if (best !== undefined && (free || serving >= this.options.size)) {
      if (best.idle !== undefined) clearTimeout(best.idle);
      best.idle = undefined;
      return best;
    }
    return this.startLane();
  }

  private startLane(): Lane {
    const lane: Lane = {
      upstream: undefined,
      ready: undefined as never,
      posts: 0,
      inFlight: new RequestTable<InFlight>(),
      asked: new Set(),
      askIds: new Map(),
      askedTooMuch: false,
      idle: undefined,
      closing: false,
      retired: undefined,
      heldFor: undefined,
      noHoldUntil: 0,
    };
    const ready = this.options.startUpstream(lane.inFlight).then(
      (upstream) => {
        (lane as { upstream: PooledUpstream | undefined }).upstream = upstream;
        // Retired while it started (it waited out a restart backoff a new entry ended), yet started
        // from that new entry: it serves like any other.
        if (lane.retired !== undefined && upstream.fromCurrentEntry?.() === true) lane.retired = undefined;
        upstream.transport.onmessage = (message, extra) =>
          this.fromUpstream(lane, upstream, message, relatedRequestOf(extra), isFailedRequest(extra));
        upstream.transport.onproblem = (problem) => this.upstreamProblem(lane, problem);
        upstream.transport.onerror = (error) =>
          this.problemLines.warn("pooled upstream transport error", { upstream: upstream.id, error: error.message });
        upstream.transport.onclose = () => this.laneEnded(lane, upstream);
        if (lane.closing) void upstream.transport.close();
        this.options.logger.info("stateless pool: upstream started", {
          upstream: upstream.id,
          upstreams: this.lanes.size,
        });
        this.endIdleRetired();
        return upstream;
      },
      (error: unknown) => {
        this.lanes.delete(lane);
        throw error;
      },
    );
    (lane as { ready: Promise<PooledUpstream> }).ready = ready;
    // Whoever waits on it reports the failure; nobody else must see an unhandled rejection.
    ready.catch(() => {});
    this.lanes.add(lane);
    return lane;
  }

  private fromHost(post: Post, upstream: PooledUpstream, message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    const headers = extra?.requestInfo?.headers;
    const forwarded = headers === undefined ? undefined : forwardableMcpHeaders(headers);
    const options: ProxySendOptions | undefined = forwarded === undefined ? undefined : { forwardHeaders: forwarded };
    const msg: unknown = message;
    if (isRequest(msg)) {
      if (this.refusal !== undefined) {
        this.toHost(
          post,
          errorResponse(idAsWritten(msg), JSONRPC.UPSTREAM_UNAVAILABLE, `${msg.method} not forwarded: ${this.refusal}`),
          msg.id,
        );
        return;
      }
      const invalid = malformedRequest(msg);
      if (invalid !== undefined) {
        this.toHost(post, { ...invalid, id: idAsWritten(msg) } as JSONRPCMessage, msg.id);
        return;
      }
      const sessionOnly = SESSION_ONLY.get(msg.method);
      if (sessionOnly !== undefined) {
        const refusal = needsSession(msg.method, sessionOnly);
        this.toHost(post, errorResponse(idAsWritten(msg), JSONRPC.METHOD_NOT_FOUND, refusal), msg.id);
        return;
      }
      const page =
        this.options.pages === undefined ? null : pageReadAnswer(this.options.pages, msg, this.options.upstreamPages);
      if (page !== null) {
        this.toHost(post, page, msg.id);
        return;
      }
      const id = ++this.nextId;
      const hostToken = progressToken(msg);
      const progress =
        hostToken === undefined ? undefined : { host: progressTokenAsWritten(msg, hostToken), pool: ++this.nextId };
      const timer = setTimeout(() => this.timedOut(post.lane, upstream, id), this.options.requestTimeoutMs);
      timer.unref();
      post.lane.inFlight.add({
        id,
        method: msg.method,
        resultOf: undefined,
        tool: undefined,
        post,
        hostId: msg.id,
        idOut: idAsWritten(msg),
        timer,
        progress,
        task: taskNamedBy(msg),
      });
      post.waiting.add(id);
      this.send(upstream, rebuiltFrom(withIds(msg, id, progress?.pool), msg), options, id);
      return;
    }
    if (isResponse(msg)) {
      // A host answering what an upstream asked: back to that upstream, under its own id.
      const asked = typeof msg.id === "string" ? this.askedByHosts.get(msg.id) : undefined;
      if (asked === undefined || asked.lane.upstream === undefined) {
        this.problemLines.warn("stateless host answered a request no pooled upstream is waiting on; not forwarded", {
          id: msg.id,
        });
        return;
      }
      this.forgetAsk(msg.id as string);
      asked.lane.askedTooMuch = false;
      this.send(asked.lane.upstream, rebuiltFrom({ ...msg, id: asked.idOut }, msg), options);
      return;
    }
    const hostId = cancelledRequestOf(msg);
    if (hostId !== undefined) {
      const cancel = msg as Record<string, unknown> & { params: Record<string, unknown> };
      for (const id of post.waiting) {
        const inFlight = post.lane.inFlight.get(id);
        if (inFlight === undefined || inFlight.hostId !== hostId) continue;
        this.forget(post.lane, id);
        this.send(upstream, { ...cancel, params: { ...cancel.params, requestId: id } }, options);
        return;
      }
      return;
    }
    this.send(upstream, msg, options);
  }

  /** `onStream`: the (pool) id of the request whose response stream carried the message, when the upstream says. */
  private fromUpstream(
    lane: Lane,
    upstream: PooledUpstream,
    message: JSONRPCMessage,
    onStream: RequestId | undefined,
    failed = false,
  ): void {
    if (Array.isArray(message) && message.length === 0)
      this.problemLines.warn("pooled upstream sent an empty array; not forwarded", { upstream: upstream.id });
    for (const msg of Array.isArray(message) ? (message as unknown[]) : [message]) {
      if (!isMessage(msg)) {
        // A batch's `null`, number or nested array: no host asked for it, and none could read it.
        this.problemLines.warn("pooled upstream sent JSON that is not a JSON-RPC message; not forwarded", {
          upstream: upstream.id,
          excerpt: excerpt(msg, upstream.transport.secretsSent()),
        });
        continue;
      }
      if (isResponse(msg)) {
        const error = (msg as { error?: { message?: unknown } }).error;
        if (!failed) this.options.onUpstreamAnswer?.(upstream);
        else if (serverRefused(error)) this.options.onUpstreamAnswer?.(upstream, String(error?.message));
        const inFlight = typeof msg.id === "number" ? this.forget(lane, msg.id) : undefined;
        if (inFlight === undefined) {
          this.problemLines.warn("pooled upstream answered a request that is not waiting; not forwarded", {
            upstream: upstream.id,
            id: redactedId(msg.id, upstream.transport.secretsSent()),
          });
          continue;
        }
        this.toHost(inFlight.post, rebuiltFrom({ ...msg, id: inFlight.idOut }, msg), inFlight.hostId);
        continue;
      }
      if (this.withdrawAsk(lane, msg)) continue;
      const owner = this.ownerOf(lane, msg, onStream);
      if (isRequest(msg)) {
        if (owner === undefined && msg.method === "ping") {
          // A liveness check of the client side: the proxy answers for it.
          this.send(upstream, { jsonrpc: "2.0", id: idAsWritten(msg), result: {} });
          continue;
        }
        if (owner === undefined) {
          // Nobody to ask: answered here, so the upstream does not wait forever.
          this.send(
            upstream,
            errorResponse(
              idAsWritten(msg),
              JSONRPC.METHOD_NOT_FOUND,
              `${msg.method}: no single host request in flight it belongs to (stateless hosts have no session)`,
            ),
          );
          continue;
        }
        if (owner.post.transport.reaches?.(owner.hostId) === false) {
          // Its POST takes JSON only: the question would wait unseen until the call timed out.
          this.send(
            upstream,
            errorResponse(
              idAsWritten(msg),
              JSONRPC.METHOD_NOT_FOUND,
              `${msg.method}: the host's request takes a JSON answer only (its Accept has no ` +
                "text/event-stream), so it cannot be asked",
            ),
          );
          continue;
        }
        if (lane.asked.size >= (this.options.maxUpstreamRequests ?? DEFAULT_LIMITS.maxUpstreamRequests)) {
          this.tooManyAsked(lane, idAsWritten(msg));
          continue;
        }
        const id = `q-${randomBytes(12).toString("base64url")}`;
        const upstreamId = msg.id;
        const idOut = idAsWritten(msg);
        const timer = setTimeout(() => {
          if (this.forgetAsk(id) === undefined) return;
          this.send(
            upstream,
            errorResponse(
              idOut,
              JSONRPC.REQUEST_TIMEOUT,
              `no host answered ${msg.method} within ${this.options.requestTimeoutMs} ms (limits.requestTimeoutMs)`,
            ),
          );
        }, this.options.requestTimeoutMs);
        timer.unref();
        lane.asked.add(id);
        owner.post.asked.add(id);
        const sameId = lane.askIds.get(upstreamId);
        if (sameId === undefined) lane.askIds.set(upstreamId, [id]);
        else sameId.push(id);
        this.askedByHosts.set(id, { lane, upstreamId, idOut, timer, owner });
        this.toHost(owner.post, rebuiltFrom({ ...msg, id }, msg), owner.hostId);
        continue;
      }
      if (owner === undefined) {
        this.options.logger.info(
          "pooled upstream sent a message that belongs to no single request in flight; dropped",
          {
            upstream: upstream.id,
            method:
              isObj(msg) && typeof msg.method === "string"
                ? redactSecrets(msg.method, upstream.transport.secretsSent())
                : undefined,
          },
        );
        continue;
      }
      // A progress notification goes back with the host's own token.
      const out =
        owner.progress !== undefined &&
        isObj(msg) &&
        isObj(msg.params) &&
        msg.params.progressToken === owner.progress.pool
          ? rebuiltFrom({ ...msg, params: { ...msg.params, progressToken: owner.progress.host } }, msg)
          : msg;
      this.toHost(owner.post, out, owner.hostId);
    }
  }

  /**
   * The upstream cancels what it asked a host: the cancel goes to the host that was asked, under
   * the pool id the question went out with (the upstream's own id means nothing to the host, or
   * another question), and a late answer from the host is no longer forwarded. True when `msg`
   * was a cancel from the upstream (one for a question no longer asked is dropped).
   */
  private withdrawAsk(lane: Lane, msg: unknown): boolean {
    const upstreamId = cancelledRequestOf(msg);
    if (upstreamId === undefined) return false;
    const id = lane.askIds.get(upstreamId)?.[0];
    const asked = id === undefined ? undefined : this.forgetAsk(id);
    if (id !== undefined && asked !== undefined) {
      lane.askedTooMuch = false;
      const cancel = msg as Record<string, unknown> & { params: Record<string, unknown> };
      this.toHost(
        asked.owner.post,
        rebuiltFrom({ ...cancel, params: { ...cancel.params, requestId: id } }, msg),
        asked.owner.hostId,
      );
      return true;
    }
    // Withdrawn after it was answered or timed out: the upstream's id names nothing the host
    // has (or another question it was asked), so the cancel goes nowhere.
    this.options.logger.debug("pooled upstream cancelled a question no host is asked any more; dropped", {
      upstreamId,
    });
    return true;
  }

  /**
   * A host's answer to one of the questions asked of hosts, over the limit and refused unread:
   * the upstream that asked is answered the error at once, as a session's would be, not left to
   * wait `requestTimeoutMs`. Known by the pool's id its ends show; without one, nothing is told
   * (with hosts sharing the pool, no single waiting question can be assumed to be the one).
   */
  hostAnswerTooLarge(problem: FramingProblem): void {
    const asked = typeof problem.id === "string" ? this.forgetAsk(problem.id) : undefined;
    if (asked === undefined || asked.lane.upstream === undefined) return;
    asked.lane.askedTooMuch = false;
    this.send(
      asked.lane.upstream,
      errorResponse(
        asked.idOut,
        JSONRPC.MESSAGE_TOO_LARGE,
        `the host's answer of ${problem.bytes} bytes is over limits.maxMessageBytes`,
      ),
    );
  }

  /** A question asked of hosts is no longer waiting: forgotten, its timer cleared. What it was, if it was waiting. */
  private forgetAsk(id: string): AskedOfHost | undefined {
    const asked = this.askedByHosts.get(id);
    if (asked === undefined) return undefined;
    this.askedByHosts.delete(id);
    clearTimeout(asked.timer);
    asked.lane.asked.delete(id);
    asked.owner.post.asked.delete(id);
    const sameId = asked.lane.askIds.get(asked.upstreamId);
    if (sameId !== undefined) {
      sameId.splice(sameId.indexOf(id), 1);
      if (sameId.length === 0) asked.lane.askIds.delete(asked.upstreamId);
    }
    return asked;
  }

  /**
   * One question more than `maxUpstreamRequests` waits for hosts: answered here, not forwarded
   * (each waiting one is remembered, with a timer, until a host answers it: an upstream asking
   * without end would grow the pool). Logged once until a host has answered some.
   */
  private tooManyAsked(lane: Lane, upstreamId: RequestId): void {
    const max = this.options.maxUpstreamRequests ?? DEFAULT_LIMITS.maxUpstreamRequests;
    if (!lane.askedTooMuch)
      this.options.logger.warn("pooled upstream has too many requests waiting for hosts; answered with an error", {
        upstream: lane.upstream?.id,
        max,
      });
    lane.askedTooMuch = true;
    if (lane.upstream === undefined) return;
    this.send(lane.upstream, errorResponse(upstreamId, JSONRPC.SERVER_ERROR, tooManyAskedError(max)));
  }

  /**
   * The request in flight a server→client message belongs to: by progress token; else the one
   * whose response stream carried it (`onStream`); else, for a message about a task, a request
   * about that task; else the only POST with requests in flight.
   * With several POSTs in flight and nothing to tell them apart, nobody: any pick could hand one
   * host's question — and its answer — to another host sharing the upstream. A message about a
   * task goes to nobody rather than to the only POST: that one may be another client's.
   */
  private ownerOf(lane: Lane, msg: unknown, onStream: RequestId | undefined): InFlight | undefined {
    const token = isObj(msg) && isObj(msg.params) ? msg.params.progressToken : undefined;
    if (token === undefined) {
      // The request whose stream carried it, or nobody once that one is answered.
      if (onStream !== undefined) return lane.inFlight.get(onStream);
      const task = taskNamedBy(msg);
      if (task !== undefined) {
        for (const inFlight of lane.inFlight.values()) if (inFlight.task === task) return inFlight;
        return undefined;
      }
      // One POST's requests (a batch) have one host: any of them carries it there.
      let only: InFlight | undefined;
      for (const inFlight of lane.inFlight.values()) {
        if (only !== undefined && inFlight.post !== only.post) return undefined;
        only = inFlight;
      }
      return only;
    }
    for (const inFlight of lane.inFlight.values()) if (inFlight.progress?.pool === token) return inFlight;
    return undefined;
  }

  private upstreamProblem(lane: Lane, problem: FramingProblem): void {
    this.problemLines.warn("pooled upstream sent a message that could not be read", {
      kind: problem.kind,
      bytes: problem.bytes,
      excerpt: redactedExcerpt(problem.excerpt, problem.excerpt.length, lane.upstream?.transport.secretsSent() ?? []),
    });
    if (problem.asks === true) {
      // A request of the upstream's own no host got: it is told at once, not left waiting.
      const unread = unreadRequestReason(problem);
      if (unread !== undefined && problem.id !== undefined && lane.upstream !== undefined)
        this.send(
          lane.upstream,
          errorResponse(problemIdAsWritten(problem.id, problem.idText), JSONRPC.MESSAGE_TOO_LARGE, unread),
        );
      return;
    }
    const why = unreadAnswerReason(problem);
    if (why === undefined || typeof problem.id !== "number") return;
    const inFlight = this.forget(lane, problem.id);
    if (inFlight !== undefined)
      this.toHost(inFlight.post, errorResponse(inFlight.idOut, JSONRPC.MESSAGE_TOO_LARGE, why), inFlight.hostId);
  }

  private timedOut(lane: Lane, upstream: PooledUpstream, id: number): void {
    const inFlight = this.forget(lane, id);
    if (inFlight === undefined) return;
    this.problemLines.warn(
      "pooled upstream did not answer a request within limits.requestTimeoutMs; answered with an error",
      {
        upstream: upstream.id,
        method: inFlight.method,
        timeoutMs: this.options.requestTimeoutMs,
      },
    );
    this.toHost(
      inFlight.post,
      errorResponse(
        inFlight.idOut,
        JSONRPC.REQUEST_TIMEOUT,
        `upstream did not answer ${inFlight.method} within ${this.options.requestTimeoutMs} ms ` +
          `(limits.requestTimeoutMs)`,
      ),
      inFlight.hostId,
    );
    this.send(upstream, {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: id, reason: "timeout in mcp-normalizer" },
    });
  }

  /** The POST went away (answered, or the host left): what it still waits for is cancelled. */
  private postEnded(post: Post, upstream: PooledUpstream): void {
    const cancelled = new Set<InFlight>();
    for (const id of [...post.waiting]) {
      const inFlight = this.forget(post.lane, id);
      if (inFlight === undefined) continue;
      cancelled.add(inFlight);
      this.send(upstream, {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason: "the host's request ended" },
      });
    }
    // What a cancelled request asked of its host waits for nobody now: answered at once, not
    // held against the limit every client of this upstream shares until a timeout. (A request
    // answered leaves its questions open: its host saw them and may still answer.)
    for (const id of [...post.asked]) {
      const asked = this.askedByHosts.get(id);
      if (asked === undefined || !cancelled.has(asked.owner)) continue;
      this.forgetAsk(id);
      this.send(
        upstream,
        errorResponse(asked.idOut, JSONRPC.SERVER_ERROR, "the host's request it was asked for has ended"),
      );
    }
    if (post.lane.heldFor === post) this.release(post.lane);
    if (post.dropped > 0)
      this.options.logger.info("stateless POST ended; notifications dropped while it was cut off", {
        upstream: upstream.id,
        dropped: post.dropped,
      });
    post.lane.posts--;
    if (post.lane.posts === 0 && post.lane.inFlight.size === 0) this.armIdle(post.lane);
  }

  private forget(lane: Lane, id: number): InFlight | undefined {
    const inFlight = lane.inFlight.take(id);
    if (inFlight === undefined) return undefined;
    inFlight.post.waiting.delete(id);
    clearTimeout(inFlight.timer);
    if (lane.inFlight.size === 0) {
      if (lane.posts === 0) this.armIdle(lane);
      if (this.waitingCount === 0) this.options.onSettled?.();
    }
    return inFlight;
  }

  private armIdle(lane: Lane): void {
    if (lane.closing) return;
    if (lane.retired !== undefined && lane.asked.size === 0 && this.serves()) {
      void this.endLane(lane, lane.retired);
      return;
    }
    if (lane.idle !== undefined) clearTimeout(lane.idle);
    lane.idle = setTimeout(() => {
      if (lane.posts === 0 && lane.inFlight.size === 0) void this.endLane(lane, `idle for ${this.options.idleMs} ms`);
    }, this.options.idleMs);
    lane.idle.unref();
  }

  private async endLane(lane: Lane, why: string): Promise<void> {
    if (lane.closing) return;
    lane.closing = true;
    if (lane.idle !== undefined) clearTimeout(lane.idle);
    const upstream = lane.upstream ?? (await lane.ready.catch(() => undefined));
    if (upstream === undefined) return;
    this.options.logger.info("stateless pool: ending upstream", { upstream: upstream.id, reason: why });
    await upstream.transport.close();
  }

  /** The upstream is gone: whatever waited on it gets an error naming why. */
  private laneEnded(lane: Lane, upstream: PooledUpstream): void {
    const onItsOwn = !lane.closing;
    lane.closing = true;
    if (lane.idle !== undefined) clearTimeout(lane.idle);
    this.lanes.delete(lane);
    for (const id of [...lane.asked]) this.forgetAsk(id);
    const why = upstream.describeEnd();
    const message = why === undefined ? "upstream connection ended" : `upstream connection ended: ${why}`;
    for (const { id } of [...lane.inFlight.values()]) {
      const inFlight = this.forget(lane, id);
      if (inFlight !== undefined)
        this.toHost(
          inFlight.post,
          errorResponse(inFlight.idOut, JSONRPC.UPSTREAM_UNAVAILABLE, message),
          inFlight.hostId,
        );
    }
    // The pool may go with its last upstream: what its log still counts is told now.
    if (this.lanes.size === 0) this.problemLines.flush();
    this.options.onUpstreamEnded(upstream, onItsOwn);
  }

  private send(upstream: PooledUpstream, msg: unknown, options?: ProxySendOptions, id?: number): void {
    let sending: Promise<void>;
    try {
      sending = upstream.transport.send(msg as JSONRPCMessage, options);
    } catch (error) {
      sending = Promise.reject(error);
    }
    sending.catch((error: unknown) => {
      const text = error instanceof Error ? error.message : String(error);
      this.options.logger.warn("could not send to a pooled upstream", { upstream: upstream.id, error: text });
      if (id === undefined) return;
      for (const lane of this.lanes) {
        const inFlight = lane.inFlight.has(id) ? this.forget(lane, id) : undefined;
        if (inFlight !== undefined)
          this.toHost(
            inFlight.post,
            errorResponse(
              inFlight.idOut,
              JSONRPC.UPSTREAM_UNAVAILABLE,
              `could not send the request to the upstream: ${text}`,
            ),
            inFlight.hostId,
          );
      }
    });
  }

  private toHost(post: Post, msg: unknown, related: RequestId): void {
    if (post.cutOff && !isResponse(msg) && !isRequest(msg)) {
      post.dropped++;
      return;
    }
    // Cut off, and still more than it may leave untaken: a host that does not read would have
    // every answer of its requests held for it. Its POST is ended (its requests cancelled).
    if (post.cutOff && (post.transport.queuedBytes ?? 0) > this.hostBufferBytes) {
      this.endUnread(post);
      return;
    }
    let sending: Promise<void>;
    try {
      sending = post.transport.send(msg as JSONRPCMessage, { relatedRequestId: related });
    } catch (error) {
      sending = Promise.reject(error);
    }
    sending.catch((error: unknown) => {
      this.options.logger.warn("could not send to a stateless host", {
        error: error instanceof Error ? error.message : String(error),
      });
    });
    if (!post.cutOff && post.lane.heldFor === undefined && (post.transport.queuedBytes ?? 0) > this.hostBufferBytes)
      this.hold(post);
  }

  private get holdMs(): number {
    return this.options.holdMs ?? DEFAULT_LIMITS.statelessHoldMs;
  }

  private get hostBufferBytes(): number {
    return this.options.hostBufferBytes ?? DEFAULT_LIMITS.hostBufferBytes;
  }

  /** A POST whose host took nothing for `holdMs` and more waits for it: ended, once. */
  private endUnread(post: Post): void {
    if (post.ended) return;
    post.ended = true;
    this.options.logger.warn(
      "stateless host took nothing of what was sent to it: its POST is ended and its requests cancelled",
      { upstream: post.lane.upstream?.id, waiting: post.waiting.size, limit: "limits.hostBufferBytes" },
    );
    void post.transport.close();
  }

  /**
   * The POST's host is behind: its upstream is not read until that host has taken some of it —
   * for `holdMs` at most in all, then the POST is cut off and the upstream read again. Cut off at
   * once within `holdMs` after another POST was cut off on the same upstream.
   */
  private hold(post: Post): void {
    const lane = post.lane;
    const upstream = lane.upstream;
    const drained = post.transport.whenDrained?.();
    if (upstream === undefined || drained === undefined || lane.closing) return;
    const left = this.holdMs - post.heldMs;
    if (left <= 0 || Date.now() < lane.noHoldUntil) {
      this.cutOff(post);
      return;
    }
    lane.heldFor = post;
    upstream.transport.pauseReading();
    const since = Date.now();
    const timer = setTimeout(() => {
      if (lane.heldFor !== post) return;
      this.cutOff(post);
      this.release(lane);
    }, left);
    timer.unref();
    void drained.then(() => {
      clearTimeout(timer);
      if (lane.heldFor !== post) return;
      // A message after this one finds its host still behind and holds the upstream again, for what is left.
      post.heldMs += Date.now() - since;
      this.release(lane);
    });
  }

  /** The POST gets only its answers from now on, and its upstream is held for no other for `holdMs`. */
  private cutOff(post: Post): void {
    post.cutOff = true;
    post.lane.noHoldUntil = Date.now() + this.holdMs;
    this.options.logger.warn(
      "stateless host stayed behind on what was sent to it: notifications for its POST are dropped " +
        "from now on (its answers still go) so the pooled upstream serves the other clients",
      { upstream: post.lane.upstream?.id, limit: "limits.statelessHoldMs", ms: this.holdMs },
    );
  }

  private release(lane: Lane): void {
    lane.heldFor = undefined;
    if (!lane.closing) lane.upstream?.transport.resumeReading();
  }
}

/**
 * Requests whose effect outlives their answer, and why each needs a session: a pooled upstream
 * is shared between clients and a stateless POST ends with its answer, so a subscription's
 * updates could reach only another client's POST, and a log level set would be every client's.
 */
const SESSION_ONLY: ReadonlyMap<string, string> = new Map([
  ["resources/subscribe", "updates could not reach this one (initialize a session to subscribe)"],
  ["resources/unsubscribe", "updates could not reach this one (initialize a session to subscribe)"],
  ["logging/setLevel", "the level would be set for them too (initialize a session to set it)"],
]);

function needsSession(method: string, why: string): string {
  return `${method} needs a session: requests without one share the pool's upstreams with other clients, and ${why}`;
}

/** `out`, built from `from` with new ids: what it shares with it goes out as the text it came in. */
function rebuiltFrom<T>(out: T, from: unknown): T {
  rememberOrigin(out, from);
  return out;
}

/** The request with the pool's id (and progress token), every other field as the host sent it. */
function withIds(msg: Record<string, unknown>, id: number, token: number | undefined): Record<string, unknown> {
  if (token === undefined) return { ...msg, id };
  const params = msg.params as Record<string, unknown>;
  return {
    ...msg,
    id,
    params: { ...params, _meta: { ...(params._meta as Record<string, unknown>), progressToken: token } },
  };
}
