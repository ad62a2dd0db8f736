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
import type { JSONRPCMessage, MessageExtraInfo, ProxyTransport, Transport, TransportSendOptions } from "../transports/types.js";
import { rebuild, type JsonObject } from "../normalize/objects.js";
import { idKey, isNotification, isObj, isRequest, isRequestId, isResponse } from "../transports/jsonrpc.js";
import { createdTaskId, DEFAULT_MAX_TRACKED_TASKS, TaskOrigins } from "./taskOrigins.js";

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
  /** Task ids remembered (task id → creating method) for `tasks/result` (`limits.maxTrackedTasks`). */
  maxTrackedTasks?: number;
}

/** Requests whose method is not one we rewrite are not remembered at all. */
const TRACKED = RESULT_METHODS;
/** A task's deferred result: normalized as the result of the method that created the task. */
const TASK_RESULT = "tasks/result";

export class NormalizingTransport implements ProxyTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  private readonly policy: Policy;
  private readonly pending = new Map<string, string>();
  /** For pending `tasks/result` requests: the method that created their task. */
  private readonly taskResultAs = new Map<string, string>();
  private readonly tasks: TaskOrigins;
  /** Events of the message being received, reported once it has been handed on. */
  private events: NormalizationEvent[] = [];
  private readonly now: () => number;

  constructor(
    readonly inner: Transport & { onproblem?: ProxyTransport["onproblem"] },
    private readonly options: NormalizationOptions = {},
  ) {
    this.policy = options.policy instanceof Policy ? options.policy : new Policy(options.policy ?? {});
    this.now = options.now ?? (() => performance.now());
    this.tasks = new TaskOrigins(options.maxTrackedTasks ?? DEFAULT_MAX_TRACKED_TASKS);
    inner.onmessage = (message, extra) => this.receive(message, extra);
    inner.onclose = () => {
      this.pending.clear();
      this.taskResultAs.clear();
      this.tasks.clear();
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

  /** How many task ids are remembered (for tests and leak checks). */
  get trackedTaskCount(): number {
    return this.tasks.size;
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

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  private noteOutgoing(msg: unknown): void {
    if (isRequest(msg)) {
      if (TRACKED.has(msg.method)) this.pending.set(idKey(msg.id), msg.method);
      else if (msg.method === TASK_RESULT && isObj(msg.params) && typeof msg.params.taskId === "string") {
        const as = this.tasks.methodOf(msg.params.taskId);
        if (as === undefined) return;
        const key = idKey(msg.id);
        this.pending.set(key, TASK_RESULT);
        this.taskResultAs.set(key, as);
      }
    } else if (isNotification(msg) && msg.method === "notifications/cancelled" && isObj(msg.params) && isRequestId(msg.params.requestId)) {
      // A cancelled request may never be answered (spec: cancellation); forget it.
      const key = idKey(msg.params.requestId);
      this.pending.delete(key);
      this.taskResultAs.delete(key);
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
      let as = method;
      if (method === TASK_RESULT) {
        as = this.taskResultAs.get(key)!;
        this.taskResultAs.delete(key);
      }
      if (!("result" in msg)) return msg;
      // A task-augmented request is answered with its task; its result comes with tasks/result.
      const taskId = method === TASK_RESULT ? undefined : createdTaskId(msg.result);
      if (taskId !== undefined) this.tasks.remember(taskId, method);
      return this.apply(msg, "result", method, msg.id, () => normalizeResult(as, msg.result, this.policy));
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
