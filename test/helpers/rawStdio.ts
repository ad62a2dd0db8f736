/**
 * A raw JSON-RPC host over a child's stdin/stdout, framed with the project's linear reader.
 * Used where the SDK's own stdio client would be the bottleneck (its reader re-copies the
 * buffer per chunk, so a 50 MiB line takes minutes) or would hide what is on the wire.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { afterAll, beforeAll, expect } from "vitest";
import { JsonLineReader } from "../../src/transports/lineFraming.js";
import { CLI, EVERYTHING_SERVER } from "./paths.js";

export interface RawStdio {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every message received, in order. */
  readonly messages: Array<Record<string, unknown>>;
  /** Lines that were not JSON-RPC (must stay empty for the proxy's stdout). */
  readonly problems: unknown[];
  /** The answer to a request; rejects after `timeoutMs`, or at once when the child is gone. */
  request(id: number | string, method: string, params?: unknown, timeoutMs?: number): Promise<Record<string, unknown>>;
  notify(method: string, params?: unknown): void;
  stderr(): string;
  readonly exited: Promise<number | null>;
  /** Resolves, once the child has exited and its output is read, with how it ended ("code 0", "SIGKILL"). */
  readonly closed: Promise<string>;
  /** Ends its stdin and resolves with its exit code; past `timeoutMs` it is killed and this rejects. */
  close(timeoutMs?: number): Promise<number | null>;
}

export function startRawStdio(command: string, args: readonly string[], env: Record<string, string> = {}): RawStdio {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  const reader = new JsonLineReader({ maxMessageBytes: 1024 * 1024 * 1024 });
  const messages: Array<Record<string, unknown>> = [];
  const problems: unknown[] = [];
  const waiters = new Map<string, { resolve: (m: Record<string, unknown>) => void; reject: (error: Error) => void }>();
  let stderr = "";
  let ended: string | undefined;
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdout.on("data", (chunk: Buffer) => {
    for (const framed of reader.push(chunk)) {
      if (framed.problem !== undefined) {
        problems.push(framed.problem);
        continue;
      }
      const msg = framed.message as Record<string, unknown>;
      messages.push(msg);
      const key = JSON.stringify(msg.id);
      const waiter = msg.method === undefined ? waiters.get(key) : undefined;
      if (waiter !== undefined) {
        waiters.delete(key);
        waiter.resolve(msg);
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const closed = new Promise<string>((resolve) =>
    child.once("close", (code, signal) => {
      ended = signal ?? `code ${code}`;
      // Nothing more can arrive: whoever still waits fails now, not at their timeout.
      for (const [key, waiter] of waiters)
        waiter.reject(
          new Error(`the process ended (${ended}) before answering id ${key}; stderr: ${stderr.slice(-2000)}`),
        );
      waiters.clear();
      resolve(ended);
    }),
  );
  const write = (msg: unknown): void => {
    child.stdin.write(`${JSON.stringify(msg)}\n`);
  };
  return {
    child,
    messages,
    problems,
    request: (id, method, params = {}, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        if (ended !== undefined) {
          reject(
            new Error(
              `the process ended (${ended}) before ${method} (id ${String(id)}) was sent; stderr: ${stderr.slice(-2000)}`,
            ),
          );
          return;
        }
        const timer = setTimeout(() => {
          waiters.delete(JSON.stringify(id));
          reject(
            new Error(`no answer to ${method} (id ${String(id)}) in ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`),
          );
        }, timeoutMs);
        const settle =
          <T>(fn: (value: T) => void) =>
          (value: T) => {
            clearTimeout(timer);
            fn(value);
          };
        waiters.set(JSON.stringify(id), { resolve: settle(resolve), reject: settle(reject) });
        write({ jsonrpc: "2.0", id, method, params });
      }),
    notify: (method, params) => write({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }),
    stderr: () => stderr,
    exited,
    closed,
    close: async (timeoutMs = 20_000) => {
      child.stdin.end();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), timeoutMs)));
      const code = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (code !== "late") return code;
      child.kill("SIGKILL");
      await exited;
      throw new Error(`still running ${timeoutMs} ms after its stdin closed (killed); stderr: ${stderr.slice(-2000)}`);
    },
  };
}

export const INITIALIZE_PARAMS = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "raw-host", version: "1" },
};

/**
 * `stdio` in front of the official everything server for one test file: started and initialized
 * before its tests, closed after them. Returns the host (read it inside the tests).
 */
export function everythingBehindStdio(): () => RawStdio {
  let proxy: RawStdio | undefined;
  beforeAll(async () => {
    proxy = startRawStdio(process.execPath, [CLI, "stdio", "--", process.execPath, EVERYTHING_SERVER]);
    expect((await proxy.request(0, "initialize", INITIALIZE_PARAMS, 20_000)).result).toBeDefined();
    proxy.notify("notifications/initialized");
  }, 30_000);
  afterAll(async () => {
    await proxy?.close(10_000);
  });
  return () => proxy!;
}
