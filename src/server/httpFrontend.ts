/**
 * The HTTP listener behind `serve`: for each server NAME, streamable HTTP at
 * `/mcp/NAME`, legacy SSE at `/sse/NAME` + `/messages/NAME`, WebSocket at `/ws/NAME`; and
 * `/healthz`, `/metrics`, `/report`. This file only routes: the security checks are in
 * requestGuard.ts, the session limit in sessionSlots.ts, and each transport's HTTP handling
 * in src/transports/host/ (one concept per file, so no single file grows to hold every
 * transport's HTTP handling).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { DEFAULT_LIMITS } from "../config/defaults.js";
import { BodyBudget } from "../transports/host/bodyBudget.js";
import type { HostEndpointContext, ProblemSite } from "../transports/host/hostSession.js";
import type { FramingProblem } from "../transports/types.js";
import { replyJson, replyJsonRpcError, replyOnSocket } from "../transports/host/httpReplies.js";
import { discardBody, refuse } from "../transports/host/refuse.js";
import { clientAddress } from "../transports/host/clientAddress.js";
import { SseEndpoint } from "../transports/host/sseHost.js";
import { StreamableHttpEndpoint } from "../transports/host/streamableHttpEndpoint.js";
import { WsEndpoint } from "../transports/host/wsHost.js";
import { DEFAULT_HOST } from "../config/defaults.js";
import { JSONRPC } from "../errors/jsonRpcCodes.js";
import {
  resolveFrontendOptions,
  type HttpDocument,
  type HttpFrontendOptions,
  type ResolvedFrontendOptions,
} from "./frontendOptions.js";
import { throttled } from "../observe/repeatedProblem.js";
import { guardConnections, serverOptions } from "./connectionLimits.js";
import { applyCors } from "./cors.js";
import {
  bearerOwner,
  checkRequest,
  contentCodingRefusal,
  isAuthorized,
  pageRefusal,
  type Refusal,
} from "./requestGuard.js";
import { route } from "./routes.js";
import { SessionCounter } from "./sessionSlots.js";

export type { HttpFrontendOptions } from "./frontendOptions.js";

export interface HttpFrontend {
  /** Binds (default host 127.0.0.1; port 0 picks a free one) and resolves with where it listens. */
  listen(port: number, host?: string): Promise<{ url: string; port: number }>;
  /**
   * Stops accepting connections; open ones (streams, requests in flight) go on. Graceful
   * shutdown calls this first, then `close()` once in-flight requests are done.
   */
  stopAccepting(): void;
  /** Stops accepting, ends every host session (their `onclose` fires), drops open connections. */
  close(): Promise<void>;
  readonly server: Server;
  /** Live host sessions of every kind (what `maxSessions` counts). */
  readonly sessionsInUse: number;
}

interface ServerEndpoints {
  readonly mcp: StreamableHttpEndpoint;
  readonly sse: SseEndpoint;
  readonly ws: WsEndpoint;
}

export function createHttpFrontend(options: HttpFrontendOptions): HttpFrontend {
  const opts = resolveFrontendOptions(options);
  // A session idle a tenth of the time that would reap it may make room for its client's next.
  const idleMs = opts.sessionIdleTimeoutMs > 0 ? opts.sessionIdleTimeoutMs : DEFAULT_LIMITS.sessionIdleMs;
  const slots = new SessionCounter(opts.maxSessions, opts.maxSessionsPerClient, idleMs / 10);
  const bodyBudget = new BodyBudget(opts.bodyBytesInFlight);
  // A body refused as unreadable (not JSON, too large, too costly to parse) is answered 4xx; the
  // operator is told too, throttled like other refusals (anyone can send them).
  const unreadable = throttled(opts.logger, "host sent a body that could not be read", {});
  const onproblem =
    opts.onproblem ??
    ((problem: FramingProblem, site: ProblemSite) =>
      unreadable({ kind: problem.kind, bytes: problem.bytes, server: site.server, transport: site.kind }));
  const endpoints = new Map<string, ServerEndpoints>();
  for (const server of opts.serverNames) {
    const ctx: HostEndpointContext = {
      server,
      ownerOf: (req) => bearerOwner(req.headers, opts),
      maxMessageBytes: opts.maxMessageBytes,
      // Named in 413 answers as limits.maxBodyBytes only when it was set on its own.
      ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: opts.maxBodyBytes }),
      maxBatch: opts.maxBatch,
      maxMessageNodes: opts.maxMessageNodes,
      bodyBudget,
      closeTimeoutMs: opts.closeTimeoutMs,
      sseKeepAliveMs: opts.sseKeepAliveMs,
      slots,
      maxSessions: opts.maxSessions,
      onSession: opts.onSession,
      onproblem,
      onStatelessAnswerTooLarge: opts.onStatelessAnswerTooLarge,
    };
    endpoints.set(server, {
      mcp: new StreamableHttpEndpoint(ctx, {
        idleTimeoutMs: opts.sessionIdleTimeoutMs,
        maxQueuedMessages: opts.maxQueuedMessages,
        maxQueuedBytes: opts.maxQueuedBytes,
        sseReplayBytes: opts.sseReplayBytes,
      }),
      sse: new SseEndpoint(ctx),
      ws: new WsEndpoint(ctx, { pingIntervalMs: opts.pingIntervalMs, closeTimeoutMs: opts.closeTimeoutMs }),
    });
  }

  // Anyone can send refused requests: a line for the first, then one per interval with the count.
  const refused = throttled(opts.logger, "request refused", {});
  const server = createServer(serverOptions(opts), (req, res) => {
    handle(req, res, opts, endpoints, slots, refused).catch((error: unknown) => {
      opts.logger.error("request failed", { method: req.method, url: req.url?.slice(0, 200), error: String(error) });
      if (!res.headersSent)
        replyJsonRpcError(res, 500, JSONRPC.INTERNAL_ERROR, "Internal error in the proxy's HTTP listener");
      else res.destroy();
    });
  });
  // Node answers `Expect: 100-continue` with `100 Continue` before the request handler runs,
  // inviting a client the door will refuse to send its body: the interim answer goes only to a
  // request that passes the door's checks; one refused gets its final answer instead.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    if (doorRefusal(req, opts, route(req.url ?? "/", opts.serverNames).path) === null) res.writeContinue();
    server.emit("request", req, res);
  });
  guardConnections(server, opts, opts.logger);
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) =>
    upgrade(req, socket, head, opts, endpoints, slots, refused),
  );
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // Malformed HTTP: answer 400 (408 past headersTimeoutMs / requestBodyTimeoutMs) when the
    // socket still can, never crash. Then the connection goes, reading side included: a body
    // answered 408 (one that waited unread for its session's turn) must not be read and
    // delivered after all — the client was told it failed.
    const status = error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? "408 Request Timeout" : "400 Bad Request";
    if (socket.writable)
      socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`, () => socket.destroy());
    else socket.destroy();
  });

  // `server.close(cb)` twice would wait for a 'close' event that already fired: close once,
  // and let both stopAccepting() and close() share the one event.
  let closedEvent: Promise<void> = Promise.resolve();
  const stopAccepting = (): void => {
    if (server.listening) server.close();
  };

  return {
    server,
    get sessionsInUse() {
      return slots.inUse;
    },
    stopAccepting,
    listen: (port, host = DEFAULT_HOST) =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          closedEvent = new Promise((closed) => server.once("close", () => closed()));
          const address = server.address();
          const bound = typeof address === "object" && address !== null ? address.port : port;
          const shown = host.includes(":") ? `[${host}]` : host;
          resolve({ url: `http://${shown}:${bound}`, port: bound });
        });
      }),
    close: async () => {
      stopAccepting();
      for (const endpoint of endpoints.values()) {
        endpoint.mcp.closeAll();
        endpoint.sse.closeAll();
        endpoint.ws.closeAll();
      }
      server.closeAllConnections();
      await closedEvent;
    },
  };
}

/** Why the door turns a request away (token, Host, Origin), or null; `/healthz` and preflights need no token. */
function doorRefusal(
  req: IncomingMessage,
  opts: ResolvedFrontendOptions,
  path: string,
): ReturnType<typeof checkRequest> {
  const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
  return checkRequest(req.headers, opts, path !== "/healthz" && !preflight);
}

/** A request that would open a new host session (so `maxSessionsPerClient` applies to it). */
function opensSession(req: IncomingMessage, kind: string): boolean {
  if (kind === "sse") return req.method === "GET";
  if (kind === "mcp") return req.method === "POST" && req.headers["mcp-session-id"] === undefined;
  return kind === "ws";
}

/** A stateless client has no session to close: it is told its requests in flight count too. */
function perClientMessage(max: number): string {
  return (
    `Too many sessions from this client: limits.maxSessionsPerClient (${max}) are open (a stateless request ` +
    `counts as one until it is answered); close some, retry later or raise limits.maxSessionsPerClient`
  );
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  opts: ResolvedFrontendOptions,
  endpoints: Map<string, ServerEndpoints>,
  slots: SessionCounter,
  refused: (fields: Record<string, unknown>) => void,
): Promise<void> {
  const { path, route: target } = route(req.url ?? "/", opts.serverNames);
  const method = req.method ?? "GET";
  const refusal = doorRefusal(req, opts, path);
  if (refusal !== null) return turnAway(req, res, opts, refused, path, refusal);
  if (applyCors(req, res, opts)) return;
  const posted = method === "POST" && (target.kind === "mcp" || target.kind === "messages");
  const streamed = method === "GET" && target.kind === "sse";
  const pageRefused = posted || streamed ? pageRefusal(req.headers, opts, posted ? "post" : "stream") : null;
  if (pageRefused !== null) return turnAway(req, res, opts, refused, path, pageRefused);
  const coded = posted ? contentCodingRefusal(req.headers) : null;
  if (coded !== null) return turnAway(req, res, opts, refused, path, coded);
  if (opensSession(req, target.kind) && !slots.clientMayOpen(clientAddress(req))) {
    refuse(req, res, opts.closeTimeoutMs, 503, JSONRPC.SERVER_ERROR, perClientMessage(opts.maxSessionsPerClient), {
      "retry-after": "1",
    });
    return;
  }
  switch (target.kind) {
    case "healthz":
      if (method !== "GET" && method !== "HEAD") return notAllowed(req, res, opts, "GET");
      // Anyone may ask (probes carry no token): a body sent with it is not read for long.
      discardBody(req, opts.closeTimeoutMs);
      replyJson(res, 200, await opts.health(isAuthorized(req.headers, opts)));
      return;
    case "metrics":
    case "report":
      return document(req, res, opts, target.kind === "metrics" ? opts.metrics : opts.report, path);
    case "mcp":
      return endpoints.get(target.server)!.mcp.handle(req, res);
    case "sse":
      if (method !== "GET") return notAllowed(req, res, opts, "GET");
      return endpoints.get(target.server)!.sse.open(req, res);
    case "messages":
      if (method !== "POST") return notAllowed(req, res, opts, "POST");
      return endpoints.get(target.server)!.sse.post(req, res, target.sessionId);
    case "ws":
      refuse(
        req,
        res,
        opts.closeTimeoutMs,
        426,
        JSONRPC.SERVER_ERROR,
        "This path speaks WebSocket (subprotocol mcp): send an Upgrade request",
        { upgrade: "websocket" },
      );
      return;
    case "unknown":
      refuse(
        req,
        res,
        opts.closeTimeoutMs,
        404,
        JSONRPC.SERVER_ERROR,
        `Not found: ${path.slice(0, 200)} (paths: /mcp/NAME, /sse/NAME, /messages/NAME, /ws/NAME, /healthz, ` +
          `/metrics, /report; NAME one of ${[...opts.serverNames].join(", ")})`,
      );
      return;
  }
}

/** Answers a request the guard refused, and logs it (throttled). */
function turnAway(
  req: IncomingMessage,
  res: ServerResponse,
  opts: ResolvedFrontendOptions,
  refused: (fields: Record<string, unknown>) => void,
  path: string,
  refusal: Refusal,
): void {
  refused({ status: refusal.status, path: path.slice(0, 200), reason: refusal.message });
  refuse(req, res, opts.closeTimeoutMs, refusal.status, refusal.code, refusal.message, refusal.headers);
}

async function document(
  req: IncomingMessage,
  res: ServerResponse,
  opts: ResolvedFrontendOptions,
  produce: (() => Promise<HttpDocument> | HttpDocument) | undefined,
  path: string,
): Promise<void> {
  if (produce === undefined) {
    const message = `Not found: ${path} is not enabled on this listener`;
    refuse(req, res, opts.closeTimeoutMs, 404, JSONRPC.SERVER_ERROR, message);
    return;
  }
  if (req.method !== "GET" && req.method !== "HEAD") return notAllowed(req, res, opts, "GET");
  // A document is made over several turns, during which Node reads on: requests pipelined behind
  // it would each start one, without bound. One at a time per connection; one more is refused
  // at once, closing the connection, so what a client sends ahead waits in its socket.
  if (producing.has(req.socket)) {
    const message = `One ${path} request at a time per connection: this one came before the last was answered`;
    refuse(req, res, opts.closeTimeoutMs, 503, JSONRPC.SERVER_ERROR, message, { connection: "close" });
    return;
  }
  discardBody(req, opts.closeTimeoutMs);
  producing.add(req.socket);
  let doc: HttpDocument;
  try {
    doc = await produce();
  } finally {
    producing.delete(req.socket);
  }
  res.writeHead(200, { "content-type": doc.contentType, "content-length": Buffer.byteLength(doc.body) });
  res.end(req.method === "HEAD" ? undefined : doc.body);
}

/** Connections with a `/metrics` or `/report` document being made for them. */
const producing = new WeakSet<object>();

function notAllowed(req: IncomingMessage, res: ServerResponse, opts: ResolvedFrontendOptions, allow: string): void {
  const message = `Method ${req.method} not allowed here (allowed: ${allow})`;
  refuse(req, res, opts.closeTimeoutMs, 405, JSONRPC.SERVER_ERROR, message, { allow });
}

function upgrade(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  opts: ResolvedFrontendOptions,
  endpoints: Map<string, ServerEndpoints>,
  slots: SessionCounter,
  refused: (fields: Record<string, unknown>) => void,
): void {
  // Until `ws` owns the socket, a reset from the peer must not become an uncaught error.
  socket.on("error", () => socket.destroy());
  const { path, route: target } = route(req.url ?? "/", opts.serverNames);
  const refusal = checkRequest(req.headers, opts, true) ?? pageRefusal(req.headers, opts, "stream");
  if (refusal !== null) {
    refused({ upgrade: true, status: refusal.status, path: path.slice(0, 200), reason: refusal.message });
    replyOnSocket(socket, opts.closeTimeoutMs, refusal.status, refusal.code, refusal.message, refusal.headers);
    return;
  }
  if (target.kind !== "ws") {
    replyOnSocket(
      socket,
      opts.closeTimeoutMs,
      404,
      JSONRPC.SERVER_ERROR,
      `No WebSocket endpoint at ${path.slice(0, 200)} (WebSocket is served at /ws/NAME)`,
    );
    return;
  }
  if (!slots.clientMayOpen(clientAddress(req))) {
    replyOnSocket(socket, opts.closeTimeoutMs, 503, JSONRPC.SERVER_ERROR, perClientMessage(opts.maxSessionsPerClient), {
      "retry-after": "1",
    });
    return;
  }
  endpoints.get(target.server)!.ws.upgrade(req, socket, head);
}
