/**
 * A raw JSON-RPC host over a child's stdin/stdout, framed with the project's linear reader.
 * Used where the SDK's own stdio client would be the bottleneck (its reader re-copies the
 * buffer per chunk, so a 50 MiB line takes minutes) or would hide what is on the wire.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { JsonLineReader } from "../../src/transports/lineFraming.js";

export interface RawStdio {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every message received, in order. */
  readonly messages: Array<Record<string, unknown>>;
  /** Lines that were not JSON-RPC (must stay empty for the proxy's stdout). */
  readonly problems: unknown[];
  request(id: number | string, method: string, params?: unknown, timeoutMs?: number): Promise<Record<string, unknown>>;
  notify(method: string, params?: unknown): void;
  stderr(): string;
  readonly exited: Promise<number | null>;
  close(): Promise<number | null>;
}

export function startRawStdio(command: string, args: readonly string[], env: Record<string, string> = {}): RawStdio {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  const reader = new JsonLineReader({ maxMessageBytes: 1024 * 1024 * 1024 });
  const messages: Array<Record<string, unknown>> = [];
  const problems: unknown[] = [];
  const waiters = new Map<string, (m: Record<string, unknown>) => void>();
  let stderr = "";
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
        waiter(msg);
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const write = (msg: unknown): void => {
    child.stdin.write(`${JSON.stringify(msg)}\n`);
  };
  return {
    child,
    messages,
    problems,
    request: (id, method, params = {}, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer to ${method} (id ${String(id)}) in ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`)), timeoutMs);
        waiters.set(JSON.stringify(id), (m) => {
          clearTimeout(timer);
          resolve(m);
        });
        write({ jsonrpc: "2.0", id, method, params });
      }),
    notify: (method, params) => write({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }),
    stderr: () => stderr,
    exited,
    close: () => {
      child.stdin.end();
      return exited;
    },
  };
}

export const INITIALIZE_PARAMS = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-host", version: "1" } };
