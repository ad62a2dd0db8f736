/**
 * Bounded polling, for tests that wait on something no event announces (another process's
 * progress file, a backlog, a log, work finishing off the event loop's current turn): they look
 * again and again and fail once the deadline passes.
 */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until `done` holds, or fails after `timeoutMs` naming the last value. */
export async function until<T>(
  read: () => T,
  done: (value: T) => boolean,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`${what}: not reached in ${timeoutMs} ms (last: ${JSON.stringify(value)})`);
    await sleep(100);
  }
}

/** Waits until `read()` has not changed for `quietMs` (and `ready` holds): nothing moves any more. */
export async function untilSteady(
  read: () => number,
  ready: (value: number) => boolean,
  quietMs: number,
  timeoutMs: number,
  what: string,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last = Number.NaN;
  let since = Date.now();
  for (;;) {
    const value = read();
    if (value !== last) {
      last = value;
      since = Date.now();
    } else if (ready(value) && Date.now() - since >= quietMs) {
      return value;
    }
    if (Date.now() > deadline) throw new Error(`${what} never settled (last: ${value})`);
    await sleep(100);
  }
}

/** Looks every 10 ms until `check()` holds; fails after `timeoutMs`. For in-process work that settles soon. */
export async function waitFor(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not reached in ${timeoutMs} ms`);
    await sleep(10);
  }
}
