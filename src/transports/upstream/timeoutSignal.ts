/**
 * A signal that aborts with a `TimeoutError` after `ms`, like `AbortSignal.timeout(ms)` — but held
 * by its own timer until then. Node 20 lets a garbage collection drop a signal of
 * `AbortSignal.timeout` that nothing else holds, and one given to `AbortSignal.any` is held by
 * nothing else: after a collection it never fired, and a server that accepted the connection and
 * never answered held the wait for good. The timer does not keep the process alive.
 */
export function timeoutSignal(ms: number): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  timer.unref();
  return controller.signal;
}
