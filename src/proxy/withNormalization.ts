/**
 * The normalizing Transport decorator: wraps the transport that talks to an
 * upstream server, remembers the method of each request id going out, and rewrites the
 * matching results coming back. Everything else passes through as the very same object.
 *
 * SDK-based hosts use it in-process: `client.connect(withNormalization(transport))`
 * (./inProcess.ts checks their options first). The proxy puts it between a host-side and an
 * upstream-side transport (src/proxy/bridge.ts).
 */
import type { ChangeRecord, NormalizationEvent } from "../normalize/change.js";
import { Policy, type PolicyInput } from "../normalize/policy.js";
import { normalizeRequestParams, normalizeResult, REQUEST_METHODS, RESULT_METHODS } from "../normalize/result.js";
import type {
  FlowControl,
  JSONRPCMessage,
  MessageExtraInfo,
  ProxyTransport,
  Transport,
  TransportSendOptions,
} from "../transports/types.js";
import { rebuild, type JsonObject } from "../normalize/objects.js";
import { SENT } from "../transports/drainWaiter.js";
import { cancelledRequestOf, isObj, isRequest, isResponse, type RequestId } from "../transports/jsonrpc.js";
import { mergeChanges, type Fitted } from "../fit/fitResult.js";
import { FitStage, type FitOptions } from "./fitStage.js";
import { DEFAULT_LIMITS } from "../config/defaults.js";
import { completePolicyOptions } from "../config/policy.js";
import { createdTaskId, TaskOrigins } from "./taskOrigins.js";
import { inFlight, RequestTable } from "./requestTable.js";
import { rememberOrigin } from "../transports/wireOrigin.js";
import { measuredOnWire } from "../transports/wireSizes.js";
import { wireTextOf } from "../transports/wireText.js";

/** The callbacks given as `null`, as none. */
interface NoNullCallbacks {
  onNormalized?: (event: NormalizationEvent) => void;
  onEngineError?: (error: unknown, method: string) => void;
  now?: () => number;
}

function withoutNullCallbacks(options: NormalizationOptions): NormalizationOptions & NoNullCallbacks {
  const out = { ...options };
  for (const key of ["onNormalized", "onEngineError", "now"] as const) if (out[key] === null) delete out[key];
  return out as NormalizationOptions & NoNullCallbacks;
}

/** What the decorator reports for each message it normalized. */

export interface NormalizationOptions {
  /**
   * A compiled policy, or options to compile one. What they leave out takes the config's
   * defaults (config/defaults.ts), `maxNormalizeBytes` the default `limits.maxNormalizeBytes`.
   */
  policy?: Policy | PolicyInput;
  /** Called once per normalized message with its change records (for logs, metrics, reports). `null`: none. */
  onNormalized?: ((event: NormalizationEvent) => void) | null;
  /** Called when the engine itself fails (it should not): the message is forwarded unchanged. `null`: none. */
  onEngineError?: ((error: unknown, method: string) => void) | null;
  /** Clock for `ms`; injectable for tests. `null`: the default. */
  now?: (() => number) | null;
  /**
   * Fitting results to the host (images, embedded resources, long tool results). Off unless
   * its policy asks for something; a result with images to fit is held until they are done, and
   * messages after it wait behind it (order is kept) while the upstream is not read.
   */
  fit?: FitOptions;
  /** Task ids remembered (task id → creating method) for `tasks/result` (`limits.maxTrackedTasks`). */
  maxTrackedTasks?: number;
}

/**
 * A message waiting to be handed on — behind one whose images are being fitted, or an answer
 * the proxy gave itself while the reader is held (`local`: its bytes) — or the upstream's close.
 */
type Held =
  | { readonly message: JSONRPCMessage; readonly extra: MessageExtraInfo | undefined; readonly local?: number }
  | "close";

/** Events of a message nothing rewrote. */
const NO_EVENTS: readonly NormalizationEvent[] = [];
/** Requests whose method is not one we rewrite are not remembered at all. */
const TRACKED = RESULT_METHODS;
/** A task's deferred result: normalized as the result of the method that created the task. */
const TASK_RESULT = "tasks/result";

export class NormalizingTransport implements ProxyTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  /**
   * Ends the inner transport's session with its server (the SDK's streamable HTTP: a DELETE);
   * there only when the inner transport has it, so a caller asking whether it can sees the same.
   */
  declare readonly terminateSession?: () => Promise<void>;

  private readonly policy: Policy;
  /** The requests in flight: this decorator's own, or its owner's (a bridge's, a pool's). */
  private readonly requests: RequestTable;
  /** True when the table is this decorator's own: it then adds and takes out the entries itself. */
  private readonly ownsRequests: boolean;
  private readonly tasks: TaskOrigins;
  /** Events of the message being received, reported once it has been handed on. */
  private events: NormalizationEvent[] = [];
  private readonly now: () => number;
  /** The fit layer of the current connection (a new one when the transport is started again). */
  private fit: FitStage | undefined;
  /**
   * Set while messages wait to be handed on, in order: while one waits for its images (the
   * upstream is then not read), and the proxy's own answers while the reader holds us back.
   */
  private backlog: Held[] | undefined;
  /** True while a received message waits for its images. */
  private fitting = false;
  /**
   * The message whose images are being fitted, over a transport that cannot stop reading: what
   * arrives meanwhile is held here, counted, and past `limits.fitHeldBytes` the fit is given up.
   */
  private unpaused: { readonly message: JSONRPCMessage; readonly extra: MessageExtraInfo | undefined } | undefined;
  private heldBytes = 0;
  /** Results whose images are being fitted, by request id: a cancel of the request gives the fit up. */
  private readonly fitsRunning = new Map<RequestId, AbortController>();
  /** Counts fits begun or given up: a fit's late answer for a count gone by is dropped. */
  private fitCount = 0;
  /** True while the reader asked for no more messages (flow control, see pauseReading). */
  private held = false;
  private draining = false;
  /** Bytes of the proxy's own answers waiting in the backlog: counted as not yet taken. */
  private localBytes = 0;
  private localDrained: { readonly promise: Promise<void>; readonly resolve: () => void } | undefined;
  private closing = false;
  private released = false;

  /**
   * `requests`: the table of requests in flight of whoever owns this connection (a bridge, a
   * stateless pool), which adds every request it sends through here and takes it out when it
   * is over; without it the decorator keeps its own table of the requests it rewrites.
   */
  private readonly options: NormalizationOptions & NoNullCallbacks;

  constructor(
    readonly inner: Transport & Pick<ProxyTransport, "onproblem" | "secretsSent"> & FlowControl,
    options: NormalizationOptions = {},
    requests?: RequestTable,
  ) {
    this.options = withoutNullCallbacks(options);
    this.ownsRequests = requests === undefined;
    this.requests = requests ?? new RequestTable();
    this.policy = options.policy instanceof Policy ? options.policy : new Policy(completePolicyOptions(options.policy));
    this.now = this.options.now ?? (() => performance.now());
    this.fit = options.fit === undefined ? undefined : new FitStage(options.fit);
    this.tasks = new TaskOrigins(options.maxTrackedTasks ?? DEFAULT_LIMITS.maxTrackedTasks);
    inner.onmessage = (message, extra) => this.receive(message, extra);
    inner.onclose = () => {
      // The upstream ended on its own: what it sent before goes on first. Closed from this
      // side, what still waits is nobody's any more.
      if (this.backlog !== undefined && !this.closing) this.backlog.push("close");
      else this.closed();
    };
    inner.onerror = (error) => this.onerror?.(error);
    const terminate = (inner as { terminateSession?: unknown }).terminateSession;
    if (typeof terminate === "function") this.terminateSession = () => terminate.call(inner) as Promise<void>;
  }

  get onproblem(): ProxyTransport["onproblem"] {
    return this.inner.onproblem;
  }

  set onproblem(handler: ProxyTransport["onproblem"]) {
    this.inner.onproblem = handler;
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  /** The protocol version the inner transport keeps, where it keeps one (the SDK's streamable HTTP). */
  get protocolVersion(): string | undefined {
    const version = (this.inner as { protocolVersion?: unknown }).protocolVersion;
    return typeof version === "string" ? version : undefined;
  }

  /** How many requests are in its table (for tests and leak checks; the owner's count when it has one). */
  get pendingCount(): number {
    return this.requests.size;
  }

  /** How many task ids are remembered (for tests and leak checks). */
  get trackedTaskCount(): number {
    return this.tasks.size;
  }

  start(): Promise<void> {
    // Started again after a close (an SDK client connecting anew): a fresh connection, with a
    // fit layer of its own — the last one's pages and fits ended with it.
    if (this.released) {
      this.released = false;
      this.closing = false;
      this.held = false;
      this.fitting = false;
      this.events = [];
      this.fit = this.options.fit === undefined ? undefined : new FitStage(this.options.fit);
    }
    return this.inner.start();
  }

  close(): Promise<void> {
    // Closed from this side: nobody waits for results still being fitted, whose drawings end now.
    this.closing = true;
    this.fit?.close();
    // Freed even if the inner transport never reports its end.
    return this.inner.close().finally(() => this.release());
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.fit !== undefined) {
      const forwarded = this.answerLocally(message);
      if (forwarded === null) return SENT;
      message = forwarded;
    }
    if (!Array.isArray(message)) this.noteOutgoing(message);
    else for (const msg of message as unknown[]) this.noteOutgoing(msg);
    if (!this.ownsRequests) return this.inner.send(message, options);
    // Not sent, not answered: a caller retrying against a lost session must not grow the table,
    // whether the send throws or rejects (or, a transport of JavaScript's, returns no promise).
    try {
      return Promise.resolve(this.inner.send(message, options)).catch((error: unknown) => this.unsent(message, error));
    } catch (error) {
      return this.unsent(message, error);
    }
  }

  /** Forgets the requests of a message that could not be sent, and fails the send as the inner one did. */
  private unsent(message: JSONRPCMessage, error: unknown): never {
    for (const msg of Array.isArray(message) ? (message as unknown[]) : [message])
      if (isRequest(msg)) this.requests.take(msg.id);
    throw error;
  }

  /**
   * Flow control is the inner transport's (see FlowControl), plus the answers the proxy gave
   * itself (pages of cut results) that wait while the reader is held: they count as sent toward
   * the upstream and not yet taken, so a host that keeps asking for pages it does not read is
   * itself no longer read.
   */
  get queuedBytes(): number {
    return (this.inner.queuedBytes ?? 0) + this.localBytes;
  }

  /** What the proxy sends the upstream inside, not to be quoted back from it (types.ts). */
  secretsSent(): Iterable<string | undefined> {
    return this.inner.secretsSent?.() ?? [];
  }

  whenDrained(): Promise<void> {
    if (this.localBytes > 0) {
      if (this.localDrained === undefined) {
        let resolve!: () => void;
        const promise = new Promise<void>((done) => (resolve = done));
        this.localDrained = { promise, resolve };
      }
      return this.localDrained.promise;
    }
    return this.inner.whenDrained?.() ?? SENT;
  }

  pauseReading(): void {
    this.held = true;
    this.inner.pauseReading?.();
  }

  /** Hands on what waited meanwhile; the upstream is read again once nothing waits. */
  resumeReading(): void {
    this.held = false;
    if (this.backlog !== undefined) this.drainBacklog();
    else if (!this.closing) this.inner.resumeReading?.();
  }

  /**
   * Requests the proxy answers itself (pages of cut results) are answered as if the upstream
   * had, after this call returns; the rest is returned to be sent (null: nothing left to send).
   */
  private answerLocally(message: JSONRPCMessage): JSONRPCMessage | null {
    const items = Array.isArray(message) ? (message as unknown[]) : [message];
    const answers: JsonObject[] = [];
    const rest = items.filter((msg) => {
      const answer = this.fit!.answer(msg);
      if (answer !== null) answers.push(answer);
      return answer === null;
    });
    if (answers.length === 0) return message;
    queueMicrotask(() => {
      for (const answer of answers) this.receiveLocal(answer as JSONRPCMessage);
    });
    if (rest.length === 0) return null;
    return (Array.isArray(message) ? rest : rest[0]) as JSONRPCMessage;
  }

  private closed(): void {
    this.release();
    this.onclose?.();
  }

  /** The connection is over: every request, task, page and waiting message is let go. */
  private release(): void {
    if (this.released) return;
    this.released = true;
    // A shared table is its owner's: it answers what still waits, then forgets it.
    if (this.ownsRequests) this.requests.clear();
    this.tasks.clear();
    this.fit?.close();
    this.fitsRunning.clear();
    this.backlog = undefined;
    this.localBytes = 0;
    this.settleLocal();
  }

  private settleLocal(): void {
    const waiter = this.localDrained;
    this.localDrained = undefined;
    waiter?.resolve();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  private noteOutgoing(msg: unknown): void {
    if (isRequest(msg)) this.noteRequest(msg);
    else if (this.ownsRequests || this.fitsRunning.size > 0) {
      const cancelled = cancelledRequestOf(msg);
      if (cancelled === undefined) return;
      // Nobody waits for its result any more: a fit of it still running is given up (drawings
      // killed), so it holds no core and no other session's images for up to limits.fitTimeoutMs.
      this.fitsRunning.get(cancelled)?.abort();
      // A cancelled request may never be answered (spec: cancellation); forget it.
      if (this.ownsRequests) this.forget(cancelled);
    }
  }

  /**
   * Forgets a request whose answer will not come through here: cancelled, or answered by the
   * caller itself. A table shared with its owner is the owner's to take requests out of.
   */
  forget(id: RequestId): void {
    if (this.ownsRequests) this.requests.take(id);
  }

  /**
   * What the answer to a request needs: its method (the table's owner has it already), and for a
   * `tasks/result` of a task this connection saw created, the creating method's result shape; for
   * the fit layer, the tool it names. Requests whose results are not rewritten are not noted.
   */
  private noteRequest(msg: { id: RequestId; method: string; params?: unknown }): void {
    const method = msg.method;
    const fitting = this.fit?.active === true;
    let resultOf: string | undefined;
    let tool: string | undefined;
    if (method === TASK_RESULT) {
      const origin =
        isObj(msg.params) && typeof msg.params.taskId === "string" ? this.tasks.originOf(msg.params.taskId) : undefined;
      if (origin === undefined) return;
      resultOf = origin.method;
      if (fitting) tool = origin.tool;
    } else if (TRACKED.has(method) || this.fit?.tracks(method)) {
      if (fitting) tool = this.fit!.toolOf(method, msg.params);
    } else return;
    if (this.ownsRequests) {
      const entry = inFlight(msg.id, method);
      entry.resultOf = resultOf;
      entry.tool = tool;
      this.requests.add(entry);
      return;
    }
    if (resultOf === undefined && tool === undefined) return;
    const entry = this.requests.get(msg.id);
    if (entry === undefined) return;
    entry.resultOf = resultOf;
    entry.tool = tool;
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (this.backlog !== undefined) {
      this.backlog.push({ message, extra });
      if (this.unpaused !== undefined) this.countHeld(message);
      return;
    }
    this.handle(message, extra);
  }

  /**
   * A message held behind a fit the transport could not stop reading for: past
   * `limits.fitHeldBytes` the fit is given up — its result goes on as it came, then what waited —
   * so an upstream sending without end during a fit cannot grow the host's memory without end.
   */
  private countHeld(message: JSONRPCMessage): void {
    const max = this.fit?.session.runtime.limits.fitHeldBytes ?? DEFAULT_LIMITS.fitHeldBytes;
    try {
      this.heldBytes += wireTextOf(message)?.length ?? JSON.stringify(message).length;
    } catch {
      // Too deep for JSON.stringify to measure: counted as over.
      this.heldBytes = max + 1;
    }
    if (this.heldBytes <= max) return;
    const { message: result, extra } = this.unpaused!;
    this.endUnpaused();
    this.fitCount++;
    this.fitting = false;
    this.events = [];
    this.engineFailed(
      new Error(
        `more than ${max} bytes (limits.fitHeldBytes) arrived while a result's images were fitted, from a ` +
          "transport that cannot stop reading: the result went on as it came",
      ),
      "fit",
    );
    try {
      if (!this.closing) this.deliver(result, extra, NO_EVENTS);
    } catch (error) {
      this.readerFailed(error);
    }
    this.drainBacklog();
  }

  private endUnpaused(): void {
    this.unpaused = undefined;
    this.heldBytes = 0;
  }

  /**
   * An answer the proxy gave itself: handed on like one from the upstream, in order with them.
   * While the reader is held it waits (it would otherwise go past the hold).
   */
  private receiveLocal(message: JSONRPCMessage): void {
    if (this.released) return;
    if (this.backlog === undefined && !this.held) {
      this.deliver(message, undefined, NO_EVENTS);
      return;
    }
    const bytes = JSON.stringify(message).length;
    this.localBytes += bytes;
    this.backlog ??= [];
    this.backlog.push({ message, extra: undefined, local: bytes });
  }

  private handle(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    let out: unknown = message;
    let fitting = false;
    if (Array.isArray(message)) {
      const items = message as unknown[];
      const rewritten = items.map((item) => this.rewrite(item));
      fitting = rewritten.some((item) => item instanceof Promise);
      // Each item keeps what it did not change as its own text, as a message does.
      if (!fitting) for (const [i, item] of rewritten.entries()) rememberOrigin(item, items[i]);
      out = fitting ? Promise.all(rewritten) : rewritten.some((item, i) => item !== items[i]) ? rewritten : message;
    } else {
      out = this.rewrite(message);
      fitting = out instanceof Promise;
      // What it did not change is written as the text it came in (transports/wireOrigin.ts).
      if (!fitting) rememberOrigin(out, message);
    }
    if (!fitting) {
      const events = this.events;
      if (events.length > 0) this.events = [];
      this.deliver(out, extra, events);
      return;
    }
    // Images are being fitted: this message, and everything after it, waits; the upstream is
    // not read meanwhile, so what waits is bounded as if the reader had held it back.
    this.fitting = true;
    this.backlog ??= [];
    const fit = ++this.fitCount;
    if (this.inner.pauseReading !== undefined) this.inner.pauseReading();
    else this.unpaused = { message, extra };
    // The connection this fit belongs to: one closed and started again meanwhile has a fit layer
    // of its own, and nothing of this one reaches it.
    const stage = this.fit;
    (out as Promise<unknown>)
      .then(
        (value) =>
          Array.isArray(value) && Array.isArray(message) && value.every((item, i) => item === (message as unknown[])[i])
            ? message
            : value,
        (error: unknown) => {
          this.engineFailed(error, "fit");
          return message;
        },
      )
      .then((value) => {
        // Another connection's by now, or given up (what was held behind it grew too large).
        if (stage !== this.fit || fit !== this.fitCount) return;
        this.endUnpaused();
        if (!Array.isArray(message)) rememberOrigin(value, message);
        else if (Array.isArray(value))
          for (const [i, item] of value.entries()) rememberOrigin(item, (message as unknown[])[i]);
        // Nothing else ran meanwhile (it waits in the backlog): the events are this message's.
        this.fitting = false;
        const events = this.events;
        this.events = [];
        // Read before any hold: it goes on (a transport may deliver what it read before a pause).
        // A reader that throws is told through onerror, as when no image waits — never left
        // to reject here, holding everything after it.
        try {
          if (!this.closing) this.deliver(value, extra, events);
        } catch (error) {
          this.readerFailed(error);
        }
        this.drainBacklog();
      });
  }

  /**
   * Tells `onEngineError`. A callback that throws (a logger that is down) is told through
   * `onerror` like a throwing reader: it is called where a held result is let go, and must not
   * leave that result, and everything after it, held.
   */
  private engineFailed(error: unknown, method: string): void {
    try {
      this.options.onEngineError?.(error, method);
    } catch (thrown) {
      this.readerFailed(thrown);
    }
  }

  /**
   * The reader (`onmessage`) or `onNormalized` threw: told through `onerror`, and what follows
   * still goes on.
   */
  private readerFailed(error: unknown): void {
    this.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }

  /**
   * The message goes on first: logs and metrics are not on the path of the answer. Each event is
   * reported on its own: one `onNormalized` that throws loses no other (a batch has one per
   * answer), and its error is told through `onerror`, not thrown at the transport reading.
   */
  private deliver(out: unknown, extra: MessageExtraInfo | undefined, events: readonly NormalizationEvent[]): void {
    try {
      this.onmessage?.(out as JSONRPCMessage, extra);
    } finally {
      const report = this.options.onNormalized;
      if (report !== undefined)
        for (const event of events) {
          try {
            report(event);
          } catch (error) {
            this.readerFailed(error);
          }
        }
    }
  }

  /**
   * Hands on what waited, in order, until the next message that waits for its images or until
   * the reader holds us back again; once nothing waits, the upstream is read again.
   */
  private drainBacklog(): void {
    const backlog = this.backlog;
    // Re-entered from a message being handed on (its reader resumed us): the loop below goes on.
    if (backlog === undefined || this.draining) return;
    this.draining = true;
    try {
      while (backlog.length > 0 && !this.fitting && !this.held && this.backlog === backlog) {
        const next = backlog.shift()!;
        if (next === "close") {
          this.closed();
          return;
        }
        try {
          if (next.local !== undefined) {
            // The proxy's own answer is not the upstream's: not rewritten (its request, which the
            // table may hold for its owner, is not one the decorator noted).
            this.localBytes -= next.local;
            if (!this.closing) this.deliver(next.message, next.extra, NO_EVENTS);
          } else if (!this.closing) this.handle(next.message, next.extra);
        } catch (error) {
          this.readerFailed(error);
        }
      }
    } finally {
      this.draining = false;
    }
    if (this.localBytes === 0) this.settleLocal();
    if (this.backlog === backlog && backlog.length === 0 && !this.fitting) {
      this.backlog = undefined;
      if (!this.held && !this.closing) this.inner.resumeReading?.();
    }
  }

  private rewrite(msg: unknown): unknown {
    if (isResponse(msg)) {
      // An owned table's entry goes now; a shared one's when its owner sees the answer.
      const request = this.ownsRequests ? this.requests.take(msg.id) : this.requests.get(msg.id);
      if (request === undefined) return msg;
      const method = request.method;
      const as = request.resultOf ?? method;
      // A shared table holds every request; only those whose results are rewritten go on.
      if (request.resultOf === undefined && !TRACKED.has(method) && !this.fit?.tracks(method)) return msg;
      if (!("result" in msg)) return msg;
      if (method === "initialize")
        return this.fit === undefined ? msg : rebuild(msg, { result: this.fit.initializeResult(msg.result) });
      // A task-augmented request is answered with its task; its result comes with tasks/result
      // (the tool it named goes with the task: fit rules may match on it).
      const taskId = method === TASK_RESULT ? undefined : createdTaskId(msg.result);
      if (taskId !== undefined) this.tasks.remember(taskId, method, request.tool);
      const normalized = this.apply(msg, "result", method, msg.id, as);
      return this.fit === undefined
        ? normalized
        : this.applyFit(normalized as JsonObject, method, msg.id, as, request.tool);
    }
    if (isRequest(msg) && REQUEST_METHODS.has(msg.method)) {
      return this.apply(msg, "params", msg.method, msg.id, msg.method);
    }
    return msg;
  }

  /**
   * Runs the engine on `msg[key]` — a result of the shape of method `as`'s, or a request's
   * params — and gives the message itself when nothing changed or the engine failed.
   */
  private apply(msg: JsonObject, key: "result" | "params", method: string, id: string | number, as: string): unknown {
    // Timed only for someone to tell.
    const started = this.options.onNormalized === undefined ? 0 : this.now();
    let outcome: { value: unknown; changes: ChangeRecord[] };
    try {
      outcome =
        key === "result"
          ? normalizeResult(as, msg.result, this.policy)
          : normalizeRequestParams(as, msg.params, this.policy);
    } catch (error) {
      // The engine is total by design; if it ever throws, the message goes on untouched.
      this.engineFailed(error, method);
      return msg;
    }
    const sent = outcome.value === msg[key] ? msg : rebuild(msg, { [key]: outcome.value });
    if (outcome.changes.length > 0 && this.options.onNormalized !== undefined) {
      // Counted in the bytes that crossed the wire, not in the engine's own serialization.
      const changes = measuredOnWire(outcome.changes, msg, sent, key);
      this.events.push({ method, id, changes, ms: this.now() - started });
    }
    return sent;
  }

  /**
   * The fit layer on a normalized response: the response itself, a new one, or a promise of one.
   * `as` is the method whose result shape it has (a `tasks/result` has its creating method's).
   */
  private applyFit(msg: JsonObject, method: string, id: RequestId, as: string, tool: string | undefined): unknown {
    const started = this.now();
    const stage = this.fit!;
    let fitted: Fitted | Promise<Fitted> | null;
    const givenUp = new AbortController();
    try {
      fitted = stage.fit(as, tool, msg.result, givenUp.signal);
    } catch (error) {
      this.engineFailed(error, method);
      return msg;
    }
    if (fitted === null) return msg;
    // The number handle() gives the fit this message waits for, once it sees the promise: a fit
    // given up since (too much held behind it) reports nothing either.
    const fitNumber = this.fitCount + 1;
    const finish = (outcome: Fitted, late: boolean): unknown => {
      // A fit of a connection closed since reports nothing to the one that may follow it.
      const current = stage === this.fit && (!late || fitNumber === this.fitCount);
      if (outcome.changes.length > 0 && this.options.onNormalized !== undefined && current)
        this.addFitEvent(method, id, outcome.changes, this.now() - started);
      return outcome.value === msg.result ? msg : rebuild(msg, { result: outcome.value });
    };
    if (!(fitted instanceof Promise)) return finish(fitted, false);
    this.fitsRunning.set(id, givenUp);
    const done = (): void => {
      if (this.fitsRunning.get(id) === givenUp) this.fitsRunning.delete(id);
    };
    return fitted.then(
      (outcome) => {
        done();
        return finish(outcome, true);
      },
      (error: unknown) => {
        done();
        this.engineFailed(error, method);
        return msg;
      },
    );
  }

  /** The fit layer's records join the engine's event for the same message. */
  private addFitEvent(method: string, id: string | number, changes: readonly ChangeRecord[], ms: number): void {
    const last = this.events[this.events.length - 1];
    if (last === undefined || last.id !== id || last.method !== method) {
      this.events.push({ method, id, changes: [...changes], ms });
      return;
    }
    this.events[this.events.length - 1] = {
      method,
      id,
      changes: mergeChanges(last.changes, changes),
      ms: last.ms + ms,
    };
  }
}
