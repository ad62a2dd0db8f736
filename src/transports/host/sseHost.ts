/**
 * Legacy HTTP+SSE (MCP 2024-11-05 basic/transports §"HTTP with SSE"), still what many hosts
 * speak: `GET /sse/NAME` opens the stream and its first event, `endpoint`, tells the host where
 * to POST (`/messages/NAME?sessionId=…`); every server→client message goes on that one stream;
 * each POST is answered 202 and its messages delivered. The session ends when the stream does.
 * While the session's upstream is behind, POST bodies are not read until it catches up.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { JSONRPC } from "../../errors/jsonRpcCodes.js";
import type { JSONRPCMessage, TransportSendOptions } from "../types.js";
import { HostTransportBase } from "./hostTransportBase.js";
import type { HostEndpointContext } from "./hostSession.js";
import { replyJsonRpcError, replySessionLimit } from "./httpReplies.js";
import { refuse, replyBodyFailure } from "./refuse.js";
import { isAnswerOverLimit, readMessageBody } from "./readMessageBody.js";
import { forwardableMcpHeaders } from "../mcpHeaders.js";
import { clientAddress } from "./clientAddress.js";
import { sameOwner, type SessionOwner } from "./sessionOwner.js";
import { SseWriter } from "./sseWriter.js";
import { SENT } from "../drainWaiter.js";
import { encodeWire, type WireJson } from "../wireJson.js";

export class SseHostSession extends HostTransportBase {
  constructor(
    readonly sessionId: string,
    private readonly stream: SseWriter,
  ) {
    super();
    stream.onEnded(() => this.finish());
  }

  /** Sends the `endpoint` event; must be the first event on the stream (2024-11-05 spec). */
  announce(endpoint: string): void {
    void this.stream.write("endpoint", endpoint);
  }

  /**
   * Messages POSTed to this session's endpoint, one by one: a batch is split, as on `/mcp` (an SDK
   * server cannot read one over stdio), and each answer comes as an event of its own.
   */
  receive(messages: JSONRPCMessage[], headers: Record<string, string>): void {
    for (const message of messages) this.deliver(message, { requestInfo: { headers } });
  }

  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    if (this.isClosed) return SENT;
    let wire: WireJson;
    try {
      wire = encodeWire(message);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.stream.write("message", wire);
  }

  /** Bytes on the stream the host has not read yet. */
  override get queuedBytes(): number {
    return this.stream.queuedBytes;
  }

  override whenDrained(): Promise<void> {
    return this.stream.drained();
  }

  protected release(): void {
    this.stream.end();
  }
}

/** Streams whose upstream could not start, remembered this long for the POSTs that follow. */
const FAILED_REMEMBERED_MS = 60_000;
/** At most this many of them. */
const FAILED_REMEMBERED = 256;

export class SseEndpoint {
  private readonly live = new Map<string, SseHostSession>();
  /** Who opened each stream (`sessionOwner.ts`): only they may POST to it. */
  private readonly owners = new Map<string, SessionOwner>();
  /**
   * Streams that ended because their upstream could not start, and why: a host's `initialize`
   * often comes just after (it was announced the endpoint first), and is told why, not "not found".
   */
  private readonly failed = new Map<string, { owner: SessionOwner; why: string; at: number }>();

  constructor(private readonly ctx: HostEndpointContext) {}

  get sessionCount(): number {
    return this.live.size;
  }

  /** `GET /sse/NAME` */
  async open(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const release = this.ctx.slots.acquire(clientAddress(req));
    if (release === null) {
      replySessionLimit(res, this.ctx.maxSessions);
      return;
    }
    const sessionId = randomUUID();
    const session = new SseHostSession(sessionId, new SseWriter(res, {}, this.ctx.sseKeepAliveMs));
    this.live.set(sessionId, session);
    this.owners.set(sessionId, this.ctx.ownerOf?.(req));
    session.onClosed(() => {
      release();
      this.live.delete(sessionId);
      this.owners.delete(sessionId);
    });
    // Announce before the proxy connects: the host may POST at once, and deliver() keeps
    // what arrives until the proxy calls start().
    session.announce(`/messages/${encodeURIComponent(this.ctx.server)}?sessionId=${sessionId}`);
    const headers = forwardableMcpHeaders(req.headers) ?? {};
    try {
      await this.ctx.onSession(session, { server: this.ctx.server, kind: "sse", stateless: false, headers, sessionId });
    } catch (error) {
      // The stream is already open, so no HTTP status can say why: requests POSTed while the
      // upstream started are answered on it with an error, then it ends; the POSTs that come
      // after it are told why.
      const reason = error instanceof Error ? error.message : String(error);
      const why = `Could not connect server "${this.ctx.server}": ${reason}`;
      this.failed.set(sessionId, { owner: this.ctx.ownerOf?.(req), why, at: Date.now() });
      if (this.failed.size > FAILED_REMEMBERED) this.failed.delete(this.failed.keys().next().value as string);
      void session.refuseStart(JSONRPC.UPSTREAM_UNAVAILABLE, why);
    }
  }

  /** `POST /messages/NAME?sessionId=…` */
  async post(req: IncomingMessage, res: ServerResponse, sessionId: string | null): Promise<void> {
    const found = sessionId === null ? undefined : this.live.get(sessionId);
    // Another client's stream is answered as one that does not exist.
    const session =
      found !== undefined && sameOwner(this.owners.get(sessionId!), this.ctx.ownerOf?.(req)) ? found : undefined;
    const failed = sessionId === null ? undefined : this.failed.get(sessionId);
    if (
      session === undefined &&
      failed !== undefined &&
      Date.now() - failed.at < FAILED_REMEMBERED_MS &&
      sameOwner(failed.owner, this.ctx.ownerOf?.(req))
    ) {
      refuse(req, res, this.ctx.closeTimeoutMs, 502, JSONRPC.UPSTREAM_UNAVAILABLE, failed.why);
      return;
    }
    if (session === undefined) {
      refuse(
        req,
        res,
        this.ctx.closeTimeoutMs,
        404,
        JSONRPC.INVALID_REQUEST,
        `Session not found: ${String(sessionId).slice(0, 64)} (open a new stream with GET /sse/${this.ctx.server})`,
      );
      return;
    }
    // One body at a time, and none while the upstream is behind: the host's uploads wait in
    // their sockets, not in this process.
    await session.inReadingTurn(async () => {
      const body = await readMessageBody(req, this.ctx.maxBodyBytes ?? this.ctx.maxMessageBytes, {
        limitName: this.ctx.maxBodyBytes === undefined ? "limits.maxMessageBytes" : "limits.maxBodyBytes",
        maxBatch: this.ctx.maxBatch,
        budget: this.ctx.bodyBudget,
        maxNodes: this.ctx.maxMessageNodes,
      });
      if (!body.ok) {
        this.ctx.onproblem?.(body.problem, { server: this.ctx.server, kind: "sse", sessionId: session.sessionId });
        if (isAnswerOverLimit(body.problem)) session.onproblem?.(body.problem);
        replyBodyFailure(req, res, body, this.ctx.closeTimeoutMs);
        return;
      }
      if (session.isClosed) {
        // Its upstream could not start (a POST that waited behind the one answered on the stream),
        // told by the session itself when it was ended before the start's failure reached here.
        const why = this.failed.get(session.sessionId)?.why ?? session.startRefused;
        if (why !== undefined) replyJsonRpcError(res, 502, JSONRPC.UPSTREAM_UNAVAILABLE, why);
        else replyJsonRpcError(res, 404, JSONRPC.INVALID_REQUEST, "Session ended while its message was being read");
        return;
      }
      res.writeHead(202, { "content-type": "text/plain" }).end("Accepted");
      session.receive(body.messages, forwardableMcpHeaders(req.headers) ?? {});
    });
  }

  closeAll(): void {
    for (const session of [...this.live.values()]) void session.close();
  }
}
