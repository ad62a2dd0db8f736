/**
 * One host session joined to one upstream connection through the normalizing decorator.
 * The bridge forwards raw JSON-RPC both ways and owns what only a proxy has to care about:
 * which host requests are still waiting (so they can be answered when the upstream dies or
 * times out), and which host request a server→client message belongs to (streamable HTTP
 * routes it by `relatedRequestId`; without it progress never reaches the host).
 */
import { JSONRPC } from "../errors/NormalizerError.js";
import type { Logger } from "../observe/logger.js";
import type { FramingProblem, JSONRPCMessage, MessageExtraInfo, ProxySendOptions, ProxyTransport } from "../transports/types.js";
import { errorResponse, idKey, isNotification, isObj, isRequest, isRequestId, isResponse, progressToken, type RequestId } from "./jsonrpc.js";
import { NormalizingTransport, type NormalizationOptions } from "./withNormalization.js";

export const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;

export interface BridgeOptions {
  readonly host: ProxyTransport;
  readonly upstream: ProxyTransport;
  readonly normalization?: NormalizationOptions;
  readonly logger: Logger;
  /** A host request not answered in this time gets a JSON-RPC error (and the upstream a cancel). */
  readonly requestTimeoutMs?: number;
  /** Says why the upstream went away (exit code, last stderr line), for the errors hosts get. */
  readonly describeUpstreamEnd?: () => string | undefined;
}

interface Waiting {
  readonly id: RequestId;
  readonly method: string;
  readonly timer: NodeJS.Timeout | undefined;
  readonly progress: RequestId | undefined;
}

/** MCP HTTP headers a host sends that an HTTP upstream must see as they were. */
function forwardedHeaders(extra: MessageExtraInfo | undefined): Record<string, string> | undefined {
  const headers = extra?.requestInfo?.headers;
  if (headers === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower.startsWith("mcp-") && lower !== "mcp-session-id" && value !== undefined) out[lower] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export class Bridge {
  readonly upstream: NormalizingTransport;
  onclose?: () => void;

  private readonly host: ProxyTransport;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private readonly waiting = new Map<string, Waiting>();
  private readonly byProgressToken = new Map<string, RequestId>();
  private lastUpstreamError: string | undefined;
  private closed = false;
  /** Why the session ended: "host closed", "upstream closed", or what close() was given. */
  closeReason: string | undefined;

  constructor(private readonly options: BridgeOptions) {
    this.host = options.host;
    this.logger = options.logger;
    this.timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.upstream = new NormalizingTransport(options.upstream, options.normalization);

    this.host.onmessage = (message, extra) => this.fromHost(message, extra);
    this.host.onclose = () => void this.close("host closed");
    this.host.onerror = (error) => this.logger.warn("host transport error", { error: error.message });
    this.host.onproblem = (problem) => this.hostProblem(problem);

    this.upstream.onmessage = (message) => this.fromUpstream(message);
    this.upstream.onclose = () => void this.close("upstream closed");
    this.upstream.onerror = (error) => {
      this.lastUpstreamError = error.message;
      this.logger.warn("upstream transport error", { error: error.message });
    };
    this.upstream.onproblem = (problem) => this.upstreamProblem(problem);
  }

  /** Host requests still waiting for the upstream (for tests and leak checks). */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /** Starts the upstream first, so no host message arrives before there is somewhere to send it. */
  async start(): Promise<void> {
    await this.upstream.start();
    await this.host.start();
  }

  async close(reason = "closed"): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closeReason = reason;
    const why = this.options.describeUpstreamEnd?.() ?? this.lastUpstreamError;
    const message = why === undefined ? `upstream connection ended (${reason})` : `upstream connection ended (${reason}): ${why}`;
    for (const waiting of [...this.waiting.values()]) this.answer(waiting.id, JSONRPC.UPSTREAM_UNAVAILABLE, message);
    await Promise.allSettled([this.upstream.close(), this.host.close()]);
    this.logger.debug("session closed", { reason });
    this.onclose?.();
  }

  private fromHost(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    const items: unknown[] = Array.isArray(message) ? (message as unknown[]) : [message];
    for (const msg of items) {
      if (isRequest(msg)) this.remember(msg);
      else if (isNotification(msg) && msg.method === "notifications/cancelled" && isObj(msg.params) && isRequestId(msg.params.requestId)) this.forget(msg.params.requestId);
    }
    const options: ProxySendOptions = {};
    const headers = forwardedHeaders(extra);
    if (headers !== undefined) options.forwardHeaders = headers;
    this.upstream.send(message, options).catch((error: unknown) => {
      const text = error instanceof Error ? error.message : String(error);
      this.logger.warn("could not send to upstream", { error: text });
      for (const msg of items) if (isRequest(msg)) this.answer(msg.id, JSONRPC.UPSTREAM_UNAVAILABLE, `could not reach the upstream: ${text}`);
    });
  }

  private fromUpstream(message: JSONRPCMessage): void {
    // Batches are split: each response must find its own request's stream on the host side.
    const items: unknown[] = Array.isArray(message) ? (message as unknown[]) : [message];
    for (const msg of items) {
      let related: RequestId | undefined;
      if (isResponse(msg)) {
        if (this.forget(msg.id) === undefined) {
          this.logger.debug("upstream answered a request that is no longer waiting", { id: msg.id });
        }
        related = msg.id;
      } else {
        related = this.relatedRequest(msg);
      }
      this.toHost(msg, related);
    }
  }

  private toHost(msg: unknown, related: RequestId | undefined): void {
    const options = related === undefined ? undefined : { relatedRequestId: related };
    this.host.send(msg as JSONRPCMessage, options).catch((error: unknown) => {
      this.logger.warn("could not send to host", { error: error instanceof Error ? error.message : String(error) });
    });
  }

  /**
   * Which waiting host request a server→client message belongs to: the request whose progress
   * token it carries, else the most recent request still waiting. Over stdio the upstream says
   * nothing more; any waiting request's stream reaches the same host session.
   */
  private relatedRequest(msg: unknown): RequestId | undefined {
    if (isObj(msg) && isObj(msg.params) && isRequestId(msg.params.progressToken)) {
      const id = this.byProgressToken.get(idKey(msg.params.progressToken));
      if (id !== undefined) return id;
    }
    let last: Waiting | undefined;
    for (const waiting of this.waiting.values()) last = waiting;
    return last?.id;
  }

  private remember(msg: Record<string, unknown> & { id: RequestId; method: string }): void {
    const key = idKey(msg.id);
    const token = progressToken(msg);
    const timer = setTimeout(() => {
      this.answer(msg.id, JSONRPC.REQUEST_TIMEOUT, `upstream did not answer ${msg.method} within ${this.timeoutMs} ms (limits.requestTimeoutMs)`);
      this.upstream.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: msg.id, reason: "timeout in mcp-normalizer" } } as JSONRPCMessage).catch(() => {});
    }, this.timeoutMs);
    timer.unref();
    this.waiting.set(key, { id: msg.id, method: msg.method, timer, progress: token });
    if (token !== undefined) this.byProgressToken.set(idKey(token), msg.id);
  }

  private forget(id: RequestId): Waiting | undefined {
    const key = idKey(id);
    const waiting = this.waiting.get(key);
    if (waiting === undefined) return undefined;
    clearTimeout(waiting.timer);
    this.waiting.delete(key);
    if (waiting.progress !== undefined) this.byProgressToken.delete(idKey(waiting.progress));
    return waiting;
  }

  /** Answers a waiting host request with an error (once: the request is forgotten). */
  private answer(id: RequestId, code: number, message: string): void {
    if (this.forget(id) === undefined) return;
    this.toHost(errorResponse(id, code, message), id);
  }

  private hostProblem(problem: FramingProblem): void {
    this.logger.warn("host sent a message that could not be read", { kind: problem.kind, bytes: problem.bytes, excerpt: problem.excerpt });
    if (problem.kind === "too-large" && problem.id !== undefined) {
      this.toHost(errorResponse(problem.id, JSONRPC.MESSAGE_TOO_LARGE, `message of ${problem.bytes} bytes is over limits.maxMessageBytes`), problem.id);
    } else if (problem.kind === "invalid-json") {
      this.toHost({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.PARSE_ERROR, message: "Parse error: the message is not valid JSON" } }, undefined);
    }
  }

  private upstreamProblem(problem: FramingProblem): void {
    this.logger.warn("upstream sent a message that could not be read", { kind: problem.kind, bytes: problem.bytes, excerpt: problem.excerpt });
    if (problem.kind === "too-large" && problem.id !== undefined) {
      this.answer(problem.id, JSONRPC.MESSAGE_TOO_LARGE, `the upstream's answer of ${problem.bytes} bytes is over limits.maxMessageBytes`);
    }
  }
}
