/**
 * MCP over WebSocket for hosts: subprotocol `mcp` (what the SDK's `WebSocketClientTransport`
 * asks for), one JSON-RPC message per text frame, built on `ws` (Node 20 has no WebSocket
 * server). `maxPayload` is `limits.maxMessageBytes`: `ws` closes a connection that sends a
 * bigger frame (close code 1009), which is reported through `onproblem` first.
 *
 * What a host has sent of a message not yet whole is held by `ws` until its last frame comes: it
 * is counted in the listener's `limits.bodyBytesInFlight`, as HTTP bodies are, so many hosts
 * each sending most of a big message cannot run the proxy out of memory. One that would take the
 * total past the budget is no longer read and is closed with 1013 (try again later).
 */
import { JSONRPC } from "../../errors/jsonRpcCodes.js";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { holdsMoreNodes } from "../../wire/jsonNodes.js";
import { parseJsonMessage, parseJsonText, tooComplexProblem, type Framed } from "../lineFraming.js";
import type { JSONRPCMessage, MessageExtraInfo, TransportSendOptions } from "../types.js";
import { HostTransportBase } from "./hostTransportBase.js";
import type { BodyBudget } from "./bodyBudget.js";
import type { HostEndpointContext } from "./hostSession.js";
import { replyOnSocket, sessionLimitMessage } from "./httpReplies.js";
import { forwardableMcpHeaders } from "../mcpHeaders.js";
import { clientAddress } from "./clientAddress.js";
import { DrainWaiter, mustWaitForDrain, SENT, type DrainableStream } from "../drainWaiter.js";
import { ReadYield } from "../readYield.js";
import { TickCork, type Corkable } from "../tickCork.js";
import { encodeWire, type WireJson } from "../wireJson.js";
import { WsHeartbeat } from "./wsHeartbeat.js";

export const WS_SUBPROTOCOL = "mcp";

/** Options of every whole text frame sent (shared: `ws` only reads them). */
const TEXT_FRAME = Object.freeze({ binary: false });

export class WsHostSession extends HostTransportBase {
  /** What every message of the session carries along: the headers of its upgrade request. */
  private readonly extra: MessageExtraInfo;
  /** The TCP socket under `ws` (its `_socket`, not in its typings) and that socket's drain waiter. */
  private readonly rawSocket: DrainableStream | undefined;
  private readonly drain: DrainWaiter | undefined;
  /** The frames of one tick leave in one system call (see TickCork). */
  private readonly tick: TickCork | undefined;
  /** Reads the host's frames in turns with the rest of the process, and holds them while the upstream is behind. */
  private readonly turns: ReadYield;
  /** Bytes read from the host since its last whole message (or ping, or pong), taken from the budget. */
  private partialBytes = 0;
  /** A refusal waiting for the host's first message (see `refuseStart`). */
  private refusalWaiting: { code: number; message: string; timer: NodeJS.Timeout } | undefined;
  /** Set once the connection is ending: it is cut off when this fires. */
  private cutOff: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: WebSocket,
    headers: Record<string, string>,
    private readonly maxMessageBytes: number,
    private readonly closeTimeoutMs: number,
    private readonly budget?: BodyBudget,
    /** Most nodes in one message (`limits.maxMessageNodes`), counted before it is parsed. */
    private readonly maxNodes = Number.POSITIVE_INFINITY,
  ) {
    super();
    this.extra = { requestInfo: { headers } };
    this.rawSocket = (socket as unknown as { _socket?: DrainableStream })._socket;
    this.drain = this.rawSocket === undefined ? undefined : new DrainWaiter(this.rawSocket);
    this.turns = new ReadYield(
      () => socket.pause(),
      () => socket.resume(),
    );
    this.tick = this.rawSocket === undefined ? undefined : new TickCork(this.rawSocket as unknown as Corkable);
    if (budget !== undefined && this.rawSocket !== undefined) this.countPartial(this.rawSocket, budget);
    socket.on("message", (data, isBinary) => this.receive(data, isBinary));
    socket.on("close", () => {
      this.giveBackPartial();
      this.finish();
    });
    // Closed from the host's side (its close frame answered, or its bad frame failing the
    // connection), ws waits 30 s of its own for the host to end TCP: the session, its slot and its
    // upstream would stay that long. Cut off after `closeTimeoutMs`, as when the proxy closes.
    this.rawSocket?.on("finish", () => this.cutOffLater());
    socket.on("error", (error: Error & { code?: string }) => {
      this.cutOffLater();
      if (error.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") {
        this.problem({ kind: "too-large", bytes: this.maxMessageBytes + 1, excerpt: "" }, error.message);
      } else {
        this.reportError(error);
      }
    });
  }

  /**
   * Hands the frame to `ws`. Not an async function and no callback per frame: a write the
   * socket takes at once costs no promise; while the host is behind, every send gets the
   * socket's one drain waiter. Write errors close the socket, which ends the session.
   */
  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    if (this.isClosed || this.socket.readyState !== this.socket.OPEN) return SENT;
    let wire: WireJson;
    try {
      wire = encodeWire(message);
    } catch (error) {
      return Promise.reject(error);
    }
    // The frames of one tick leave in one writev (see TickCork; ws corks each frame on its own).
    this.tick?.beforeWrite();
    // One encode to bytes here; given a string, ws would measure it and then encode it again.
    if (typeof wire === "string") {
      this.socket.send(Buffer.from(wire, "utf8"), TEXT_FRAME);
    } else {
      // Raw pieces go out as the fragments of one text message (RFC 6455 §5.4): no joined copy.
      const last = wire.parts.length - 1;
      for (const [i, part] of wire.parts.entries()) this.socket.send(part, { binary: false, fin: i === last });
    }
    return this.drain === undefined || !mustWaitForDrain(this.rawSocket!) ? SENT : this.drain.wait();
  }

  /**
   * A session refused before the host sent anything waits for its first message (an SDK client
   * sends `initialize` as the connection opens; the frame may still be on its way) so that it
   * gets the refusal as its error — not only a close — at most `closeTimeoutMs`.
   */
  override refuseStart(code: number, message: string): Promise<void> {
    if (this.isClosed || this.refusalWaiting !== undefined) return SENT;
    if (this.hasBacklog) return super.refuseStart(code, message);
    // Said in the close frame too, whenever the connection ends from now on.
    this.refusal = message;
    const timer = setTimeout(() => this.refuseNow(), this.closeTimeoutMs);
    timer.unref();
    this.refusalWaiting = { code, message, timer };
    return SENT;
  }

  protected override deliver(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    super.deliver(message, extra);
    if (this.refusalWaiting !== undefined) this.refuseNow();
  }

  private refuseNow(): void {
    const waiting = this.refusalWaiting;
    if (waiting === undefined) return;
    this.refusalWaiting = undefined;
    clearTimeout(waiting.timer);
    void super.refuseStart(waiting.code, waiting.message);
  }

  /** The TCP socket under `ws`, when it has one. */
  get tcpSocket(): DrainableStream | undefined {
    return this.rawSocket;
  }

  /** Bytes `ws` and its socket hold for the host (`bufferedAmount`). */
  override get queuedBytes(): number {
    return this.socket.bufferedAmount;
  }

  override whenDrained(): Promise<void> {
    return this.drain?.wait() ?? SENT;
  }

  protected override stopReading(): void {
    this.turns.hold();
  }

  protected override startReading(): void {
    this.turns.release();
  }

  protected release(): void {
    const socket = this.socket;
    if (socket.readyState !== socket.OPEN && socket.readyState !== socket.CONNECTING) return;
    // 1011: a condition kept the server from serving this connection; a reason is at most 123 bytes (RFC 6455 §5.5).
    if (this.refusal === undefined) this.closeWith(1000);
    else this.closeWith(1011, closeReason(this.refusal));
  }

  /**
   * Sends the close frame. A host that never answers it (frozen, cut off) would hold its
   * connection — and a shutdown waiting for it — for the ws library's own 30 s: it is cut off
   * after `closeTimeoutMs`.
   */
  private closeWith(code: number, reason?: string): void {
    this.socket.close(code, reason);
    this.cutOffLater();
  }

  /** The connection is ending: whatever the host does, it is gone `closeTimeoutMs` from now. */
  private cutOffLater(): void {
    if (this.cutOff !== undefined) return;
    const socket = this.socket;
    const cut = setTimeout(() => socket.terminate(), this.closeTimeoutMs);
    cut.unref();
    this.cutOff = cut;
    socket.once("close", () => clearTimeout(cut));
  }

  /**
   * Counts what the host sends against the listener's budget until it is a whole message (bytes
   * of the next one read in the same chunk are let go with it: at most one chunk uncounted).
   * Counted before `ws` reads the chunk: it may emit the message it completes at once.
   */
  private countPartial(raw: DrainableStream, budget: BodyBudget): void {
    const socket = raw as unknown as {
      prependListener(event: "data", listener: (chunk: Buffer) => void): void;
      pause(): void;
    };
    socket.prependListener("data", (chunk: Buffer) => {
      if (this.isClosed) return;
      if (budget.take(chunk.length)) {
        this.partialBytes += chunk.length;
        return;
      }
      // No more of it is read (ws would hold it): what it sent is let go, the host told to come back.
      socket.pause();
      this.giveBackPartial();
      this.reportError(
        new Error(
          `A WebSocket host's unfinished message would take the bodies held past limits.bodyBytesInFlight ` +
            `(${budget.maxBytes} bytes); its connection is closed (1013, try again later)`,
        ),
      );
      this.closeWith(1013, "over limits.bodyBytesInFlight; try again later");
    });
    // A ping or pong gives back its own bytes only (a masked frame: 6 bytes of header, up to 125 of
    // payload): a message in fragments around it is still held by `ws`.
    const control = (payload: Buffer): void => this.giveBackPartial(payload.length + 6);
    this.socket.on("ping", control);
    this.socket.on("pong", control);
  }

  /** Gives back what is counted (or `bytes` of it: a control frame's). */
  private giveBackPartial(bytes = this.partialBytes): void {
    const given = Math.min(bytes, this.partialBytes);
    if (given === 0) return;
    this.budget?.give(given);
    this.partialBytes -= given;
  }

  private receive(data: RawData, isBinary: boolean): void {
    this.giveBackPartial();
    // Binary frames are read as UTF-8 JSON too: being strict here would only break hosts.
    const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    const framed = holdsMoreNodes(bytes, this.maxNodes)
      ? { problem: tooComplexProblem(bytes, this.maxNodes) }
      : isBinary
        ? parseJsonMessage(bytes)
        : parseTextFrame(bytes);
    this.turns.took(bytes.length);
    if (framed === undefined) return;
    if (framed.problem === undefined) this.deliver(framed.message as JSONRPCMessage, this.extra);
    else
      this.problem(
        framed.problem,
        `Unreadable message from the host (${framed.problem.kind}, ${framed.problem.bytes} bytes)`,
      );
  }

  private problem(problem: Parameters<NonNullable<HostTransportBase["onproblem"]>>[0], text: string): void {
    if (this.onproblem !== undefined) this.onproblem(problem);
    else this.reportError(new Error(text));
  }
}

/**
 * `parseJsonMessage` for a text frame, without checking its UTF-8 again: `ws` has already
 * checked it (RFC 6455 §8.1) and closed the connection with 1007 when it was not.
 */
function parseTextFrame(bytes: Buffer): Framed | undefined {
  if (bytes.length <= 64 && bytes.toString("latin1").trim() === "") return undefined;
  return parseJsonText(bytes.toString("utf8"), bytes.length);
}

export interface WsEndpointOptions {
  /**
   * Ping interval; a host that has not answered the last ping by the next is dropped. 0: off.
   * (`limits.pingIntervalMs`).
   */
  pingIntervalMs: number;
  /** A host that has not answered the close frame in this time is cut off (`limits.closeTimeoutMs`). */
  closeTimeoutMs: number;
}

/** A close frame's reason is at most 123 bytes (RFC 6455 §5.5). */
const MAX_CLOSE_REASON_BYTES = 123;

/** `text` as a close reason: whole when it fits, else its start and its end, cut at whole characters. */
function closeReason(text: string): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= MAX_CLOSE_REASON_BYTES) return text;
  // The cause is at the end ("…: connect ECONNREFUSED …"): the start and the end are kept.
  const head = bytes
    .subarray(0, 40)
    .toString()
    .replace(/\uFFFD+$/, "");
  const tail = bytes
    .subarray(bytes.length - (MAX_CLOSE_REASON_BYTES - 45))
    .toString()
    .replace(/^\uFFFD+/, "");
  return `${head} … ${tail}`;
}

export class WsEndpoint {
  private readonly wss: WebSocketServer;
  private readonly live = new Set<WsHostSession>();
  private readonly heartbeat: WsHeartbeat;
  private readonly closeTimeoutMs: number;

  constructor(
    private readonly ctx: HostEndpointContext,
    options: WsEndpointOptions,
  ) {
    this.closeTimeoutMs = options.closeTimeoutMs;
    this.heartbeat = new WsHeartbeat(options.pingIntervalMs);
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: ctx.maxMessageBytes,
      // Offer `mcp` when asked; a host that asks for no subprotocol is served all the same.
      handleProtocols: (protocols) => (protocols.has(WS_SUBPROTOCOL) ? WS_SUBPROTOCOL : false),
    });
  }

  get sessionCount(): number {
    return this.live.size;
  }

  /** Takes over an `upgrade` request the listener has already checked (Host, Origin, auth). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const release = this.ctx.slots.acquire(clientAddress(req));
    if (release === null) {
      replyOnSocket(
        socket,
        this.ctx.closeTimeoutMs,
        503,
        JSONRPC.SERVER_ERROR,
        sessionLimitMessage(this.ctx.maxSessions),
        {
          "retry-after": "1",
        },
      );
      return;
    }
    // `ws` answers a bad handshake itself and never calls back: free the slot with the socket.
    let upgraded = false;
    socket.once("close", () => {
      if (!upgraded) release();
    });
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      upgraded = true;
      const headers = forwardableMcpHeaders(req.headers) ?? {};
      const session = new WsHostSession(
        ws,
        headers,
        this.ctx.maxMessageBytes,
        this.closeTimeoutMs,
        this.ctx.bodyBudget,
        this.ctx.maxMessageNodes,
      );
      this.live.add(session);
      this.heartbeat.watch(ws, {
        onDead: (why) => session.reap(why),
        isReadingPaused: () => session.isHeldForUpstream,
        rawSocket: session.tcpSocket,
      });
      session.onClosed(() => {
        release();
        this.live.delete(session);
      });
      const info = { server: this.ctx.server, kind: "websocket" as const, stateless: false, headers };
      Promise.resolve()
        .then(() => this.ctx.onSession(session, info))
        .catch((error: unknown) => {
          // Its requests (the first perhaps still on its way) get the error, then the connection
          // closes with 1011 (a condition kept the server from serving it) and it as the reason.
          void session.refuseStart(
            JSONRPC.UPSTREAM_UNAVAILABLE,
            String(error instanceof Error ? error.message : error),
          );
        });
    });
  }

  closeAll(): void {
    for (const session of [...this.live]) void session.close();
    this.heartbeat.stop();
    this.wss.close();
  }
}
