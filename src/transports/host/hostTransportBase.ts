/**
 * What every host-side transport shares: the SDK `Transport` callbacks, a backlog for messages
 * that arrive before `start()` (an HTTP body is read before the proxy has wired the session to
 * an upstream, so nothing may be lost in between — the SDK's InMemoryTransport queues the same
 * way; the host is not read further until then, so the backlog stays one frame or body), and a
 * close that fires `onclose` exactly once.
 *
 * `onclose` belongs to whoever connects the transport (the proxy overwrites it), so the code
 * that owns the session (an HTTP endpoint freeing its slot) listens through `onClosed` instead.
 *
 * Flow control (`FlowControl` in ../types.ts): subclasses say what they hold for the host
 * (`queuedBytes`, `whenDrained`) and how they stop reading it (`stopReading`/`startReading`);
 * HTTP endpoints, which have no one socket to pause, read each POST body in `inReadingTurn`.
 */
import { SENT } from "../drainWaiter.js";
import { idAsWritten } from "../idAsWritten.js";
import { type RequestId, requestIdOf } from "../jsonrpc.js";
import { ReadGate } from "../readGate.js";
import type { JSONRPCMessage, MessageExtraInfo, ProxyTransport, TransportSendOptions } from "../types.js";

function noop(): void {}

export abstract class HostTransportBase implements ProxyTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  onproblem?: ProxyTransport["onproblem"];
  /** The host takes each message whole: an upstream's batch of answers reaches it as one array. */
  readonly keepsBatches: boolean = true;

  private started = false;
  private closed = false;
  private reaped: string | undefined;
  /** Why the session could not start, once `refuseStart` ends it; for the transport's goodbye. */
  protected refusal: string | undefined;
  private backlog: Array<[JSONRPCMessage, MessageExtraInfo | undefined]> = [];
  private readonly closeListeners: Array<() => void> = [];
  private readonly startListeners: Array<() => void> = [];
  private readonly readGate = new ReadGate();
  /** Why reading is paused: the host's own unread answers (true), or the upstream (false). */
  private pausedForHost = false;
  /** Settles when the last body read queued by `inReadingTurn` is over. */
  private readTurn: Promise<void> = SENT;
  /**
   * Reading stopped because a message came before `start()`: the session still waits for its
   * upstream (starting, or a restart back-off), and what the host sends meanwhile waits in its
   * socket instead of in the backlog — which holds one frame's or one body's messages at most.
   */
  private heldBeforeStart = false;

  abstract send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void>;

  /** Releases the transport's IO (sockets, streams); called once, before `onclose` fires. */
  protected abstract release(): void;

  get isStarted(): boolean {
    return this.started;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Why the session could not start, once `refuseStart` has ended it. */
  get startRefused(): string | undefined {
    return this.refusal;
  }

  /** Why the proxy ended the session on its own (idle, a dead connection); undefined otherwise. */
  get endReason(): string | undefined {
    return this.reaped;
  }

  /** Bytes sent toward the host that it has not taken yet; 0 for transports that cannot tell. */
  get queuedBytes(): number {
    return 0;
  }

  /** Settles once the host has taken some of what was queued (or the transport ended). */
  whenDrained(): Promise<void> {
    return SENT;
  }

  /**
   * Stops taking messages from the host until `resumeReading()`: the upstream is behind, or
   * (`hostBehind`) the host has not taken what it was sent.
   */
  pauseReading(hostBehind = false): void {
    this.pausedForHost = hostBehind;
    if (!this.readGate.isOpen || this.closed) return;
    this.readGate.close();
    this.stopReading();
  }

  resumeReading(): void {
    this.pausedForHost = false;
    if (this.readGate.isOpen) return;
    this.readGate.open();
    if (!this.closed) this.startReading();
  }

  /**
   * True while the host is not read for a reason of the other side's (its pongs cannot be seen
   * and nothing may be queued for it): a liveness check must not judge it then.
   */
  get isHeldForUpstream(): boolean {
    return !this.readGate.isOpen && !this.pausedForHost;
  }

  /** Settles at once, or when reading resumes (or the transport ends) if it is paused. */
  whenReading(): Promise<void> {
    return this.readGate.passage() ?? SENT;
  }

  /**
   * Runs `work` — reading one HTTP body and delivering its messages — once every earlier one
   * of this session has finished and reading is not paused: one body at a time, none while the
   * upstream is behind, so a host's concurrent POSTs wait unread in their sockets instead of in
   * this process (and are delivered in the order they came).
   */
  inReadingTurn<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.readTurn.then(() => this.whenReading()).then(work);
    this.readTurn = turn.then(noop, noop);
    return turn;
  }

  /** Stops reading the host's socket or stream; transports with one override it. */
  protected stopReading(): void {}

  protected startReading(): void {}

  async start(): Promise<void> {
    if (this.started) throw new Error(`${this.constructor.name} already started`);
    this.started = true;
    if (this.heldBeforeStart) {
      this.heldBeforeStart = false;
      this.resumeReading();
    }
    for (let i = 0; i < this.backlog.length && !this.closed; i++) {
      const [message, extra] = this.backlog[i]!;
      this.dispatch(message, extra);
    }
    this.backlog = [];
    for (const listener of this.startListeners.splice(0)) listener();
  }

  async close(): Promise<void> {
    this.finish();
  }

  async refuseStart(code: number, message: string): Promise<void> {
    if (this.closed) return;
    const waiting = this.backlog.flatMap(([item]) => (Array.isArray(item) ? (item as unknown[]) : [item]));
    this.backlog = [];
    for (const item of waiting) {
      if (requestIdOf(item) === undefined) continue;
      const id = idAsWritten(item as { id: RequestId });
      await this.send({ jsonrpc: "2.0", id, error: { code, message } } as JSONRPCMessage).catch(noop);
    }
    this.refusal = message;
    this.finish();
  }

  /** Ends the session from the proxy's side (idle, a dead connection), saying why. */
  reap(why: string): void {
    this.finish(why);
  }

  /** True while messages the host sent before `start()` wait to be dispatched. */
  protected get hasBacklog(): boolean {
    return this.backlog.length > 0;
  }

  /** Registers an owner-side listener for the end of the transport (never replaced by users). */
  onClosed(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  /** Resolves once `start()` has run and every message received before it was dispatched. */
  whenStarted(): Promise<void> {
    if (this.started || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.startListeners.push(resolve);
      this.closeListeners.push(resolve);
    });
  }

  /** Hands a message to `onmessage`, or keeps it until `start()`. */
  protected deliver(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (this.closed) return;
    if (this.started) {
      this.dispatch(message, extra);
      return;
    }
    this.backlog.push([message, extra]);
    if (!this.heldBeforeStart && this.readGate.isOpen) {
      this.heldBeforeStart = true;
      this.pauseReading();
    }
  }

  protected reportError(error: Error): void {
    try {
      this.onerror?.(error);
    } catch {
      // An error handler that throws must not take the transport down with it.
    }
  }

  /**
   * Ends the transport: releases IO, then fires owner listeners and `onclose`, once. `reaped`
   * says why when the proxy ends a session the host did not (kept as `endReason`, for the log).
   */
  protected finish(reaped?: string): void {
    if (this.closed) return;
    this.closed = true;
    this.reaped = reaped;
    this.backlog = [];
    // Reading again if it was stopped: the host's answer to a close (a WebSocket close frame) must be read.
    if (!this.readGate.isOpen) {
      this.readGate.open();
      this.startReading();
    }
    try {
      this.release();
    } catch (error) {
      this.reportError(error instanceof Error ? error : new Error(String(error)));
    }
    for (const listener of this.closeListeners.splice(0)) listener();
    this.onclose?.();
  }

  private dispatch(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    try {
      this.onmessage?.(message, extra);
    } catch (error) {
      this.reportError(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
