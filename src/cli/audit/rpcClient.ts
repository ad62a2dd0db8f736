/**
 * A raw JSON-RPC client over one upstream transport, for `audit`. Deliberately not the
 * SDK `Client`: its typed methods validate results with zod and strip or reject the very shapes
 * an audit must see (unknown keys, text-in-base64 with a wrong mimeType, …). Results come back
 * exactly as the transport parsed them; responses are matched to requests by id. An answer the
 * transport could not read (over `limits.maxMessageBytes`, not UTF-8) fails its request at once,
 * with why. What the upstream was given to keep secret (its `env` values, header values, a
 * token) is never quoted back in an error: reports get shared.
 */
import { JSONRPC } from "../../errors/jsonRpcCodes.js";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { redactSecrets } from "../../errors/redact.js";
import type { FramingProblem, JSONRPCMessage, ProxyTransport } from "../../transports/types.js";

/** A JSON-RPC error answer, kept as the upstream sent it. */
export class RpcError extends Error {
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export interface RpcClientOptions {
  /** Time to wait for each response, in ms (`limits.requestTimeoutMs`, or `--timeout`). */
  requestTimeoutMs: number;
  /** What set that time, for the message of a request not answered in it (default the limit). */
  timeoutSetting?: string;
  /** Why the transport ended (exit code, last stderr line), for error messages. */
  describeEnd?: () => string | undefined;
  /** What the transport reports failed outside an answer (a notification's POST refused), its secrets redacted. */
  onTransportError?: (message: string) => void;
}

export class RawRpcClient {
  /** Each result handed out → the response it came in (whose wire text measures its entries). */
  private readonly responses = new WeakMap<object, unknown>();
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closed = false;
  private readonly timeoutMs: number;

  constructor(
    private readonly transport: ProxyTransport,
    private readonly options: RpcClientOptions,
  ) {
    this.timeoutMs = options.requestTimeoutMs;
    transport.onmessage = (message) => this.receive(message);
    transport.onclose = () => this.fail(new NormalizerError("UPSTREAM_CLOSED", `upstream closed${this.why()}`));
    transport.onerror = (error) => options.onTransportError?.(this.redact(error.message));
    transport.onproblem = (problem) => this.unreadable(problem);
  }

  /** `text` without what the upstream was given to keep secret. */
  redact(text: string): string {
    return redactSecrets(text, this.transport.secretsSent?.() ?? []);
  }

  start(): Promise<void> {
    return this.transport.start();
  }

  /** The whole response a result of `request` came in, when it was an object. */
  responseOf(result: unknown): unknown {
    return typeof result === "object" && result !== null ? this.responses.get(result) : undefined;
  }

  request(method: string, params?: Record<string, unknown>): Promise<unknown> {
    if (this.closed)
      return Promise.reject(
        new NormalizerError("UPSTREAM_CLOSED", `upstream closed${this.why()}; cannot send ${method}`),
      );
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        const setting = this.options.timeoutSetting ?? "limits.requestTimeoutMs";
        reject(new NormalizerError("REQUEST_TIMEOUT", `${method}: no answer in ${this.timeoutMs} ms (${setting})`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      const message = { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) } as JSONRPCMessage;
      this.transport.send(message).catch((error: unknown) => {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(error instanceof Error ? error : new Error(String(error)));
      });
    });
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    await this.transport.send({
      jsonrpc: "2.0",
      method,
      ...(params === undefined ? {} : { params }),
    } as JSONRPCMessage);
  }

  async close(): Promise<void> {
    this.fail(new NormalizerError("UPSTREAM_CLOSED", "audit finished"));
    await this.transport.close();
  }

  private receive(message: unknown): void {
    for (const msg of Array.isArray(message) ? (message as unknown[]) : [message]) this.receiveOne(msg);
  }

  private receiveOne(msg: unknown): void {
    if (typeof msg !== "object" || msg === null) return;
    const m = msg as {
      id?: unknown;
      method?: unknown;
      result?: unknown;
      error?: { code?: unknown; message?: unknown; data?: unknown };
    };
    if (typeof m.method === "string") {
      // A server→client request (ping, roots/list, sampling…): an audit has none of these to give.
      if (m.id !== undefined) {
        const reply =
          m.method === "ping"
            ? { jsonrpc: "2.0", id: m.id, result: {} }
            : {
                jsonrpc: "2.0",
                id: m.id,
                error: { code: JSONRPC.METHOD_NOT_FOUND, message: `mcp-normalizer audit does not support ${m.method}` },
              };
        this.transport.send(reply as JSONRPCMessage).catch(() => {});
      }
      return;
    }
    if (typeof m.id !== "number") return;
    const pending = this.pending.get(m.id);
    if (pending === undefined) return;
    this.pending.delete(m.id);
    clearTimeout(pending.timer);
    if (m.error !== undefined) {
      const code = typeof m.error?.code === "number" ? m.error.code : 0;
      const message = typeof m.error?.message === "string" ? m.error.message : JSON.stringify(m.error);
      pending.reject(new RpcError(code, this.redact(message), m.error?.data));
    } else {
      if (typeof m.result === "object" && m.result !== null) this.responses.set(m.result, m);
      pending.resolve(m.result);
    }
  }

  private fail(error: Error): void {
    this.closed = true;
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      this.pending.delete(id);
      pending.reject(error);
    }
  }

  /** An answer the transport dropped unread: its request fails now, not at its timeout. */
  private unreadable(problem: FramingProblem): void {
    if (typeof problem.id !== "number" || problem.asks === true) return;
    const pending = this.pending.get(problem.id);
    if (pending === undefined) return;
    this.pending.delete(problem.id);
    clearTimeout(pending.timer);
    const why =
      problem.kind === "too-large"
        ? `the answer of ${problem.bytes} bytes is over limits.maxMessageBytes`
        : problem.kind === "too-complex"
          ? `the answer of ${problem.bytes} bytes has more nodes than limits.maxUpstreamMessageNodes allows`
          : problem.kind === "invalid-json"
            ? "the answer could not be read: it is not UTF-8"
            : "the answer is not JSON-RPC";
    pending.reject(new NormalizerError("UPSTREAM_UNREADABLE", why));
  }

  private why(): string {
    const why = this.options.describeEnd?.();
    return why === undefined ? "" : ` (${this.redact(why)})`;
  }
}
