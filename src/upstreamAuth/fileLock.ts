/**
 * A lock between processes that share a folder (proxies of several hosts sharing a token file):
 * `FILE.lock`, created exclusively and holding a token of its holder's own.
 *
 * - While held, the lock's time is renewed every quarter of `staleMs`: a holder that works long
 *   (slow authorization servers) keeps it; only one that died, or froze for `staleMs`, lets it
 *   go stale.
 * - A stale lock is taken over under a second, short-lived lock (`FILE.lock.takeover`), which
 *   checks it again before removing it: two waiters never both remove a lock and both enter.
 * - A holder removes the lock only while it still holds its token (never one taken over from it).
 * - A lock that cannot be had in `waitMs`, or made at all (no folder yet, a read-only one), is
 *   done without: the work then runs as it would alone.
 */
import { randomBytes } from "node:crypto";
import { open, readFile, rm, stat, utimes } from "node:fs/promises";

/** How often a process waiting for another's lock looks again. */
const POLL_MS = 50;

export interface FileLockTimes {
  /** A lock whose time was not renewed for this long was left by a process that died. */
  readonly staleMs: number;
  /** How long to wait for a live holder before working without the lock. */
  readonly waitMs: number;
}

export async function withFileLock<T>(file: string, times: FileLockTimes, work: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  const token = randomBytes(12).toString("hex");
  const deadline = Date.now() + times.waitMs;
  let held = false;
  for (;;) {
    const made = await create(lock, token);
    if (made === "made") held = true;
    if (made !== "exists") break;
    if (await isStale(lock, times.staleMs)) await takeOver(lock, times.staleMs);
    else if (Date.now() >= deadline) break;
    else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  const renewal = held
    ? setInterval(() => {
        const now = new Date();
        utimes(lock, now, now).catch(() => {});
      }, times.staleMs / 4)
    : undefined;
  renewal?.unref();
  try {
    return await work();
  } finally {
    clearInterval(renewal);
    if (held && (await readFile(lock, "utf8").catch(() => "")) === token) await rm(lock, { force: true });
  }
}

async function create(path: string, token: string): Promise<"made" | "exists" | "failed"> {
  try {
    const handle = await open(path, "wx", 0o600);
    try {
      await handle.writeFile(token);
    } finally {
      await handle.close();
    }
    return "made";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EEXIST" ? "exists" : "failed";
  }
}

async function isStale(path: string, staleMs: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(path)).mtimeMs > staleMs;
  } catch {
    return false; // gone: nothing to take over
  }
}

/** Removes a stale lock — checked again while holding the takeover lock, so only one waiter does. */
async function takeOver(lock: string, staleMs: number): Promise<void> {
  const guard = `${lock}.takeover`;
  const made = await create(guard, "");
  if (made !== "made") {
    // Another waiter is taking it over (or died doing so: its guard is then removed in turn).
    if (made === "exists" && (await isStale(guard, staleMs))) await rm(guard, { force: true });
    return;
  }
  try {
    if (await isStale(lock, staleMs)) await rm(lock, { force: true });
  } finally {
    await rm(guard, { force: true });
  }
}
