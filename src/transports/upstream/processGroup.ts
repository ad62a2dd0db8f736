/**
 * Ending a stdio upstream's whole process group (POSIX): the child is spawned as a group
 * leader, so what it started (`npx` → node, a helper `sleep 300`) is in its group unless it
 * called `setsid`. The group is signalled by its id (the leader's pid), which stays valid after
 * the leader has exited while any member lives (the kernel does not reuse a pid that is still a
 * group id), so a leader that exits on its own does not leave its helpers running.
 *
 * Groups still being ended are SIGKILLed if this process exits first (no orphans after a crash
 * or a fast exit).
 */
import type { ChildProcess } from "node:child_process";

/** How often a group being ended is checked for members left, in ms. */
const GROUP_POLL_MS = 50;

const liveGroups = new Set<number>();
let exitHookInstalled = false;

function trackGroup(pgid: number): void {
  liveGroups.add(pgid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const group of liveGroups) signalGroup(group, "SIGKILL");
  });
}

/** Sends `signal` to every process of the group; false when none is left. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True while any process of the group lives. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * SIGKILLs the group now and stops tracking it: nothing of it is left to end at exit, and its
 * id, once free, may be another process's group by then.
 */
export function killGroup(pgid: number): void {
  signalGroup(pgid, "SIGKILL");
  liveGroups.delete(pgid);
}

/** Whether the group is still SIGKILLed if this process exits (it is being ended, or still runs). */
export function endedAtExit(pgid: number): boolean {
  return liveGroups.has(pgid);
}

/** Registers a freshly spawned group leader: its group is SIGKILLed if this process exits first. */
export function adoptGroup(child: ChildProcess): void {
  if (child.pid !== undefined && process.platform !== "win32") trackGroup(child.pid);
}

/**
 * SIGTERM to the group, then SIGKILL to whatever is left after `graceMs`. Resolves once the
 * group is empty (or, where groups do not exist, once the child was signalled).
 */
export function endGroup(child: ChildProcess, graceMs: number): Promise<void> {
  const pgid = child.pid;
  if (pgid === undefined) return Promise.resolve();
  if (process.platform === "win32") {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    return Promise.resolve();
  }
  trackGroup(pgid);
  if (!signalGroup(pgid, "SIGTERM")) {
    liveGroups.delete(pgid);
    return Promise.resolve();
  }
  const deadline = Date.now() + graceMs;
  return new Promise((resolve) => {
    const check = (): void => {
      if (!groupAlive(pgid)) {
        liveGroups.delete(pgid);
        resolve();
        return;
      }
      if (Date.now() >= deadline) {
        killGroup(pgid);
        resolve();
        return;
      }
      // Not unref'd: a shutdown awaits this, and the wait is bounded by `graceMs`.
      setTimeout(check, GROUP_POLL_MS);
    };
    setTimeout(check, Math.min(GROUP_POLL_MS, graceMs));
  });
}
