/**
 * Test helper: records what an upstream transport delivers and lets a test wait for a message,
 * problem, error or close by event (never by sleeping). Every wait has a deadline so a broken
 * transport fails the test instead of hanging it.
 */
import type {
  FramingProblem,
  JSONRPCMessage,
  MessageExtraInfo,
  ProxyTransport,
} from "../../../src/transports/types.js";

export interface Collected {
  readonly messages: JSONRPCMessage[];
  /** What came with a message received (its `relatedRequestId`…). */
  extraOf(message: JSONRPCMessage): MessageExtraInfo | undefined;
  readonly problems: FramingProblem[];
  readonly errors: Error[];
  readonly closed: Promise<void>;
  isClosed(): boolean;
  /** Resolves with the first message (already received or future) matching `match`. */
  next(match: (message: JSONRPCMessage) => boolean, timeoutMs?: number): Promise<JSONRPCMessage>;
  /** Resolves with the response to request `id`. */
  response(
    id: string | number,
    timeoutMs?: number,
  ): Promise<JSONRPCMessage & { result?: unknown; error?: { code: number; message: string; data?: unknown } }>;
  nextProblem(timeoutMs?: number): Promise<FramingProblem>;
  nextError(timeoutMs?: number): Promise<Error>;
}

export function collect(transport: ProxyTransport): Collected {
  const messages: JSONRPCMessage[] = [];
  const problems: FramingProblem[] = [];
  const errors: Error[] = [];
  const waiters = new Set<() => void>();
  const notify = (): void => {
    for (const waiter of [...waiters]) waiter();
  };
  let closedFlag = false;
  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  const extras = new WeakMap<object, MessageExtraInfo>();
  transport.onmessage = (message, extra) => {
    messages.push(message);
    if (extra !== undefined) extras.set(message, extra);
    notify();
  };
  transport.onproblem = (problem) => {
    problems.push(problem);
    notify();
  };
  transport.onerror = (error) => {
    errors.push(error);
    notify();
  };
  transport.onclose = () => {
    closedFlag = true;
    resolveClosed();
    notify();
  };

  function waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = find();
        if (found === undefined) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}; got ${messages.length} messages, errors: ${errors.map((e) => e.message).join("; ")}`,
          ),
        );
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  }

  let problemsSeen = 0;
  let errorsSeen = 0;
  return {
    messages,
    extraOf: (message) => extras.get(message),
    problems,
    errors,
    closed,
    isClosed: () => closedFlag,
    next: (match, timeoutMs) => waitFor(() => messages.find(match), "a matching message", timeoutMs),
    response: (id, timeoutMs) =>
      waitFor(
        () => messages.find((m) => "id" in m && m.id === id && !("method" in m)),
        `the response to id ${JSON.stringify(id)}`,
        timeoutMs,
      ) as Promise<never>,
    nextProblem: (timeoutMs) =>
      waitFor(() => problems[problemsSeen], "a framing problem", timeoutMs).then((p) => {
        problemsSeen++;
        return p;
      }),
    nextError: (timeoutMs) =>
      waitFor(() => errors[errorsSeen], "an error", timeoutMs).then((e) => {
        errorsSeen++;
        return e;
      }),
  };
}

/** True while a process with this pid exists (signal 0 only checks). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export const INITIALIZE = (id: number | string = 1, protocolVersion = "2025-06-18"): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "upstream-test", version: "1.0.0" } },
});

export const INITIALIZED: JSONRPCMessage = { jsonrpc: "2.0", method: "notifications/initialized" };
