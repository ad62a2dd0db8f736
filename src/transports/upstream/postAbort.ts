/**
 * The cancellation of one upstream POST. Everything that reads a POST's answer takes an
 * `AbortLike` — `aborted`, `reason` and abort listeners, which an `AbortSignal` has — and a
 * `PostAbort` is that without an `AbortSignal` behind it: Node 20 spends more on creating a
 * signal and its first listener than on the rest of a POST's own bookkeeping, and the proxy
 * posts once per host request. A real signal is made from one only where a real one is needed
 * (`asAbortSignal`: the global `fetch`, an injected one).
 */

/** What a request's readers look at of its cancellation; an `AbortSignal` is one. */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/**
 * An `AbortController` and its signal in one small object: `abort()` once, listeners called in
 * the order they were added, none added after the abort (as with a signal already aborted).
 * What the transports need of a signal's listeners, and no more: no `once`/`signal` options, no
 * events other than the abort.
 */
export class PostAbort implements AbortLike {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason ?? abortError();
    const listeners = this.listeners;
    if (listeners === undefined) return;
    for (const listener of [...listeners]) {
      // As an EventTarget does: one removed by an earlier listener is not called.
      if (!listeners.includes(listener)) continue;
      try {
        listener();
      } catch (error) {
        // As an EventTarget does: one listener's throw neither stops the others nor the abort.
        process.nextTick(() => {
          throw error;
        });
      }
    }
    this.listeners = undefined;
  }

  /** Adds `listener` once (as an EventTarget does, the same function twice is one listener). */
  addEventListener(_type: "abort", listener: () => void): void {
    if (this.aborted) return;
    if (this.listeners === undefined) this.listeners = [listener];
    else if (!this.listeners.includes(listener)) this.listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }
}

/** The reason of an abort that gave none: what `AbortController.abort()` gives. */
export function abortError(): Error {
  return new DOMException("This operation was aborted", "AbortError");
}

/** A real `AbortSignal` that aborts with `like`, with its reason (`like` itself when it is one). */
export function asAbortSignal(like: AbortLike): AbortSignal {
  if (like instanceof AbortSignal) return like;
  const controller = new AbortController();
  if (like.aborted) controller.abort(like.reason);
  else like.addEventListener("abort", () => controller.abort(like.reason), { once: true });
  return controller.signal;
}
