/**
 * The normalizing Transport decorator (DESIGN.md §2): wraps the transport that talks to an
 * upstream server, remembers the method of each request id going out, and rewrites the
 * matching results coming back. Everything else passes through as the very same object.
 *
 * SDK-based hosts use it in-process: `client.connect(withNormalization(transport))`. The proxy
 * puts it between a host-side and an upstream-side transport (src/proxy/bridge.ts).
 */
import type { ChangeRecord } from "../normalize/change.js";
import { Policy, type PolicyOptions } from "../normalize/policy.js";
import { normalizeRequestParams, normalizeResult, REQUEST_METHODS, RESULT_METHODS } from "../normalize/result.js";
import type { FlowControl, JSONRPCMessage, MessageExtraInfo, ProxyTransport, Transport, TransportSendOptions } from "../transports/types.js";
import { rebuild, type JsonObject } from "../normalize/objects.js";
import { SENT } from "../transports/drainWaiter.js";
import { idKey, isNotification, isObj, isRequest, isRequestId, isResponse } from "../transports/jsonrpc.js";

/** What the decorator reports for each message it normalized. */
export interface NormalizationEvent {
  /** The method of the request the result answers (or of the server→client request). */
  readonly method: string;
  readonly id: string | number;
  readonly changes: readonly ChangeRecord[];
  /** Milliseconds spent in the engine for this message. */
  readonly ms: number;
}

export interface NormalizationOptions {
  /** A compiled policy, or options to compile one (DESIGN.md §1). Defaults: every rule on. */
  policy?: Policy | PolicyOptions;
  /** Called once per normalized message with its change records (for logs, metrics, reports). */
  onNormalized?: (event: NormalizationEvent) => void;
  /** Called when the engine itself fails (it should not): the message is forwarded unchanged. */
  onEngineError?: (error: unknown, method: string) => void;
  /** Clock for `ms`; injectable for tests. */
  now?: () => number;
}

/** Requests whose method is not one we rewrite are not remembered at all. */
const TRACKED = RESULT_METHODS;

export class NormalizingTransport implements ProxyTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  private readonly policy: Policy;
  private readonly pending = new Map<string, string>();
  /** Events of the message being received, reported once it has been handed on. */
  private events: NormalizationEvent[] = [];
  private readonly now: () => number;

  constructor(
    readonly inner: Transport & { onproblem?: ProxyTransport["onproblem"] } & FlowControl,
    private readonly options: NormalizationOptions = {},
  ) {
    this.policy = options.policy instanceof Policy ? options.policy : new Policy(options.policy ?? {});
    this.now = options.now ?? (() => performance.now());
    inner.onmessage = (message, extra) => this.receive(message, extra);
    inner.onclose = () => {
      this.pending.clear();
      this.onclose?.();
    };
    inner.onerror = (error) => this.onerror?.(error);
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

  /** How many request ids are remembered (for tests and leak checks). */
  get pendingCount(): number {
    return this.pending.size;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    for (const msg of Array.isArray(message) ? (message as unknown[]) : [message]) this.noteOutgoing(msg);
    return this.inner.send(message, options);
  }

  /** Flow control is the inner transport's (see FlowControl): nothing is held here. */
  get queuedBytes(): number {
    return this.inner.queuedBytes ?? 0;
  }

  whenDrained(): Promise<void> {
    return this.inner.whenDrained?.() ?? SENT;
  }

  pauseReading(): void {
    this.inner.pauseReading?.();
  }

  resumeReading(): void {
    this.inner.resumeReading?.();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  private noteOutgoing(msg: unknown): void {
    if (isRequest(msg)) {
      if (TRACKED.has(msg.method)) this.pending.set(idKey(msg.id), msg.method);
    } else if (isNotification(msg) && msg.method === "notifications/cancelled" && isObj(msg.params) && isRequestId(msg.params.requestId)) {
      // A cancelled request may never be answered (spec: cancellation); forget it.
      this.pending.delete(idKey(msg.params.requestId));
    }
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    let out: unknown = message;
    if (Array.isArray(message)) {
      const items = message as unknown[];
      const rewritten = items.map((item) => this.rewrite(item));
      out = rewritten.some((item, i) => item !== items[i]) ? rewritten : message;
    } else {
      out = this.rewrite(message);
    }
    // The message goes on first: logs and metrics are not on the path of the answer.
    const events = this.events;
    if (events.length > 0) this.events = [];
    try {
      this.onmessage?.(out as JSONRPCMessage, extra);
    } finally {
      for (const event of events) this.options.onNormalized?.(event);
    }
  }

  private rewrite(msg: unknown): unknown {
    if (isResponse(msg)) {
      const key = idKey(msg.id);
      const method = this.pending.get(key);
      if (method === undefined) return msg;
      this.pending.delete(key);
      if (!("result" in msg)) return msg;
      return this.apply(msg, "result", method, msg.id, () => normalizeResult(method, msg.result, this.policy));
    }
    if (isRequest(msg) && REQUEST_METHODS.has(msg.method)) {
      return this.apply(msg, "params", msg.method, msg.id, () => normalizeRequestParams(msg.method, msg.params, this.policy));
    }
    return msg;
  }

  /** Runs the engine on `msg[key]`; the message itself when nothing changed or the engine failed. */
  private apply(msg: JsonObject, key: string, method: string, id: string | number, run: () => { value: unknown; changes: ChangeRecord[] }): unknown {
    const started = this.now();
    let outcome: { value: unknown; changes: ChangeRecord[] };
    try {
      outcome = run();
    } catch (error) {
      // The engine is total by design; if it ever throws, the message goes on untouched.
      this.options.onEngineError?.(error, method);
      return msg;
    }
    const ms = this.now() - started;
    if (outcome.changes.length > 0 && this.options.onNormalized !== undefined) this.events.push({ method, id, changes: outcome.changes, ms });
    return outcome.value === msg[key] ? msg : rebuild(msg, { [key]: outcome.value });
  }
}

/** Wraps a transport that talks to an MCP server so its results arrive normalized. */
export function withNormalization<T extends Transport>(transport: T, options: NormalizationOptions = {}): NormalizingTransport {
  return new NormalizingTransport(transport, options);
}
