/**
 * A stdio upstream spawned before the proxy has loaded the rest of itself, so the two start at
 * the same time: a desktop host waits for the slower of them, not for both in a row.
 *
 * Until the upstream transport takes the child over, everything the child does is recorded — its
 * output, the end of its streams, its exit — so nothing is lost in between (a child whose stdio
 * nobody reads has its output thrown away by Node when it exits), and is then replayed, in order,
 * to the transport's own listeners. The transport takes the child only when it would spawn the
 * very same command line (command, arguments, directory, environment); otherwise the early child
 * is ended and a fresh one spawned, so behaviour never depends on whether the shortcut was taken.
 *
 * Light on purpose: loaded by the command line before anything heavy.
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import type { EventEmitter } from "node:events";
import { adoptGroup, killGroup } from "./processGroup.js";

/** Output kept while no transport has the child; past it the child's stdout is no longer read. */
const RECORD_LIMIT_BYTES = 1024 * 1024;

interface Recorded {
  readonly target: EventEmitter;
  readonly event: string;
  readonly args: unknown[];
}

/** Spawn options of a stdio upstream (the same as `StdioUpstreamTransport` uses). */
export function upstreamSpawnOptions(env: NodeJS.ProcessEnv, cwd: string | undefined): SpawnOptions {
  return {
    cwd,
    env,
    stdio: ["pipe", "pipe", "pipe"],
    shell: false,
    detached: process.platform !== "win32",
    windowsHide: true,
  };
}

export class EarlyChild {
  readonly child: ChildProcess;
  private readonly recorded: Recorded[] = [];
  private readonly recorders: Array<() => void> = [];
  private recordedBytes = 0;
  private pausedHere = false;
  private taken = false;
  /** Set when the spawn itself failed (ENOENT, EACCES): the transport then spawns on its own and reports it. */
  private failed = false;

  constructor(
    readonly command: string,
    readonly args: readonly string[],
    readonly options: SpawnOptions,
  ) {
    this.child = spawn(command, args, options);
    const { stdout, stderr } = this.child;
    this.record(this.child, "error", () => (this.failed = true));
    this.record(this.child, "exit");
    this.record(this.child, "close");
    if (stdout !== null) {
      this.record(stdout, "data", (chunk) => {
        this.recordedBytes += (chunk as Buffer).length;
        if (this.recordedBytes > RECORD_LIMIT_BYTES && !this.pausedHere) {
          this.pausedHere = true;
          stdout.pause();
        }
      });
      this.record(stdout, "end");
    }
    if (stderr !== null) {
      this.record(stderr, "data");
      this.record(stderr, "end");
    }
    this.child.stdin?.on("error", () => {});
    adoptGroup(this.child);
  }

  /** Whether the spawn succeeded (a pid) and the child has not been handed over yet. */
  get usable(): boolean {
    return !this.taken && !this.failed && this.child.pid !== undefined;
  }

  /** True when a transport spawning `command args` with `options` would start the very same process. */
  matches(command: string, args: readonly string[], options: SpawnOptions): boolean {
    return (
      this.usable &&
      command === this.command &&
      args.length === this.args.length &&
      args.every((arg, i) => arg === this.args[i]) &&
      options.cwd === this.options.cwd &&
      sameEnv(options.env, this.options.env) &&
      options.detached === this.options.detached
    );
  }

  /**
   * Hands the child over: recording stops, and the returned `replay` (to be called once the
   * caller's own listeners are on) re-emits what was recorded, in order. Synchronous from here
   * to the caller's listeners: no event can fall between.
   */
  take(): { child: ChildProcess; replay: () => void } {
    this.taken = true;
    for (const stop of this.recorders.splice(0)) stop();
    const recorded = this.recorded.splice(0);
    return {
      child: this.child,
      replay: () => {
        for (const { target, event, args } of recorded) target.emit(event, ...args);
        if (this.pausedHere) this.child.stdout?.resume();
      },
    };
  }

  /** Ends the child's group (it will not be used). */
  discard(): void {
    this.taken = true;
    for (const stop of this.recorders.splice(0)) stop();
    if (this.child.pid !== undefined) killGroup(this.child.pid);
  }

  private record(target: EventEmitter, event: string, also?: (...args: unknown[]) => void): void {
    const listener = (...args: unknown[]): void => {
      this.recorded.push({ target, event, args });
      also?.(...args);
    };
    target.on(event, listener);
    this.recorders.push(() => target.off(event, listener));
  }
}

function sameEnv(a: SpawnOptions["env"], b: SpawnOptions["env"]): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => a[key] === b[key]);
}

let early: EarlyChild | undefined;

/** Starts `command args` now, in this process's environment and directory, for a transport to take later. */
export function spawnEarly(command: string, args: readonly string[]): EarlyChild {
  early?.discard();
  early = new EarlyChild(command, args, upstreamSpawnOptions({ ...process.env }, undefined));
  return early;
}

/**
 * The early child if it is the process `command args options` describes (and removes it from
 * here: it is taken once); when it is not, it is ended. Undefined when there is none to use.
 */
export function claimEarly(command: string, args: readonly string[], options: SpawnOptions): EarlyChild | undefined {
  const candidate = early;
  if (candidate === undefined) return undefined;
  early = undefined;
  if (candidate.matches(command, args, options)) return candidate;
  candidate.discard();
  return undefined;
}
