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
import { type BodyReadResult, MIN_DISCARD_BYTES } from "./readMessageBody.js";

/**
 * What is read and thrown away of a body refused before its end, once answered: a client (undici's
 * `fetch`, the SDK) that reads the answer only once it has sent its body gets a reset instead of
 * the 413 when cut sooner. Bounded still, and by `closeTimeoutMs`.
 */
export const CUT_BODY_DISCARD_BYTES = 8 * MIN_DISCARD_BYTES;

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
 * Answers a body that could not be taken. One refused before its end (`cut`) is answered at
 * once; what the client still sends is read and thrown away (`CUT_BODY_DISCARD_BYTES`, for at
 * most `closeTimeoutMs`), so it can read the answer rather than a reset: a body that ends within
 * that keeps its connection, a longer one has it cut. (`Connection: close` would have Node end
 * the connection under a client still sending: a reset.)
 */
export function replyBodyFailure(
  req: IncomingMessage,
  res: ServerResponse,
  body: Extract<BodyReadResult, { ok: false }>,
  closeTimeoutMs: number,
): void {
  replyJsonRpcError(res, body.status, body.code, body.message, {}, body.idText);
  if (body.cut) discardThenCut(req, req.socket, closeTimeoutMs, CUT_BODY_DISCARD_BYTES);
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
