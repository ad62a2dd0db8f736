/**
 * Signalling processes a test started, by pid. A pid of 0 or -1 is not a process: kill(2) sends
 * it to the caller's whole process group, or to every process it may signal — the test runner,
 * npm and the CI script among them. `Number("")` is 0, and a pid file read the moment it was
 * created is still empty, so every pid a test signals goes through here.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { sleep } from "./polling.js";

/** Whether `pid` names one process (a whole number above 1), not a group or every process. */
export function isProcessId(pid: unknown): pid is number {
  return typeof pid === "number" && Number.isSafeInteger(pid) && pid > 1;
}

/** Sends `signal` to the one process `pid`; false when it is gone. Throws on what is not a pid. */
export function signalProcess(pid: number, signal: NodeJS.Signals | 0): boolean {
  if (!isProcessId(pid)) throw new Error(`not a process id: ${pid} (signalling it would reach other processes)`);
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Waits until `file` holds a pid (its writer may have created it and not yet written); fails after `timeoutMs`. */
export async function readPidFile(file: string, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
    const pid = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (isProcessId(pid)) return pid;
    if (Date.now() > deadline) throw new Error(`${file}: no pid in ${timeoutMs} ms (holds ${JSON.stringify(text)})`);
    await sleep(10);
  }
}

/** Each process's parent, from /proc (Linux), and whether it is a zombie (ended, not yet reaped). */
function processTable(): Map<number, { parent: number; zombie: boolean }> {
  const table = new Map<number, { parent: number; zombie: boolean }>();
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return table;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const [state, parent] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      table.set(Number(entry), { parent: Number(parent), zombie: state === "Z" });
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** Pids of the children of `pid`, zombies among them (a parent that does not reap them leaks them). */
export function childrenOf(pid: number): number[] {
  return [...processTable()].filter(([, { parent }]) => parent === pid).map(([child]) => child);
}

/** Pids of every process below `pid` that still runs: its children, theirs, and so on. */
export function descendantsOf(pid: number): number[] {
  const table = processTable();
  const found: number[] = [];
  const below = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, { parent, zombie }] of table)
      if (below.has(parent) && !below.has(child)) {
        below.add(child);
        if (!zombie) found.push(child);
        grew = true;
      }
  }
  return found;
}

/** Pids of the live processes (not this one) whose environment holds `name=value`. */
export function marked(name: string, value: string): number[] {
  const entry = `${name}=${value}`;
  return [...processTable()].flatMap(([pid, { zombie }]) => {
    if (zombie || pid === process.pid) return [];
    try {
      return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(entry) ? [pid] : [];
    } catch {
      // gone meanwhile, or another user's
      return [];
    }
  });
}
