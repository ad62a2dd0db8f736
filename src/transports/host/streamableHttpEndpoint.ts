/**
 * `/mcp/NAME`: the HTTP side of streamable HTTP for one server NAME — reading bodies, session
 * ids, and which session a request belongs to (MCP 2025-11-25 basic/transports §"Session
 * Management"):
 *
 * - POST with `initialize` and no `Mcp-Session-Id`: a new session; its id goes out on the
 *   response to the initialize request.
 * - POST with no `Mcp-Session-Id` that is not `initialize`: a stateless host (protocol
 *   2026-07-28 has no initialize and no sessions, every POST is self-contained). It gets a
 *   one-POST session that ends once the POST is answered; the host's `mcp-*` headers travel on
 *   each message's `requestInfo.headers` so the proxy can forward them.
 * - An unknown or ended `Mcp-Session-Id`: 404, so the host starts over. So is a session opened
 *   with another bearer token (`sessionOwner.ts`): it is not this client's.
 * - GET with `Last-Event-ID` resumes the stream that id belongs to (`streamableHttpHost.ts`).
 * - DELETE ends the session (and fires its `onclose`, so the proxy ends the upstream).
 *
 * `MCP-Protocol-Version` is never checked: versions the proxy has not heard of pass through.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { JSONRPC } from "../../errors/jsonRpcCodes.js";
import type { HostEndpointContext, HostSessionInfo } from "./hostSession.js";
import { headerValue, replyJsonRpcError, replyJsonRpcErrorTo, replySessionLimit } from "./httpReplies.js";
import { refuse, replyBodyFailure } from "./refuse.js";
import { unsupportedProtocolVersion } from "./protocolVersionHeader.js";
import { idKey, methodOf, type RequestId, requestIdOf } from "../jsonrpc.js";
import { idTextOf } from "../idAsWritten.js";
import { isAnswerOverLimit, readMessageBody } from "./readMessageBody.js";
import { forwardableMcpHeaders } from "../mcpHeaders.js";
import { clientAddress } from "./clientAddress.js";
import { acceptsEventStream, responseForm } from "./requestHeaders.js";
import { sameOwner, type SessionOwner } from "./sessionOwner.js";
import { StreamableHttpHostSession } from "./streamableHttpHost.js";

export interface StreamableHttpEndpointOptions {
  /** Stateful sessions with no traffic and no open stream end after this long (`limits.sessionIdleMs`). */
  idleTimeoutMs: number;
  /** GET-stream messages queued while no GET stream is open. */
  maxQueuedMessages: number;
  /** Bytes of those messages held at once (`limits.maxQueuedBytes`). */
  maxQueuedBytes: number;
  /** How long a POST accepting JSON and SSE waits before opening its stream. Default 500 ms. */
  lazySseWindowMs?: number;
  /** Bytes of sent events each session keeps for resumes (`limits.sseReplayBytes`); 0 or absent: none. */
  sseReplayBytes?: number;
}

export class StreamableHttpEndpoint {
  private readonly live = new Map<string, StreamableHttpHostSession>();
  private readonly owners = new Map<string, SessionOwner>();
  private readonly all = new Set<StreamableHttpHostSession>();

  constructor(
    private readonly ctx: HostEndpointContext,
    private readonly options: StreamableHttpEndpointOptions,
  ) {}

  /** Live sessions (stateful and stateless), for tests and leak checks. */
  get sessionCount(): number {
    return this.all.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = headerValue(req.headers["mcp-session-id"]);
    // A POST's body may be an initialize, which the header does not concern: it is read first.
    const unsupported =
      req.method === "POST" ? undefined : unsupportedProtocolVersion(headerValue(req.headers["mcp-protocol-version"]));
    if (unsupported !== undefined) {
      refuse(req, res, this.ctx.closeTimeoutMs, 400, JSONRPC.SERVER_ERROR, unsupported);
      return;
    }
    switch (req.method) {
      case "POST":
        return this.post(req, res, sessionId);
      case "GET":
        return this.get(req, res, sessionId);
      case "DELETE":
        return this.delete(req, res, sessionId);
      default:
        refuse(
          req,
          res,
          this.ctx.closeTimeoutMs,
          405,
          JSONRPC.SERVER_ERROR,
          `Method ${req.method} not allowed on /mcp/${this.ctx.server}`,
          { allow: "GET, POST, DELETE" },
        );
    }
  }

  closeAll(): void {
    for (const session of [...this.all]) void session.close();
  }

  private async post(req: IncomingMessage, res: ServerResponse, sessionId: string | undefined): Promise<void> {
    if (sessionId === undefined) return this.readPost(req, res, undefined);
    const existing = this.find(req, sessionId);
    if (existing === undefined) return this.notFound(req, res, sessionId);
    // One body at a time per session, and none while its upstream is behind: the host's
    // uploads wait in their sockets, not in this process.
    return existing.readPostInTurn(() => this.readPost(req, res, sessionId));
  }

  private async readPost(req: IncomingMessage, res: ServerResponse, sessionId: string | undefined): Promise<void> {
    const body = await readMessageBody(req, this.ctx.maxBodyBytes ?? this.ctx.maxMessageBytes, {
      limitName: this.ctx.maxBodyBytes === undefined ? "limits.maxMessageBytes" : "limits.maxBodyBytes",
      maxBatch: this.ctx.maxBatch,
      budget: this.ctx.bodyBudget,
      maxNodes: this.ctx.maxMessageNodes,
    });
    if (!body.ok) {
      this.ctx.onproblem?.(body.problem, { server: this.ctx.server, kind: "streamable-http", sessionId });
      if (sessionId !== undefined && isAnswerOverLimit(body.problem))
        this.find(req, sessionId)?.onproblem?.(body.problem);
      else if (isAnswerOverLimit(body.problem))
        this.ctx.onStatelessAnswerTooLarge?.(body.problem, this.ctx.server, this.ctx.ownerOf?.(req));
      replyBodyFailure(req, res, body, this.ctx.closeTimeoutMs);
      return;
    }
    // Its one body holds one answer per id: a batch with an id twice would have the first
    // request's result lost behind the refusal of the second. Refused whole, before a session
    // is opened for it or anything of it is sent on.
    const twice = repeatedId(body.messages);
    if (twice !== undefined) {
      replyJsonRpcError(res, 400, JSONRPC.INVALID_REQUEST, `Invalid Request: ${twice}; nothing of it was sent`);
      return;
    }
    const version = headerValue(req.headers["mcp-protocol-version"]);
    const unsupported = body.messages.some((m) => methodOf(m) === "initialize")
      ? undefined
      : unsupportedProtocolVersion(version);
    if (unsupported !== undefined) {
      replyJsonRpcErrorTo(res, body, 400, JSONRPC.SERVER_ERROR, `${unsupported}; nothing of it was sent`);
      return;
    }
    const headers = forwardableMcpHeaders(req.headers) ?? {};
    let session = sessionId === undefined ? undefined : this.find(req, sessionId);
    if (sessionId !== undefined && session === undefined) return this.notFound(req, res, sessionId);
    if (session === undefined) {
      const initialize = body.messages.some((m) => methodOf(m) === "initialize" && requestIdOf(m) !== undefined);
      session = await this.open(res, body, !initialize, headers, clientAddress(req), this.ctx.ownerOf?.(req));
      if (session === undefined) return;
    }
    session.acceptPost(
      res,
      body.messages,
      body.batch,
      responseForm(headerValue(req.headers.accept)),
      { requestInfo: { headers } },
      version,
    );
  }

  private get(req: IncomingMessage, res: ServerResponse, sessionId: string | undefined): void {
    if (sessionId === undefined) {
      // No session, no stream to offer: 405 is how the spec lets a server decline the GET.
      replyJsonRpcError(res, 405, JSONRPC.SERVER_ERROR, "GET needs an Mcp-Session-Id; stateless hosts use POST only", {
        allow: "POST",
      });
      return;
    }
    if (!acceptsEventStream(headerValue(req.headers.accept))) {
      replyJsonRpcError(res, 406, JSONRPC.SERVER_ERROR, "GET opens an SSE stream: Accept must allow text/event-stream");
      return;
    }
    const session = this.find(req, sessionId);
    if (session === undefined) {
      this.notFound(req, res, sessionId);
      return;
    }
    session.acceptGet(res, headerValue(req.headers["last-event-id"]), headerValue(req.headers["mcp-protocol-version"]));
  }

  private async delete(req: IncomingMessage, res: ServerResponse, sessionId: string | undefined): Promise<void> {
    if (sessionId === undefined) {
      replyJsonRpcError(
        res,
        400,
        JSONRPC.INVALID_REQUEST,
        "DELETE needs the Mcp-Session-Id header of the session to end",
      );
      return;
    }
    const session = this.find(req, sessionId);
    if (session === undefined) return this.notFound(req, res, sessionId);
    await session.close();
    res.writeHead(200).end();
  }

  /** The live session `sessionId` names, if the request's owner is the one who opened it. */
  private find(req: IncomingMessage, sessionId: string): StreamableHttpHostSession | undefined {
    const session = this.live.get(sessionId);
    if (session === undefined) return undefined;
    return sameOwner(this.owners.get(sessionId), this.ctx.ownerOf?.(req)) ? session : undefined;
  }

  /** Creates a session, takes a slot for it and hands it to the proxy; answers the host on failure. */
  private async open(
    res: ServerResponse,
    body: { readonly messages: readonly unknown[]; readonly batch: boolean },
    stateless: boolean,
    headers: Record<string, string>,
    client: string,
    owner: SessionOwner,
  ): Promise<StreamableHttpHostSession | undefined> {
    // A stateful session its host may have left without a DELETE: its slot can go to a new one.
    let made: StreamableHttpHostSession | undefined;
    const release = this.ctx.slots.acquire(
      client,
      stateless ? undefined : { idleSince: () => made?.idleSince(), replace: (why) => made?.reap(`replaced: ${why}`) },
    );
    if (release === null) {
      replySessionLimit(res, this.ctx.maxSessions, body);
      return undefined;
    }
    const sessionId = stateless ? undefined : randomUUID();
    const session = new StreamableHttpHostSession({
      sessionId,
      stateless,
      sseKeepAliveMs: this.ctx.sseKeepAliveMs,
      idleTimeoutMs: this.options.idleTimeoutMs,
      maxQueuedMessages: this.options.maxQueuedMessages,
      maxQueuedBytes: this.options.maxQueuedBytes,
      lazySseWindowMs: this.options.lazySseWindowMs,
      sseReplayBytes: this.options.sseReplayBytes,
    });
    made = session;
    this.all.add(session);
    if (sessionId !== undefined) {
      this.live.set(sessionId, session);
      this.owners.set(sessionId, owner);
    }
    session.onClosed(() => {
      release();
      this.all.delete(session);
      if (sessionId !== undefined) {
        this.live.delete(sessionId);
        this.owners.delete(sessionId);
      }
    });
    const info: HostSessionInfo = {
      server: this.ctx.server,
      kind: "streamable-http",
      stateless,
      headers,
      sessionId,
      owner,
    };
    try {
      await this.ctx.onSession(session, info);
    } catch (error) {
      void session.close();
      const why = error instanceof Error ? error.message : String(error);
      replyJsonRpcErrorTo(
        res,
        body,
        502,
        JSONRPC.UPSTREAM_UNAVAILABLE,
        `Could not connect server "${this.ctx.server}": ${why}`,
      );
      return undefined;
    }
    if (session.isClosed) {
      replyJsonRpcErrorTo(
        res,
        body,
        502,
        JSONRPC.UPSTREAM_UNAVAILABLE,
        `Server "${this.ctx.server}" closed the session before it started`,
      );
      return undefined;
    }
    return session;
  }

  private notFound(req: IncomingMessage, res: ServerResponse, sessionId: string): void {
    refuse(
      req,
      res,
      this.ctx.closeTimeoutMs,
      404,
      JSONRPC.INVALID_REQUEST,
      `Session not found: ${sessionId.slice(0, 64)} (it ended or never existed; start a new one with initialize)`,
    );
  }
}

/**
 * Why a later request of the body cannot be told apart from an earlier one, if one cannot: the
 * same id, or two integers past 2^53 that read as one number (the proxy routes by that number).
 */
function repeatedId(messages: readonly unknown[]): string | undefined {
  const seen = new Map<string, string>();
  for (const message of messages) {
    const id = requestIdOf(message);
    if (id === undefined) continue;
    const key = idKey(id);
    const text = idTextOf(message as { id: RequestId });
    const earlier = seen.get(key);
    if (earlier === undefined) seen.set(key, text);
    else if (earlier === text) return `id ${text} is used twice in one batch`;
    else return `ids ${earlier} and ${text} of one batch read as one number (integers past 2^53 are not exact)`;
  }
  return undefined;
}
