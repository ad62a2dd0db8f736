/**
 * Answers that host-side HTTP endpoints give without a session: JSON-RPC error bodies
 * (`id: null`, as the SDK's transports and the MCP spec's examples do when no request id could
 * be read; under the requests' own ids once a body was read), with the HTTP status that says
 * what is at fault.
 */
import { JSONRPC } from "../../errors/jsonRpcCodes.js";
import { STATUS_CODES, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { idTextOf } from "../idAsWritten.js";
import { requestIdOf, type RequestId } from "../jsonrpc.js";
import { writeWire, type WireJson } from "../wireJson.js";
import { discardThenCut } from "./discard.js";

export type HeaderMap = Record<string, string | number | readonly string[]>;

/** `idText`: the id of the request it answers, as written (JSON text); `null` when none could be read. */
export function replyJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: HeaderMap = {},
  idText = "null",
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = `{"jsonrpc":"2.0","id":${idText},"error":${JSON.stringify({ code, message })}}`;
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The error for every request of a body that was read (one error for a single request, an array
 * of one per request for a batch, each under its request's id as written): a client that matches
 * answers by id finds its own. A body of notifications only gets the error under `id: null`.
 */
export function replyJsonRpcErrorTo(
  res: ServerResponse,
  body: { readonly messages: readonly unknown[]; readonly batch: boolean },
  status: number,
  code: number,
  message: string,
  headers: HeaderMap = {},
): void {
  const ids = body.messages.filter((m) => requestIdOf(m) !== undefined) as Array<{ id: RequestId }>;
  if (ids.length === 0 || res.headersSent) {
    replyJsonRpcError(res, status, code, message, headers);
    return;
  }
  const error = JSON.stringify({ code, message });
  const answers = ids.map((m) => `{"jsonrpc":"2.0","id":${idTextOf(m)},"error":${error}}`);
  const text = body.batch ? `[${answers.join(",")}]` : answers[0]!;
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export function replyJson(res: ServerResponse, status: number, value: unknown, headers: HeaderMap = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/**
 * 200 with messages already encoded by `encodeWire`: one of them as the body, or (`array`) all
 * of them as a JSON array, the answer to a batch. The length is counted from the encoded pieces,
 * so nothing is serialized twice and raw-string pieces are never joined into one buffer.
 */
export function replyJsonWire(
  res: ServerResponse,
  wires: readonly WireJson[],
  array: boolean,
  headers: HeaderMap = {},
): void {
  if (!array && wires.length === 1 && typeof wires[0] === "string") {
    const text = wires[0];
    res.writeHead(200, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  let length = array ? Math.max(1, wires.length) + 1 : 0;
  for (const wire of wires) length += typeof wire === "string" ? Buffer.byteLength(wire) : wire.byteLength;
  res.writeHead(200, { ...headers, "content-type": "application/json", "content-length": length });
  res.cork();
  if (array) res.write("[");
  wires.forEach((wire, i) => {
    if (array && i > 0) res.write(",");
    writeWire(res, wire);
  });
  res.end(array ? "]" : undefined);
}

/** The first value of a header node may have given as a list (duplicated headers). */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** 503 when every `limits.maxSessions` slot is taken; the host may retry. */
/** 503 at `limits.maxSessions`, under the ids of the requests of `body` when it was read. */
export function replySessionLimit(
  res: ServerResponse,
  maxSessions: number,
  body: { readonly messages: readonly unknown[]; readonly batch: boolean } = { messages: [], batch: false },
): void {
  replyJsonRpcErrorTo(res, body, 503, JSONRPC.SERVER_ERROR, sessionLimitMessage(maxSessions), { "retry-after": "1" });
}

export function sessionLimitMessage(maxSessions: number): string {
  return `Too many sessions: limits.maxSessions (${maxSessions}) are open; retry later or raise limits.maxSessions`;
}

/**
 * An answer written straight to a socket (an upgrade refused before `ws` takes it), then the
 * connection cut: once the answer has gone, or after `closeTimeoutMs` for a client that does not
 * read it. What the client sends meanwhile is thrown away (`discard.ts`).
 * A socket only ended waits for the client to end its side too — a client that never does held
 * the connection (and a slot of `limits.maxConnections`) for good.
 */
export function replyOnSocket(
  socket: Duplex,
  closeTimeoutMs: number,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } });
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}`,
    "connection: close",
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  const cut = discardThenCut(socket, socket, closeTimeoutMs);
  socket.resume();
  // Flushed: the client has the answer; the connection goes whether or not it ends its side.
  socket.end(`${lines.join("\r\n")}\r\n\r\n${body}`, cut);
}
