/**
 * Legacy HTTP+SSE client (MCP spec 2024-11-05 "Transports › HTTP with SSE"): a GET opens an
 * event stream whose first event, `endpoint`, names the URL to POST messages to; the server's
 * messages arrive as `message` events on that stream. Still what many deployed servers speak.
 *
 * The endpoint must have the SSE URL's origin: a server must not be able to redirect our
 * POSTs (and the configured `Authorization` header) to another host.
 */
import { JSONRPC } from "../../errors/jsonRpcCodes.js";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { silentLogger, type Logger } from "../../observe/logger.js";
import type {
  FramingProblem,
  JSONRPCMessage,
  ProxySendOptions,
  UpstreamMessageExtra,
  UpstreamTransport,
} from "../types.js";
import {
  errorBodyReason,
  framedFromEvent,
  framingProblemOf,
  mediaTypeEssence,
  readSseBody,
  sentSecrets,
} from "./httpBodies.js";
import {
  DEFAULT_HTTP_CONNECT_TIMEOUT_MS,
  type FetchLike,
  type HttpConnectionOptions,
} from "./streamableHttpUpstream.js";
import {
  deliverFramed,
  describeUrl,
  forwardableHeaders,
  networkErrorText,
  withoutSecrets,
} from "./upstreamMessages.js";
import { HttpFlowControl } from "./httpFlowControl.js";
import { sameOriginRedirects } from "./sameOriginRedirects.js";
import { errorResponse, FAILED_REQUEST, methodOf, requestIdsOf } from "../jsonrpc.js";
import { messageText } from "../wireJson.js";

export interface SseUpstreamOptions extends HttpConnectionOptions {
  /** How long `start()` waits for the stream and its `endpoint` event, in ms. Default 10 s. */
  connectTimeoutMs?: number;
}

export class SseUpstreamTransport implements UpstreamTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: UpstreamMessageExtra) => void) | undefined;
  onproblem?: ((problem: FramingProblem) => void) | undefined;

  private readonly url: URL;
  private readonly where: string;
  private readonly fetch: FetchLike;
  private readonly logger: Logger;
  private readonly abort = new AbortController();
  private readonly flow = new HttpFlowControl();
  private endpoint: URL | undefined;
  private reading: Promise<void> | undefined;
  private closed = false;
  private closeReported = false;
  private lastError: string | undefined;

  /** What the proxy sends this upstream, never quoted from its answers (made once, used per message). */
  private readonly sentSecrets = (): Array<string | undefined> => sentSecrets(this.options);

  secretsSent(): Iterable<string | undefined> {
    return this.sentSecrets();
  }

  constructor(private readonly options: SseUpstreamOptions) {
    this.url = new URL(options.url);
    this.where = describeUrl(this.url);
    // A redirect is followed only within the SSE URL's origin, like the endpoint it names.
    this.fetch = sameOriginRedirects(options.fetch ?? ((url, init) => fetch(url, init)));
    this.logger = (options.logger ?? silentLogger).child({ upstream: this.where });
  }

  describeEnd(): string | undefined {
    return this.lastError;
  }

  async start(): Promise<void> {
    if (this.reading) throw new Error("SseUpstreamTransport already started");
    const timeoutMs = this.options.connectTimeoutMs ?? DEFAULT_HTTP_CONNECT_TIMEOUT_MS;
    const unreachable = (why: string, cause?: unknown): NormalizerError =>
      new NormalizerError(
        "UPSTREAM_UNREACHABLE",
        `cannot open the SSE stream of upstream ${this.where}: ${why}`,
        { url: this.where },
        { cause },
      );
    let response: Response;
    // Only the connection phase is timed: the stream itself lives as long as the session.
    const connecting = new AbortController();
    const connectTimer = setTimeout(() => connecting.abort(), timeoutMs);
    try {
      const headers = new Headers(this.options.headers ?? {});
      headers.set("accept", "text/event-stream");
      response = await this.fetch(this.url, {
        method: "GET",
        headers,
        signal: AbortSignal.any([this.abort.signal, connecting.signal]),
      });
    } catch (error) {
      if (error instanceof NormalizerError) throw error; // from an injected fetch (the OAuth layer)
      throw unreachable(
        connecting.signal.aborted
          ? `no answer within ${timeoutMs} ms (limits.connectTimeoutMs)`
          : networkErrorText(error, this.sentSecrets()),
        error,
      );
    } finally {
      clearTimeout(connectTimer);
    }
    const type = mediaTypeEssence(response.headers.get("content-type"));
    if (!response.ok || type !== "text/event-stream" || !response.body) {
      const bodyReason = response.ok ? undefined : await errorBodyReason(response, this.sentSecrets());
      const reason = response.ok
        ? `content type ${JSON.stringify(type ?? "none")}, expected text/event-stream`
        : `HTTP ${response.status}${bodyReason ? `: ${bodyReason}` : ""}`;
      await response.body?.cancel().catch(() => {});
      throw unreachable(reason);
    }
    let announce: ((error?: Error) => void) | undefined;
    const endpointKnown = new Promise<void>(
      (resolve, reject) => (announce = (error) => (error ? reject(error) : resolve())),
    );
    const timer = setTimeout(
      () => announce?.(unreachable(`no endpoint event within ${timeoutMs} ms (limits.connectTimeoutMs)`)),
      timeoutMs,
    );
    let streamError: string | undefined;
    this.reading = readSseBody(
      response.body,
      { maxEventBytes: this.options.maxMessageBytes, cutPastBytes: this.options.maxSkippedMessageBytes },
      {
        onEvent: (event) => {
          if (this.closed) return;
          if (event.type === "endpoint") {
            const endpoint = new URL(event.data, this.url);
            if (endpoint.origin !== this.url.origin)
              return announce?.(unreachable(`its endpoint event names another origin (${endpoint.origin})`));
            this.endpoint = endpoint;
            return announce?.();
          }
          if (event.type !== "message") return;
          const framed = framedFromEvent(event, this.options.maxMessageNodes);
          if (framed) deliverFramed(this, framed, this.sentSecrets);
        },
        onProblem: (problem) => this.onproblem?.(withoutSecrets(framingProblemOf(problem), this.sentSecrets)),
      },
      this.abort.signal,
      this.flow.gate,
    )
      .catch((error: unknown) => {
        if (this.closed) return;
        const why = networkErrorText(error, this.sentSecrets());
        streamError = `the SSE stream of upstream ${this.where} failed: ${why}`;
      })
      .then(() => {
        announce?.(unreachable("the stream ended before its endpoint event"));
        if (this.closed) return;
        this.closed = true;
        // Why the stream ended, not an earlier POST's failure (that one concerned its request only).
        this.lastError = streamError ?? `upstream ${this.where} closed its SSE stream`;
        this.onerror?.(new NormalizerError("UPSTREAM_CLOSED", this.lastError, { url: this.where }));
        this.reportClose();
      });
    try {
      await endpointKnown;
    } catch (error) {
      this.closed = true;
      this.abort.abort();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    this.logger.debug("SSE endpoint", { endpoint: describeUrl(this.endpoint as URL) });
  }

  async send(message: JSONRPCMessage, options?: ProxySendOptions): Promise<void> {
    if (this.closed || !this.endpoint)
      throw new NormalizerError(
        "UPSTREAM_CLOSED",
        `upstream ${this.where} is ${this.closed ? "closed" : "not started"}`,
      );
    const ids = requestIdsOf(message);
    const what = methodOf(message) ?? "response";
    const headers = new Headers(this.options.headers ?? {});
    headers.set("content-type", "application/json");
    for (const [name, value] of forwardableHeaders(options?.forwardHeaders)) headers.set(name, value);
    let failure: NormalizerError | undefined;
    const body = messageText(message);
    const bytes = Buffer.byteLength(body);
    this.flow.posting(bytes);
    try {
      const response = await this.fetch(this.endpoint, { method: "POST", headers, body, signal: this.abort.signal });
      this.flow.posted(bytes);
      if (response.ok) {
        await response.body?.cancel().catch(() => {});
        return;
      }
      const reason = await errorBodyReason(response, this.sentSecrets());
      failure = new NormalizerError(
        "UPSTREAM_HTTP_ERROR",
        `upstream ${this.where} answered POST ${what} with HTTP ${response.status}${reason ? `: ${reason}` : ""}`,
        { url: this.where, status: response.status },
      );
    } catch (error) {
      this.flow.posted(bytes);
      if (this.closed) return;
      failure =
        error instanceof NormalizerError
          ? error
          : new NormalizerError(
              "UPSTREAM_UNREACHABLE",
              `cannot reach upstream ${this.where} (POST ${what}): ${networkErrorText(error, this.sentSecrets())}`,
              { url: this.where },
            );
    }
    this.lastError = failure.message;
    this.onerror?.(failure);
    for (const id of ids)
      this.onmessage?.(
        errorResponse(id, JSONRPC.UPSTREAM_UNAVAILABLE, failure.message, { code: failure.code, ...failure.details }),
        FAILED_REQUEST,
      );
  }

  /** Bytes of POST bodies the upstream has not answered with response headers yet. */
  get queuedBytes(): number {
    return this.flow.queuedBytes;
  }

  whenDrained(): Promise<void> {
    return this.flow.whenDrained();
  }

  /** Stops pulling the upstream's SSE response streams (a JSON body in progress is still read whole). */
  pauseReading(): void {
    this.flow.gate.close();
  }

  resumeReading(): void {
    this.flow.gate.open();
  }

  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.abort.abort();
      this.flow.end();
      await this.reading;
    }
    this.reportClose();
  }

  private reportClose(): void {
    if (this.closeReported) return;
    this.closeReported = true;
    this.onclose?.();
  }
}
