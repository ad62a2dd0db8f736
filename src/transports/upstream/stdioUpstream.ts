/**
 * Client side of the MCP stdio transport (spec "Transports › stdio"): the upstream is a child
 * process; JSON-RPC goes to its stdin and comes from its stdout, one message per line.
 *
 * - Spawned without a shell (no shell injection through config), in its own process
 *   group on POSIX, and the whole group is ended — on `close()`, when the leader exits on its
 *   own, and when this process exits — so nothing it spawned (`npx` → node, a helper) is left.
 * - Stdout ending while the process runs on means the upstream is over: `onerror`, `onclose`
 *   (pending requests get their error at once) and the group is ended.
 * - stdout is framed linearly (`JsonLineReader`); a non-JSON line (a banner, a log line) is an
 *   `onproblem` report and the session goes on.
 * - stderr goes to the logger line by line, never to our stdout (stdout belongs to the host
 *   side in `stdio` mode). Its `env` values are taken out of it, and out of its error answers.
 * - An exit we did not ask for is an `UPSTREAM_EXITED` error naming code/signal and (unless
 *   `stderrInErrors` is off) the last stderr line, then `onclose`; `exitInfo` keeps it for the
 *   proxy to tell hosts why.
 * - `env` is merged over `baseEnv` (default `process.env`); only its keys are ever logged
 *   (values are secrets).
 */
import { spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { statSync } from "node:fs";
import { StderrTail } from "./stderrTail.js";
import { redactedExcerpt, type SecretRedactor, secretRedactor } from "../../errors/redact.js";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { silentLogger, type Logger } from "../../observe/logger.js";
import { RepeatedProblem } from "../../observe/repeatedProblem.js";
import { LineSplitter, type OversizedLine } from "../../wire/lineSplitter.js";
import { JsonLineReader, serializeMessage } from "../lineFraming.js";
import type { JSONRPCMessage, ProxySendOptions, FramingProblem, UpstreamTransport } from "../types.js";
import { adoptGroup, endGroup } from "./processGroup.js";
import { claimEarly, upstreamSpawnOptions } from "./earlyChild.js";
import { deliverFramed } from "./upstreamMessages.js";
import { DrainWaiter, SENT } from "../drainWaiter.js";
import { ReadYield } from "../readYield.js";

/** Default time between SIGTERM and SIGKILL when closing (`killGraceMs`). */
export const DEFAULT_KILL_GRACE_MS = 2000;
/** Longest stderr line logged as is (`maxStderrLineBytes`); longer lines are cut. */
export const DEFAULT_MAX_STDERR_LINE_BYTES = 8192;
/** After the child exits, how long its pipes may stay open (a grandchild holding them). */
const PIPE_GRACE_AFTER_EXIT_MS = 1000;
/**
 * After stdout ends, how long the child has to exit before it counts as an upstream that closed
 * its stdout but kept running (a process that is exiting closes stdout a moment before its exit
 * is seen).
 */
const EXIT_AFTER_STDOUT_EOF_MS = 500;

export interface StdioUpstreamOptions {
  command: string;
  args?: readonly string[];
  /** Merged over `baseEnv`. Values are never logged. */
  env?: Readonly<Record<string, string>>;
  /** The environment the child starts from, before `env`. Default `process.env`. */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  logger?: Logger;
  /** Largest message read from stdout, in bytes (`limits.maxMessageBytes`). */
  maxMessageBytes: number;
  /** Time from SIGTERM to SIGKILL in `close()`, in ms. Default 2000. */
  killGraceMs?: number;
  /**
   * Lines of stderr logged per 10 s (`limits.stderrLinesLogged`); past them they are counted and
   * the count is logged with the next line logged (a server printing without end cannot fill the
   * log). Unbounded when absent.
   */
  stderrLinesLogged?: number | undefined;
  /** Payload literals this long are read as raw strings (off by default; the proxy sets it). */
  rawStringBytes?: number | undefined;
  /** A message of more nodes is not parsed (`limits.maxUpstreamMessageNodes`); unbounded when absent. */
  maxMessageNodes?: number | undefined;
  /**
   * A stdout line over `maxMessageBytes` still running this many bytes past it without end ends
   * the child (`limits.maxSkippedMessageBytes`); dropped to its end when absent.
   */
  maxSkippedMessageBytes?: number | undefined;
  maxStderrLineBytes?: number;
  /**
   * Whether the errors this transport raises (and `describeEnd()`) quote the child's last stderr
   * line. Servers print tokens and connection strings there: a proxy whose hosts are not its
   * operator turns it off, and the line goes only to the logger. Default true.
   */
  stderrInErrors?: boolean;
  /** Injection point for tests; default `child_process.spawn`. */
  spawn?: (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
}

/** How the child ended. `expected` is true when `close()` asked it to. */
export interface UpstreamExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The stderr line that tells why it ended (its last, or the error line a crash printed above its stack). */
  readonly lastStderrLine?: string;
  /** False when `lastStderrLine` is a crash's error line and not the last line written. */
  readonly stderrLineIsLast?: boolean;
  readonly expected: boolean;
}

export class StdioUpstreamTransport implements UpstreamTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;
  onproblem?: ((problem: FramingProblem) => void) | undefined;

  private readonly options: StdioUpstreamOptions;
  private readonly logger: Logger;
  private readonly reader: JsonLineReader;
  private child: ChildProcess | undefined;
  private closing = false;
  private closed = false;
  private closeReported = false;
  private readonly stderrTail = new StderrTail();
  /** The last stderr line, and how its lines are logged: at once up to the limit in 10 s, then counted. */
  private stderrLast = "";
  private readonly stderrLogged: RepeatedProblem;
  private stderrSettling: NodeJS.Timeout | undefined;
  private readonly envRedactor: SecretRedactor;
  /** Its `env` values, taken out of its error answers (a server may quote them); undefined when it has none. */
  private readonly envSecrets: (() => Iterable<string | undefined>) | undefined;
  private exit: UpstreamExit | undefined;
  /**
   * Why the proxy ended the child while it ran, when it did for what the child did: stdout ended
   * while it kept running, or a line without end.
   */
  private endedFor: string | undefined;
  private closedPromise: Promise<void> | undefined;
  private stdinDrain: DrainWaiter | undefined;
  /** Reads stdout in turns with the rest of the process, and holds it while the host is behind. */
  private turns: ReadYield | undefined;

  constructor(options: StdioUpstreamOptions) {
    this.options = options;
    this.logger = (options.logger ?? silentLogger).child({ upstream: options.command });
    this.envRedactor = secretRedactor(Object.values(options.env ?? {}));
    this.envSecrets = this.envRedactor.any ? () => this.secretsSent() : undefined;
    this.stderrLogged = new RepeatedProblem(
      (count) =>
        this.logger.info("upstream stderr", { line: this.stderrLast, ...(count > 1 ? { notLogged: count - 1 } : {}) }),
      undefined,
      options.stderrLinesLogged ?? Number.POSITIVE_INFINITY,
    );
    this.reader = new JsonLineReader({
      maxMessageBytes: options.maxMessageBytes,
      rawStringBytes: options.rawStringBytes,
      cutPastBytes: options.maxSkippedMessageBytes,
      ...(options.maxMessageNodes === undefined ? {} : { maxNodes: options.maxMessageNodes }),
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How the child exited; undefined while it runs. */
  get exitInfo(): UpstreamExit | undefined {
    return this.exit;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error("StdioUpstreamTransport already started");
    const { command, args = [], env, cwd } = this.options;
    const spawnOptions = upstreamSpawnOptions({ ...(this.options.baseEnv ?? process.env), ...env }, cwd);
    // A child the command line started before the proxy had loaded (the same command line) is taken over.
    const early = this.options.spawn === undefined ? claimEarly(command, args, spawnOptions) : undefined;
    if (early !== undefined) {
      const { child, replay } = early.take();
      this.child = child;
      this.startWired(child, args, env, cwd);
      replay();
      return;
    }
    const spawn = this.options.spawn ?? nodeSpawn;
    const where = cwd === undefined ? "" : ` (cwd "${cwd}")`;
    // A cwd that is missing reads as a command not found (spawn's ENOENT), one that is a file
    // throws at once: each told as what it is.
    const badCwd = cwd === undefined ? undefined : cwdProblem(cwd);
    if (badCwd !== undefined) {
      this.closed = true;
      throw new NormalizerError("UPSTREAM_UNREACHABLE", `could not start upstream command "${command}": ${badCwd}`, {
        command,
        cwd,
      });
    }
    const notStarted = (error: unknown): NormalizerError => {
      this.closed = true;
      return new NormalizerError(
        "UPSTREAM_UNREACHABLE",
        `could not start upstream command "${command}"${where}: ${(error as Error).message}`,
        { command, cwd },
        { cause: error },
      );
    };
    let child: ChildProcess;
    try {
      child = spawn(command, args, spawnOptions);
    } catch (error) {
      throw notStarted(error);
    }
    this.child = child;
    try {
      await new Promise<void>((resolve, reject) => {
        const onSpawn = (): void => {
          child.off("error", onError);
          resolve();
        };
        const onError = (error: Error): void => {
          child.off("spawn", onSpawn);
          reject(error);
        };
        child.once("spawn", onSpawn).once("error", onError);
      });
    } catch (error) {
      throw notStarted(error);
    }
    this.startWired(child, args, env, cwd);
  }

  private startWired(
    child: ChildProcess,
    args: readonly string[],
    env: Readonly<Record<string, string>> | undefined,
    cwd: string | undefined,
  ): void {
    adoptGroup(child);
    this.logger.info("upstream started", {
      pid: child.pid,
      argCount: args.length,
      envKeys: Object.keys(env ?? {}),
      cwd,
    });
    this.closedPromise = new Promise((resolve) => child.once("close", () => resolve()));
    this.wire(child);
  }

  private wire(child: ChildProcess): void {
    const { stdin, stdout, stderr } = child;
    if (!stdin || !stdout || !stderr) throw new Error("child process has no stdio pipes");
    this.turns = new ReadYield(
      () => stdout.pause(),
      () => stdout.resume(),
    );
    stdout.on("data", (chunk: Buffer) => {
      for (const framed of this.reader.push(chunk)) {
        deliverFramed(this, framed, this.envSecrets);
        if (framed.problem?.unended) return this.endForUnendedLine(child, framed.problem.bytes);
      }
      this.turns!.took(chunk.length);
    });
    stdout.on("end", () => {
      for (const framed of this.reader.end()) deliverFramed(this, framed, this.envSecrets);
      this.afterStdoutEnd(child);
    });
    const stderrLines = new LineSplitter(this.options.maxStderrLineBytes ?? DEFAULT_MAX_STDERR_LINE_BYTES, false);
    const stderrSink = {
      line: (bytes: Buffer) => this.onStderrLine(bytes.toString("utf8")),
      // Cut at its head: a secret the cut went through leaves its start there, redacted too.
      oversized: (line: OversizedLine) => {
        const head = line.head.toString("utf8");
        const shown = this.envSecrets === undefined ? head : redactedExcerpt(head, head.length, this.envSecrets());
        this.onStderrLine(`${shown}… (${line.bytes} bytes)`);
      },
    };
    stderr.on("data", (chunk: Buffer) => stderrLines.push(chunk, stderrSink));
    stderr.on("end", () => {
      stderrLines.takeRest(stderrSink);
      if (!this.closeReported) this.flushStderr();
    });
    // EPIPE after the child died: the exit handler reports the cause, this would only repeat it.
    stdin.on("error", (error) => this.logger.debug("upstream stdin error", { error: error.message }));
    child.on("error", (error) => this.onerror?.(error));
    child.once("exit", (code, signal) => {
      // What the leader started goes with it, whether it exited on its own or was asked to.
      if (!this.closing) void endGroup(child, this.killGraceMs);
      this.exit = { code, signal, expected: this.closing, ...this.stderrOfExit() };
      const last = this.stderrTail.last;
      const telling = this.stderrTail.telling;
      this.logger[this.closing ? "debug" : "warn"]("upstream exited", {
        pid: child.pid,
        code,
        signal,
        ...(this.closing || last === undefined ? {} : { lastStderrLine: last.slice(0, 500) }),
        ...(this.closing || telling === undefined || telling.isLast ? {} : { stderrError: telling.line.slice(0, 500) }),
      });
      // Let stdout drain, but do not wait forever on pipes a grandchild keeps open. A stdout
      // paused for a slow host is read again: the child writes no more, and what is left in the
      // pipe (64 KiB at most) must reach the host before the pipe is destroyed.
      this.turns?.release();
      const timer = setTimeout(() => {
        stdout.destroy();
        stderr.destroy();
      }, PIPE_GRACE_AFTER_EXIT_MS);
      timer.unref();
      child.once("close", () => clearTimeout(timer));
    });
    child.once("close", () => {
      const exit = this.exit;
      if (exit && !exit.expected) {
        this.exit = { ...exit, ...this.stderrOfExit() };
        this.onerror?.(this.exitError());
      }
      this.finish();
    });
  }

  private get killGraceMs(): number {
    return this.options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  }

  /**
   * Stdout is the upstream's only way to answer: once it ends, the upstream is over even if the
   * process runs on. Pending requests get an error at once (through `onerror` and `onclose`) and
   * the process group is ended.
   */
  private afterStdoutEnd(child: ChildProcess): void {
    if (this.closing || this.exit !== undefined) return;
    const timer = setTimeout(() => {
      if (this.closing || this.exit !== undefined) return;
      this.endByProxy(
        child,
        "closed its stdout while still running (the proxy ended it)",
        "upstream closed its stdout but kept running; ending it",
      );
    }, EXIT_AFTER_STDOUT_EOF_MS);
    timer.unref();
    child.once("exit", () => clearTimeout(timer));
  }

  /**
   * The child wrote a line that ran on far past `maxMessageBytes` without end: what it writes is
   * no longer read (dropping it would hold a core for as long as it writes), so it is ended.
   */
  private endForUnendedLine(child: ChildProcess, bytes: number): void {
    if (this.closing || this.exit !== undefined) return;
    child.stdout?.destroy();
    this.endByProxy(
      child,
      `wrote a line that ran on for ${bytes} bytes without end (limits.maxMessageBytes is ` +
        `${this.options.maxMessageBytes}, limits.maxSkippedMessageBytes ${this.options.maxSkippedMessageBytes}; ` +
        "the proxy ended it)",
      "upstream wrote a line without end; ending it",
      { bytes },
    );
  }

  /** The proxy ends the child for what it did (`why`, told to the requests waiting), and says so. */
  private endByProxy(child: ChildProcess, why: string, logged: string, fields: Record<string, unknown> = {}): void {
    this.endedFor = why;
    this.closing = true;
    this.logger.warn(logged, { pid: child.pid, ...fields });
    this.onerror?.(this.exitError());
    void endGroup(child, this.killGraceMs);
    this.finish();
  }

  private onStderrLine(text: string): void {
    if (text.trim() === "") return;
    // A server may print what it was given (`env` values): never logged, nor quoted in an error.
    const line = this.envRedactor.any ? this.envRedactor.redact(text) : text;
    this.stderrTail.push(line);
    // Its end told (its last lines with it), what a child still prints is not logged after it.
    if (this.closeReported) return;
    this.stderrLast = line;
    if (!this.stderrLogged.happened()) this.settleStderrLater();
  }

  /**
   * Lines counted, not logged: their count is logged when their interval is over, whatever comes
   * next (`settle()` tells it when due, else says how long is left).
   */
  private settleStderrLater(): void {
    if (this.stderrSettling !== undefined || this.closeReported) return;
    const left = this.stderrLogged.settle();
    if (left === undefined) return;
    this.stderrSettling = setTimeout(() => {
      this.stderrSettling = undefined;
      this.settleStderrLater();
    }, left);
    this.stderrSettling.unref();
  }

  /** The lines counted and not logged, with the last of them (often why it ended): told now. */
  private flushStderr(): void {
    clearTimeout(this.stderrSettling);
    this.stderrSettling = undefined;
    this.stderrLogged.flush();
  }

  private stderrOfExit(): Pick<UpstreamExit, "lastStderrLine" | "stderrLineIsLast"> {
    const telling = this.stderrTail.telling;
    return telling === undefined ? {} : { lastStderrLine: telling.line, stderrLineIsLast: telling.isLast };
  }

  /** Why the child ended (exit code or signal, last stderr line), for the proxy to tell hosts. */
  /** The `env` values the child was given (secrets, as the header says). */
  secretsSent(): Iterable<string | undefined> {
    return Object.values(this.options.env ?? {});
  }

  describeEnd(): string | undefined {
    return this.exit !== undefined || this.endedFor !== undefined ? this.exitError().message : undefined;
  }

  /** The error to give hosts whose requests were pending when the child went away. */
  exitError(): NormalizerError {
    const exit = this.exit;
    const how =
      this.endedFor ??
      (!exit ? "is not running" : exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`);
    const last =
      exit?.lastStderrLine && this.options.stderrInErrors !== false
        ? ` (${exit.stderrLineIsLast === false ? "error on stderr" : "last stderr line"}: ` +
          `${JSON.stringify(exit.lastStderrLine.slice(0, 500))})`
        : "";
    return new NormalizerError("UPSTREAM_EXITED", `upstream "${this.options.command}" ${how}${last}`, {
      command: this.options.command,
      code: exit?.code ?? null,
      signal: exit?.signal ?? null,
      ...(this.options.stderrInErrors === false ? {} : { lastStderrLine: exit?.lastStderrLine }),
    });
  }

  send(message: JSONRPCMessage, _options?: ProxySendOptions): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed || this.closing || this.exit || !stdin.writable) {
      return Promise.reject(
        this.exit
          ? this.exitError()
          : new NormalizerError("UPSTREAM_CLOSED", `upstream "${this.options.command}" is closed`),
      );
    }
    // Not an async function: a message the pipe takes at once (nearly all) gets the one settled
    // promise, not a new one per message; failures still reject, never throw.
    // Backpressure: a child behind on its stdin shows in `queuedBytes`, and every send while
    // it is behind gets the pipe's one drain waiter (never a listener per message).
    let taken: boolean;
    try {
      taken = stdin.write(serializeMessage(message));
    } catch (error) {
      return Promise.reject(error);
    }
    if (taken) return SENT;
    this.stdinDrain ??= new DrainWaiter(stdin);
    return this.stdinDrain.wait();
  }

  /** Bytes written to the child's stdin that it has not read yet. */
  get queuedBytes(): number {
    return this.child?.stdin?.writableLength ?? 0;
  }

  /** Settles when the child has read what its stdin held (one waiter for every caller). */
  whenDrained(): Promise<void> {
    return this.stdinDrain?.wait() ?? SENT;
  }

  /** Stops reading the child's stdout: once the pipe is full, the child's writes block. */
  pauseReading(): void {
    this.turns?.hold();
  }

  resumeReading(): void {
    this.turns?.release();
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.closed) return this.finish();
    this.closing = true;
    if (this.exit === undefined) {
      // MCP spec lifecycle (stdio shutdown): close stdin, then SIGTERM, then SIGKILL — to the
      // whole process group, so nothing the child started outlives it.
      child.stdin?.end();
      // Done once the leader has exited; helpers still being ended are SIGKILLed at the latest
      // when this process exits.
      void endGroup(child, this.killGraceMs);
      await this.closedPromise;
    } else {
      await this.closedPromise;
    }
    this.finish();
  }

  private finish(): void {
    if (this.closeReported) return;
    // Told before the end is reported: its pipe may outlive it (a grandchild holding it) or be
    // destroyed with no end event.
    this.flushStderr();
    this.closeReported = true;
    this.closed = true;
    this.onclose?.();
  }
}

/** Why `cwd` cannot be a child's working folder, or undefined when it can. */
function cwdProblem(cwd: string): string | undefined {
  let found: ReturnType<typeof statSync>;
  try {
    found = statSync(cwd, { throwIfNoEntry: false });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A file on its path (ENOTDIR), a folder it may not enter (EACCES), …
    const why = code === "ENOTDIR" ? "a file is on its path" : (code ?? String(error));
    return `its cwd "${cwd}" cannot be used (${why})`;
  }
  if (found === undefined) return `its cwd "${cwd}" does not exist`;
  return found.isDirectory() ? undefined : `its cwd "${cwd}" is not a folder`;
}
