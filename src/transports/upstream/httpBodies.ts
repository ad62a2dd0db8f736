/**
 * Reading HTTP response bodies from an upstream, linearly and within `maxMessageBytes`:
 * SSE streams through `SseParser` (never `response.json()`/`text()`, which would hold a 50 MiB
 * event several times over), JSON bodies joined once, error bodies only as far as an excerpt.
 */
import { headerSecrets, redactedExcerpt, urlSecrets } from "../../errors/redact.js";
import { parseMediaType } from "../../normalize/mediaType.js";
import { oversizedProblem, parseJsonPieces, parseJsonText, type Framed } from "../lineFraming.js";
import { SseParser, type SseEvent, type SseProblem } from "../sseParser.js";
import type { FramingProblem } from "../types.js";
import type { ReadGate } from "../readGate.js";
import type { BodyReaderLike, BodyStreamLike, ResponseLike } from "./nodeFetch.js";
import type { AbortLike } from "./postAbort.js";
import { withStart } from "../../wire/lineSplitter.js";

/** Bytes of an error response body read for the error message. */
export const ERROR_BODY_EXCERPT_BYTES = 2048;

/**
 * Reads an SSE body to its end, calling `onEvent` for each event, and `onProblem` for each
 * `message` event that could not be read (too large, not UTF-8: an event of another type is no
 * message, whatever its size, and answers nothing). Resolves at end of stream; rejects with
 * `UnendedEventError` when an event runs on `cutPastBytes` past the limit without end (the body
 * is cancelled). `gate`, when given, is passed before each read (see HttpFlowControl).
 */
export async function readSseBody(
  body: BodyStreamLike,
  limits: SseBodyLimits,
  handlers: { onEvent(event: SseEvent): void; onProblem(problem: SseProblem): void; onRetry?(ms: number): void },
  signal?: AbortLike,
  gate?: ReadGate,
): Promise<void> {
  const parser = new SseParser({ maxEventBytes: limits.maxEventBytes, cutPastBytes: limits.cutPastBytes });
  const reader = body.getReader();
  const stop = cancelOnAbort(reader, signal);
  try {
    for (;;) {
      // Closed while the host is behind: the body is not pulled, so the upstream's writes wait.
      const closed = gate?.passage();
      if (closed !== undefined) await closed;
      const { done, value } = await reader.read();
      const items = done ? parser.end() : parser.push(value);
      for (const item of items) {
        if (item.event) handlers.onEvent(item.event);
        else if (item.problem) {
          if (item.problem.type === "message") handlers.onProblem(item.problem);
          if (item.problem.unended) {
            // The server may go on sending: its body is cancelled, not left to fill the socket.
            await reader.cancel().catch(() => {});
            throw new UnendedEventError(item.problem.bytes, limits);
          }
        } else handlers.onRetry?.(item.retry);
      }
      if (done) return;
    }
  } finally {
    stop();
    reader.releaseLock();
  }
}

/** The sizes an SSE body is read within. */
export interface SseBodyLimits {
  /** `limits.maxMessageBytes`: a larger event is skipped (reported by its ends). */
  readonly maxEventBytes: number;
  /** `limits.maxSkippedMessageBytes`: how far past it an event may run without end; never cut when absent. */
  readonly cutPastBytes?: number | undefined;
}

/** Why a stream was cut: an event ran on far past the limit and had not ended. */
export class UnendedEventError extends Error {
  constructor(bytes: number, limits: SseBodyLimits) {
    super(
      `an event ran on for ${bytes} bytes without end (limits.maxMessageBytes is ${limits.maxEventBytes}, ` +
        `limits.maxSkippedMessageBytes ${limits.cutPastBytes}): the proxy cut the stream`,
    );
  }
}

/**
 * Cancels a body reader when `signal` aborts. Aborting the fetch alone does not always end a
 * pending read of a response that already arrived (seen with undici on Node 20 behind the
 * SDK's server), and `close()` must never wait on an idle stream.
 */
function cancelOnAbort(reader: BodyReaderLike, signal: AbortLike | undefined): () => void {
  if (!signal) return () => {};
  const cancel = (): void => void reader.cancel(signal.reason).catch(() => {});
  if (signal.aborted) cancel();
  signal.addEventListener("abort", cancel, { once: true });
  return () => signal.removeEventListener("abort", cancel);
}

/**
 * An SSE `message` event's data as a JSON-RPC message, exactly as `JSON.parse` gives it (not
 * parsed when it holds more than `maxNodes` nodes).
 */
export function framedFromEvent(event: SseEvent, maxNodes?: number): Framed | undefined {
  if (event.data === "") return undefined; // priming / keep-alive events carry no message
  const framed = parseJsonText(event.data, 0, maxNodes);
  if (!framed.problem) return framed;
  return { problem: { ...framed.problem, bytes: Buffer.byteLength(event.data) } };
}

export function framingProblemOf(problem: SseProblem): FramingProblem {
  return {
    kind: problem.kind === "too-large" ? "too-large" : "invalid-json",
    bytes: problem.bytes,
    ...(problem.id === undefined ? {} : { id: problem.id }),
    ...(problem.asks === true ? { asks: true } : {}),
    excerpt: problem.excerpt,
  };
}

/**
 * Reads a JSON body (one message or a batch array): chunks joined once (with `rawStringBytes`,
 * long payloads are read raw from the chunks, never joined — see lineFraming). Over the limit, the
 * rest is not read and a `too-large` problem (with the id, if the start shows it) is returned.
 */
export async function readJsonBody(
  body: BodyStreamLike,
  maxBytes: number,
  signal?: AbortLike,
  rawStringBytes?: number,
  maxNodes?: number,
): Promise<Framed | undefined> {
  const reader = body.getReader();
  const stop = cancelOnAbort(reader, signal);
  const parts: Uint8Array[] = [];
  let bytes = 0;
  /** The body's start, kept as it comes: one over the limit is known by it. */
  let head: Buffer = Buffer.alloc(0);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      head = withStart(head, value);
      if (bytes > maxBytes) {
        await reader.cancel();
        // Known by its start only: the read of its end is given up with the rest.
        return { problem: oversizedProblem({ bytes, head, tail: Buffer.alloc(0) }) };
      }
      parts.push(value);
    }
  } finally {
    stop();
    reader.releaseLock();
  }
  if (signal?.aborted) return undefined;
  if (parts.length === 0) return undefined;
  const pieces = parts.map((part) => Buffer.from(part.buffer, part.byteOffset, part.byteLength));
  return parseJsonPieces(pieces, bytes, rawStringBytes, undefined, maxNodes);
}

/**
 * What the proxy must never quote back from a server: its URL's credentials, the configured
 * header values, the injected fetch's secrets.
 */
export function sentSecrets(options: {
  url: string | URL;
  headers?: Readonly<Record<string, string>> | undefined;
  secrets?: (() => Iterable<string | undefined>) | undefined;
}): Array<string | undefined> {
  return [...urlSecrets(options.url), ...headerSecrets(options.headers), ...(options.secrets?.() ?? [])];
}

/**
 * The reason an upstream gave with an error status: a JSON-RPC error's `message` if the body is
 * one, else a short excerpt of a plain-text body. HTML pages and other types are not quoted.
 * Whatever of `secrets` (the values the proxy sent: a server may echo them) it holds is removed.
 */
export async function errorBodyReason(
  response: ResponseLike,
  secrets: Iterable<string | undefined>,
): Promise<string | undefined> {
  const reason = await bodyReason(response);
  return reason === undefined ? undefined : redactedExcerpt(reason, ERROR_REASON_CHARS, secrets);
}

/** Longest reason quoted from an error answer, in characters. */
const ERROR_REASON_CHARS = 300;

async function bodyReason(response: ResponseLike): Promise<string | undefined> {
  const type = mediaTypeEssence(response.headers.get("content-type"));
  if (!response.body) return undefined;
  if (type !== "application/json" && type !== "text/plain") {
    await response.body.cancel().catch(() => {});
    return undefined;
  }
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let bytes = 0;
  try {
    while (bytes < ERROR_BODY_EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      bytes += value.byteLength;
    }
    await reader.cancel();
  } catch {
    return undefined;
  }
  const text = Buffer.concat(parts).subarray(0, ERROR_BODY_EXCERPT_BYTES).toString("utf8").trim();
  if (type === "application/json") {
    try {
      const parsed = JSON.parse(text) as { error?: { message?: unknown } };
      if (typeof parsed.error?.message === "string") return parsed.error.message;
      // Written again, its strings escaped one way only (the secrets' own forms are matched too).
      return JSON.stringify(parsed);
    } catch {
      // fall through to the excerpt
    }
  }
  return text === "" ? undefined : text;
}

/** `type/subtype` of a Content-Type, parsed (never matched by substring). */
export function mediaTypeEssence(contentType: string | null): string | undefined {
  return parseMediaType(contentType)?.essence;
}
