/**
 * WebSocket client upstream (subprotocol `mcp`, one JSON-RPC message per text frame — the
 * framing of the SDK's WebSocket transports), on the `ws` package: Node 20 has no global
 * WebSocket. `maxPayload` is `maxMessageBytes`, so `ws` refuses a larger frame
 * before buffering it (it then closes with 1009, reported as a `too-large` problem).
 */
import type WebSocket from "ws";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { redactedExcerpt, redactSecrets } from "../../errors/redact.js";
import { silentLogger, type Logger } from "../../observe/logger.js";
import { parseJsonPieces } from "../lineFraming.js";
import type { FramingProblem, JSONRPCMessage, ProxySendOptions, UpstreamTransport } from "../types.js";
import { DEFAULT_HTTP_CONNECT_TIMEOUT_MS } from "./streamableHttpUpstream.js";
import { sentSecrets } from "./httpBodies.js";
import { deliverFramed, describeUrl, statusLine } from "./upstreamMessages.js";
import { DrainWaiter, mustWaitForDrain, SENT, type DrainableStream } from "../drainWaiter.js";
import { ReadYield } from "../readYield.js";
import { messageText } from "../wireJson.js";

export const WEBSOCKET_SUBPROTOCOL = "mcp";

export interface WebSocketUpstreamOptions {
  url: string | URL;
  /** Sent with the upgrade request (e.g. `Authorization`). Values are never logged. */
  headers?: Readonly<Record<string, string>>;
  logger?: Logger;
  /** Largest frame accepted, in bytes (`ws` `maxPayload`; `limits.maxMessageBytes`). */
  maxMessageBytes: number;
  /** Handshake timeout of `start()`, and wait for the closing handshake in `close()` (ms). */
  connectTimeoutMs?: number;
  /** Payload literals this long are read as raw strings (off by default; the proxy sets it). */
  rawStringBytes?: number | undefined;
  /** A message of more nodes is not parsed (`limits.maxUpstreamMessageNodes`); unbounded when absent. */
  maxMessageNodes?: number | undefined;
  /**
   * Pongs not yet written to the socket past which an upstream sending pings is ended
   * (`limits.maxPendingPongs`); unbounded when absent.
   */
  maxPendingPongs?: number | undefined;
}

export class WebSocketUpstreamTransport implements UpstreamTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;
  onproblem?: ((problem: FramingProblem) => void) | undefined;

  private readonly where: string;
  private readonly logger: Logger;
  private readonly maxMessageBytes: number;
  private socket: WebSocket | undefined;
  private closing = false;
  /** Set once start() began (it loads `ws` first): a second start() is refused. */
  private starting = false;
  private closeReported = false;
  private lastError: string | undefined;
  /** The TCP socket under `ws` (its `_socket`, not in its typings) and that socket's drain waiter. */
  private rawSocket: DrainableStream | undefined;
  private drain: DrainWaiter | undefined;
  /** Reads the socket in turns with the rest of the process, and holds it while the host is behind. */
  private turns: ReadYield | undefined;

  /** What the proxy sends this upstream, never quoted from its answers (made once, used per message). */
  private readonly sentSecrets = (): Array<string | undefined> => sentSecrets(this.options);

  secretsSent(): Iterable<string | undefined> {
    return this.sentSecrets();
  }

  constructor(private readonly options: WebSocketUpstreamOptions) {
    this.where = describeUrl(options.url);
    this.logger = (options.logger ?? silentLogger).child({ upstream: this.where });
    this.maxMessageBytes = options.maxMessageBytes;
  }

  describeEnd(): string | undefined {
    return this.lastError;
  }

  async start(): Promise<void> {
    if (this.socket || this.starting) throw new Error("WebSocketUpstreamTransport already started");
    this.starting = true;
    // Loaded here, not with the module: a proxy with no WebSocket upstream never loads `ws` for it.
    const { default: WebSocketClient } = await import("ws");
    if (this.closing)
      throw new NormalizerError(
        "UPSTREAM_CLOSED",
        `WebSocket to upstream ${this.where} was closed while it was being opened`,
        { url: this.where },
      );
    const socket = new WebSocketClient(this.options.url, [WEBSOCKET_SUBPROTOCOL], {
      headers: { ...this.options.headers },
      maxPayload: this.maxMessageBytes,
      // No permessage-deflate (ws offers it by default as a client): compressing every frame
      // costs CPU on both ends and goes through the thread pool, for traffic on a local link or
      // behind a proxy that compresses anyway; the messages themselves are the same either way.
      perMessageDeflate: false,
      handshakeTimeout: this.options.connectTimeoutMs ?? DEFAULT_HTTP_CONNECT_TIMEOUT_MS,
      // Pings are answered here (answerPings), so that a flood ended is told as what it was.
      autoPong: false,
    });
    this.socket = socket;
    // Before it opens: a ping sent with the upgrade's answer is read before this code resumes.
    this.answerPings(socket);
    await new Promise<void>((resolve, reject) => {
      const fail = (why: string, cause?: unknown): void => {
        socket.removeAllListeners();
        socket.on("error", () => {});
        socket.terminate();
        reject(
          new NormalizerError(
            "UPSTREAM_UNREACHABLE",
            `cannot open WebSocket to upstream ${this.where}: ${why}`,
            { url: this.where },
            { cause },
          ),
        );
      };
      socket.once("open", () => {
        socket.removeAllListeners("unexpected-response");
        socket.removeAllListeners("error");
        resolve();
      });
      socket.once("unexpected-response", (_request, response) =>
        fail(statusLine(response.statusCode ?? 0, response.statusMessage, this.sentSecrets())),
      );
      const timeoutMs = this.options.connectTimeoutMs ?? DEFAULT_HTTP_CONNECT_TIMEOUT_MS;
      socket.once("error", (error) =>
        fail(
          /handshake has timed out/i.test(error.message)
            ? `no answer within ${timeoutMs} ms (limits.connectTimeoutMs)`
            : redactSecrets(error.message, this.sentSecrets()),
          error,
        ),
      );
    });
    this.rawSocket = (socket as unknown as { _socket?: DrainableStream })._socket;
    this.drain = this.rawSocket === undefined ? undefined : new DrainWaiter(this.rawSocket);
    this.turns = new ReadYield(
      () => socket.pause(),
      () => socket.resume(),
    );
    socket.on("message", (data, isBinary) => this.onFrame(data, isBinary));
    socket.on("error", (error) => {
      const why = redactSecrets(error.message, this.sentSecrets());
      if ((error as { code?: string }).code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") {
        this.onproblem?.({ kind: "too-large", bytes: this.maxMessageBytes + 1, excerpt: "" });
        // Named by the limit to raise, not by ws's words ("Max payload size exceeded").
        this.lastError =
          `upstream ${this.where} sent a WebSocket message over limits.maxMessageBytes ` +
          `(${this.maxMessageBytes} bytes); the proxy closed the connection (1009)`;
      } else this.lastError = `WebSocket to upstream ${this.where} failed: ${why}`;
      // What the log quotes is the redacted text, not ws's own message.
      this.onerror?.(
        why === error.message
          ? error
          : new NormalizerError("UPSTREAM_UNREACHABLE", this.lastError, { url: this.where }, { cause: error }),
      );
    });
    socket.on("close", (code, reason) => {
      if (!this.closing) {
        // The close reason is the server's words: what the proxy sent it is taken out.
        const why = reason.length ? `: ${redactedExcerpt(reason.toString("utf8"), 200, this.sentSecrets())}` : "";
        this.lastError ??= `upstream ${this.where} closed the WebSocket (code ${code}${why})`;
        this.onerror?.(new NormalizerError("UPSTREAM_CLOSED", this.lastError, { url: this.where, code }));
      }
      this.reportClose();
    });
  }

  /**
   * Each ping gets its pong; an upstream sending pings faster than the socket takes the answers
   * (`maxPendingPongs` not yet written) is ended, as `ws` would end it — but said to be that, not
   * a connection the server closed.
   */
  private answerPings(socket: WebSocket): void {
    const most = this.options.maxPendingPongs ?? Number.POSITIVE_INFINITY;
    let waiting = 0;
    socket.on("ping", (data) => {
      if (socket.readyState !== socket.OPEN) return;
      if (waiting >= most) {
        this.lastError ??=
          `upstream ${this.where} sent pings faster than it took their answers (${most} waiting, ` +
          "limits.maxPendingPongs): the proxy ended the WebSocket";
        socket.terminate();
        return;
      }
      waiting++;
      socket.pong(data, true, () => waiting--);
    });
  }

  private onFrame(data: WebSocket.RawData, isBinary: boolean): void {
    // A fragmented message arrives as its fragments: read from them, joined only if need be.
    const pieces = Buffer.isBuffer(data) ? [data] : Array.isArray(data) ? data : [Buffer.from(data)];
    const bytes = pieces.reduce((sum, piece) => sum + piece.length, 0);
    if (isBinary) this.logger.debug("binary frame from upstream, read as UTF-8 JSON", { bytes });
    const framed = parseJsonPieces(pieces, bytes, this.options.rawStringBytes, undefined, this.options.maxMessageNodes);
    if (framed) deliverFramed(this, framed, this.sentSecrets);
    this.turns?.took(bytes);
  }

  /**
   * Hands the frame to `ws`. Not an async function and no callback per frame: a frame the
   * socket takes at once costs no promise; while the upstream is behind, every send gets the
   * socket's one drain waiter. A failed write closes the socket, which ends the session.
   */
  send(message: JSONRPCMessage, _options?: ProxySendOptions): Promise<void> {
    const socket = this.socket;
    if (!socket || socket.readyState !== socket.OPEN)
      return Promise.reject(
        new NormalizerError("UPSTREAM_CLOSED", `WebSocket to upstream ${this.where} is not open`, { url: this.where }),
      );
    try {
      socket.send(messageText(message));
    } catch (error) {
      return Promise.reject(error);
    }
    return this.drain === undefined || !mustWaitForDrain(this.rawSocket!) ? SENT : this.drain.wait();
  }

  /** Bytes `ws` and its socket hold for the upstream (`bufferedAmount`). */
  get queuedBytes(): number {
    return this.socket?.bufferedAmount ?? 0;
  }

  whenDrained(): Promise<void> {
    return this.drain?.wait() ?? SENT;
  }

  /** Stops reading the socket: once the kernel buffers fill, the upstream's sends wait. */
  pauseReading(): void {
    this.turns?.hold();
  }

  resumeReading(): void {
    this.turns?.release();
  }

  async close(): Promise<void> {
    const socket = this.socket;
    this.closing = true;
    if (!socket || socket.readyState === socket.CLOSED) return this.reportClose();
    // Still opening: the handshake is given up at once (start() rejects, its listeners gone, so
    // no "close" would reach a wait here).
    if (socket.readyState === socket.CONNECTING) {
      socket.terminate();
      return this.reportClose();
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(
        () => socket.terminate(),
        this.options.connectTimeoutMs ?? DEFAULT_HTTP_CONNECT_TIMEOUT_MS,
      );
      timer.unref();
      socket.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
      socket.close(1000);
    });
    this.reportClose();
  }

  private reportClose(): void {
    if (this.closeReported) return;
    this.closeReported = true;
    this.onclose?.();
  }
}
