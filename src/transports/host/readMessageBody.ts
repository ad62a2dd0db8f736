/**
 * Reads a POSTed JSON-RPC body (single message or batch) in linear time: chunks are collected
 * as they arrive and counted against the limit, joined once, decoded once, parsed once (large
 * messages are normal in MCP). Past the limit nothing more is kept; the rest of the
 * body is read and thrown away (up to a cut-off) so the client gets a clean 413 instead of a
 * reset socket.
 *
 * Messages come out exactly as `JSON.parse` gave them; the only check is the one routing needs
 * (is each element an object a JSON-RPC peer could have sent?).
 */
import { isUtf8 } from "node:buffer";
import type { IncomingMessage } from "node:http";
import { JSONRPC } from "../../errors/jsonRpcCodes.js";
import { isRequestId } from "../jsonrpc.js";
import { oversizedProblem } from "../lineFraming.js";
import type { FramingProblem, JSONRPCMessage } from "../types.js";
import { rememberWireText } from "../wireText.js";
import { holdsMoreNodes, topLevelOf } from "../../wire/jsonNodes.js";
import { withEnd, withStart } from "../../wire/lineSplitter.js";
import type { BodyBudget } from "./bodyBudget.js";

export type BodyReadResult =
  | { readonly ok: true; readonly messages: JSONRPCMessage[]; readonly batch: boolean; readonly bytes: number }
  | {
      readonly ok: false;
      readonly status: number;
      readonly problem: FramingProblem;
      readonly message: string;
      readonly code: number;
      /** The id, as written, of the request the error answers (none: `null`). */
      readonly idText?: string;
      /**
       * The body was refused before its end (far over the limit by what it sent): what
       * follows is thrown away, up to a bound, then its connection is cut (`refuse.ts`: `replyBodyFailure`).
       */
      readonly cut?: boolean;
    };

/** How much of a bad body is quoted in a problem report (never the whole content). */
const EXCERPT_CHARS = 120;

/**
 * A body refused for its size that its start shows to be an answer: the answer to a request of
 * the upstream's, which the session is to tell the upstream about (its bridge answers that
 * request with an error rather than leave it waiting — the one its id names, or, with none
 * seen, the one request waiting if there is only one).
 */
export function isAnswerOverLimit(problem: FramingProblem): boolean {
  return problem.kind === "too-large" && problem.answers === true;
}

/**
 * Past the limit, this many more bytes (or `maxMessageBytes` more, if larger) are read and
 * thrown away so the client can read its 413; beyond that the connection is dropped.
 */
export const MIN_DISCARD_BYTES = 8 * 1024 * 1024;

export interface BodyLimits {
  /** The setting `maxMessageBytes` comes from, as 413 answers name it. */
  readonly limitName?: string;
  /**
   * A batch of more messages is refused whole (413, JSON-RPC -32600 naming `limits.maxBatch`),
   * nothing of it delivered.
   */
  readonly maxBatch?: number | undefined;
  /**
   * What the body holds is taken from it while it is read and parsed; a body that does not fit
   * is refused (503), read no further than a body over the limit.
   */
  readonly budget?: BodyBudget | undefined;
  /**
   * A body of more nodes (objects, arrays, members, elements) is refused before it is parsed (413, JSON-RPC
   * -32003 naming `limits.maxMessageNodes`, under the request's id when its top level shows one).
   */
  readonly maxNodes?: number | undefined;
}

/**
 * A body that comes in many small chunks (`Transfer-Encoding: chunked`, a byte each) is copied
 * into slabs of this size past its first `CHUNKS_KEPT_AS_THEY_CAME` chunks: a Buffer kept per
 * chunk costs hundreds of bytes of its own, so a megabyte sent a byte a chunk held half a gigabyte.
 */
const SLAB_BYTES = 64 * 1024;
/** Chunks at least this large are kept as they came (a copy would cost more than their Buffer). */
const KEEP_AS_IS_BYTES = 16 * 1024;
/** The first chunks of every body are kept as they came: a body of one or a few (nearly all) is not copied. */
const CHUNKS_KEPT_AS_THEY_CAME = 8;

export function readMessageBody(
  req: IncomingMessage,
  maxMessageBytes: number,
  limits: BodyLimits = {},
): Promise<BodyReadResult> {
  const { limitName = "limits.maxMessageBytes", maxBatch = Number.POSITIVE_INFINITY, budget } = limits;
  const maxNodes = limits.maxNodes ?? Number.POSITIVE_INFINITY;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    /** Where small chunks are copied (see `SLAB_BYTES`), and how much of it is used. */
    let slab: Buffer | undefined;
    let slabUsed = 0;
    const closeSlab = (): void => {
      if (slab !== undefined && slabUsed > 0) chunks.push(slab.subarray(0, slabUsed));
      slab = undefined;
      slabUsed = 0;
    };
    const keep = (chunk: Buffer): void => {
      if (chunk.length >= KEEP_AS_IS_BYTES || chunks.length < CHUNKS_KEPT_AS_THEY_CAME) {
        closeSlab();
        chunks.push(chunk);
        return;
      }
      if (slab === undefined || slabUsed + chunk.length > slab.length) {
        closeSlab();
        slab = Buffer.allocUnsafe(SLAB_BYTES);
      }
      chunk.copy(slab, slabUsed);
      slabUsed += chunk.length;
    };
    let bytes = 0;
    let held = 0;
    let tooLarge = false;
    /** The body's two ends, for one over the limit: to tell an answer (the upstream waits on it) and its id. */
    let head: Buffer = Buffer.alloc(0);
    let tail: Buffer = Buffer.alloc(0);
    let overBudget = false;
    const cutOff = maxMessageBytes + Math.max(maxMessageBytes, MIN_DISCARD_BYTES);
    let cut = false;
    /**
     * Refused before its end (over the limit, so already dropped): the caller answers, then cuts
     * the connection (its end is not awaited).
     */
    const cutShort = (): void => {
      if (cut) return;
      cut = true;
      // What came last is the middle of the body, not its end: no id is read from it.
      refused(Buffer.alloc(0));
    };
    const drop = (): void => {
      chunks.length = 0;
      slab = undefined;
      slabUsed = 0;
      budget?.give(held);
      held = 0;
    };
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      // The body's two ends are kept as it comes, whatever is dropped later (over the limit, over the budget).
      head = withStart(head, chunk);
      if (!tooLarge && bytes > maxMessageBytes) {
        tooLarge = true;
        drop();
      }
      tail = withEnd(tail, chunk);
      if (!tooLarge && !overBudget && budget !== undefined && !budget.take(chunk.length)) {
        overBudget = true;
        drop();
      }
      if (tooLarge || overBudget) {
        if (bytes > cutOff) cutShort();
        return;
      }
      held += chunk.length;
      keep(chunk);
    });
    // A client that goes away mid-body: settle anyway (the answer goes nowhere, nothing leaks).
    const aborted = (): void => {
      drop();
      resolve(
        failure(400, { kind: "invalid-json", bytes, excerpt: "" }, "Request body ended early (client went away)"),
      );
    };
    // A body read late (it waited for its session's turn) may belong to a request that is
    // already gone — the client left, or limits.requestBodyTimeoutMs closed it: its events
    // have fired, none will come, and what it sent cannot be read any more.
    if (req.destroyed) {
      aborted();
      return;
    }
    req.on("error", aborted);
    req.on("close", () => {
      if (!req.complete) aborted();
    });
    /** A body over the limit or the budget, its end (`end`) read or not. */
    function refused(end: Buffer): void {
      if (tooLarge) {
        const message =
          `Message of ${bytes} bytes exceeds ${limitName} (${maxMessageBytes} bytes); raise ${limitName} to ` +
          "accept it";
        resolve(failure(413, oversizedProblem({ bytes, head, tail: end }), message, undefined, cut));
        return;
      }
      const limit = `limits.bodyBytesInFlight (${budget?.maxBytes} bytes)`;
      resolve(
        failure(
          503,
          { kind: "too-large", bytes, excerpt: "" },
          `Request bodies being read at once would exceed ${limit}; retry shortly, or raise it`,
          JSONRPC.SERVER_ERROR,
        ),
      );
    }
    req.on("end", () => {
      if (tooLarge || overBudget) {
        refused(tail);
        return;
      }
      closeSlab();
      const result = parseBody(Buffer.concat(chunks, bytes), maxBatch, maxNodes);
      drop();
      resolve(result);
    });
  });
}

function parseBody(body: Buffer, maxBatch: number, maxNodes: number): BodyReadResult {
  // JSON text is UTF-8 (RFC 8259 §8.1); decoding invalid bytes would introduce U+FFFD.
  if (!isUtf8(body)) {
    const excerpt = body.subarray(0, EXCERPT_CHARS).toString("latin1");
    return failure(
      400,
      { kind: "invalid-json", bytes: body.length, excerpt },
      "Parse error: request body is not valid UTF-8",
    );
  }
  // Counted before the parse, which is what such a body would hold the loop with.
  if (holdsMoreNodes(body, maxNodes)) {
    const excerpt = body.subarray(0, EXCERPT_CHARS).toString("utf8");
    const top = topLevelOf(body);
    return {
      ...failure(
        413,
        { kind: "too-complex", bytes: body.length, excerpt, limit: maxNodes },
        `Message too large: more than limits.maxMessageNodes (${maxNodes}) objects, arrays, members and elements ` +
          `in one body; nothing of it was forwarded`,
        JSONRPC.MESSAGE_TOO_LARGE,
      ),
      // A request is answered under its id; a response or a batch under none.
      ...(top.method && top.idText !== undefined ? { idText: top.idText } : {}),
    };
  }
  const decoded = body.toString("utf8");
  // A UTF-8 BOM is not JSON (RFC 8259 §8.1 lets a parser ignore it; JSON.parse does not).
  const text = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return failure(
      400,
      { kind: "invalid-json", bytes: body.length, excerpt: text.slice(0, EXCERPT_CHARS) },
      `Parse error: ${why}`,
    );
  }
  const batch = Array.isArray(parsed);
  rememberWireText(parsed, text);
  const items: unknown[] = batch ? (parsed as unknown[]) : [parsed];
  if (items.length > maxBatch) {
    return failure(
      413,
      { kind: "too-large", bytes: body.length, excerpt: "" },
      `Invalid Request: a batch of ${items.length} messages exceeds limits.maxBatch (${maxBatch}); nothing of it was ` +
        `forwarded — send smaller batches`,
      JSONRPC.INVALID_REQUEST,
    );
  }
  const bad = items.findIndex((item) => !isMessageShaped(item));
  if (items.length === 0 || bad !== -1) {
    const where = items.length === 0 ? "an empty batch" : batch ? `batch element ${bad}` : "the body";
    return failure(
      400,
      { kind: "not-jsonrpc", bytes: body.length, excerpt: text.slice(0, EXCERPT_CHARS) },
      `Invalid Request: ${where} is not a JSON-RPC 2.0 request, notification or response`,
    );
  }
  return { ok: true, messages: items as JSONRPCMessage[], batch, bytes: body.length };
}

/**
 * A request/notification has a string `method` (and a request a string or number `id`: one that
 * is neither would make it neither a request to answer nor a notification); a response has an
 * `id` and `result`/`error`.
 */
function isMessageShaped(item: unknown): boolean {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return false;
  const obj = item as Record<string, unknown>;
  if (typeof obj.method === "string") return !("id" in obj) || isRequestId(obj.id);
  return "id" in obj && ("result" in obj || "error" in obj);
}

/** The JSON-RPC error code a host gets for a body it sent that could not be delivered. */
export function jsonRpcCodeFor(problem: FramingProblem): number {
  if (problem.kind === "too-large") return JSONRPC.MESSAGE_TOO_LARGE;
  return problem.kind === "invalid-json" ? JSONRPC.PARSE_ERROR : JSONRPC.INVALID_REQUEST;
}

function failure(
  status: number,
  problem: FramingProblem,
  message: string,
  code: number = jsonRpcCodeFor(problem),
  cut = false,
): BodyReadResult {
  return cut ? { ok: false, status, problem, message, code, cut } : { ok: false, status, problem, message, code };
}
