/**
 * A POST's abort without an AbortSignal behind it: it behaves as an AbortController and its signal
 * do for what the upstream transports use (aborted, reason, listeners), and becomes a real signal
 * where one is needed.
 */
import { describe, expect, it } from "vitest";
import { asAbortSignal, PostAbort } from "../../../src/transports/upstream/postAbort.js";

describe("PostAbort", () => {
  it("aborts once: listeners in the order added, a removed one not called, the first reason kept", () => {
    const abort = new PostAbort();
    const calls: string[] = [];
    const removed = (): void => {
      calls.push("removed");
    };
    abort.addEventListener("abort", () => calls.push("first"));
    abort.addEventListener("abort", removed);
    abort.addEventListener("abort", () => calls.push(`second, aborted ${abort.aborted}`));
    abort.removeEventListener("abort", removed);
    expect(abort.aborted).toBe(false);
    const reason = new Error("cancelled");
    abort.abort(reason);
    abort.abort(new Error("again"));
    expect(calls).toEqual(["first", "second, aborted true"]);
    expect(abort.reason).toBe(reason);
    // As on an aborted signal: a listener added afterwards is never called.
    abort.addEventListener("abort", () => calls.push("late"));
    abort.abort();
    expect(calls).toHaveLength(2);
  });

  it("dispatches as an AbortSignal does: the same listener added twice is one, one removed during the abort is not called", () => {
    const orders = [new AbortController(), new PostAbort()].map((controller) => {
      const target = controller instanceof AbortController ? controller.signal : controller;
      const calls: string[] = [];
      const b = (): void => {
        calls.push("b");
      };
      target.addEventListener("abort", () => {
        calls.push("a");
        target.removeEventListener("abort", b);
      });
      target.addEventListener("abort", b);
      const c = (): void => {
        calls.push("c");
      };
      target.addEventListener("abort", c);
      target.addEventListener("abort", c);
      controller.abort();
      return calls;
    });
    expect(orders[1]).toEqual(["a", "c"]);
    expect(orders[1]).toEqual(orders[0]);
  });

  it("without a reason, aborts with what AbortController.abort() gives", () => {
    const abort = new PostAbort();
    abort.abort();
    const controller = new AbortController();
    controller.abort();
    expect(abort.reason).toBeInstanceOf(DOMException);
    expect((abort.reason as DOMException).name).toBe((controller.signal.reason as DOMException).name);
    expect((abort.reason as DOMException).message).toBe((controller.signal.reason as DOMException).message);
  });

  it("becomes a real AbortSignal that aborts with it, with its reason; a signal stays itself", () => {
    const abort = new PostAbort();
    const signal = asAbortSignal(abort);
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal.aborted).toBe(false);
    const reason = new Error("closing");
    abort.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);

    const already = new PostAbort();
    already.abort(reason);
    expect(asAbortSignal(already).reason).toBe(reason);

    const real = new AbortController().signal;
    expect(asAbortSignal(real)).toBe(real);
  });
});
