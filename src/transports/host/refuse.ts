/**
 * Answering a request the listener will not serve (not authorized, wrong method, unknown path
 * or session, too many sessions), or one it answers without reading what it sent (a preflight,
 * `/healthz`). A body the client is still sending is read and thrown away only as far as
 * lets the client read the answer instead of a reset — `MIN_DISCARD_BYTES`, for at most
 * `limits.closeTimeoutMs` — then the connection is cut: a client refused at the door cannot make
 * the proxy read gigabytes, nor hold a connection for `requestBodyTimeoutMs`. A request with no
 * body, or one already read, keeps its keep-alive connection.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type HeaderMap, replyJsonRpcError } from "./httpReplies.js";
import { discardThenCut } from "./discard.js";
import type { BodyReadResult } from "./readMessageBody.js";

export function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  closeTimeoutMs: number,
  status: number,
  code: number,
  message: string,
  headers: HeaderMap = {},
): void {
  discardBody(req, closeTimeoutMs);
  replyJsonRpcError(res, status, code, message, headers);
}

/**
 * Answers a body that could not be taken. One refused before its end (`cut`) is answered with
 * `Connection: close`; what the client still sends is then read and thrown away as for a request
 * refused at the door, so it can read the answer rather than a reset, and the connection is cut.
 */
export function replyBodyFailure(
  req: IncomingMessage,
  res: ServerResponse,
  body: Extract<BodyReadResult, { ok: false }>,
  closeTimeoutMs: number,
): void {
  replyJsonRpcError(res, body.status, body.code, body.message, body.cut ? { connection: "close" } : {}, body.idText);
  if (body.cut) discardThenCut(req, req.socket, closeTimeoutMs);
}

/**
 * For a request answered without its body (refused, a preflight, `/healthz`): the body is read
 * and thrown away up to `MIN_DISCARD_BYTES` for at most `closeTimeoutMs`, then the connection is
 * cut; a request with no body keeps its keep-alive connection.
 */
export function discardBody(req: IncomingMessage, closeTimeoutMs: number): void {
  if (req.complete || !bodyDeclared(req)) {
    req.resume();
    return;
  }
  discardThenCut(req, req.socket, closeTimeoutMs);
}

/** Whether the request says a body follows its headers. */
function bodyDeclared(req: IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  return Number(req.headers["content-length"] ?? 0) !== 0;
}
