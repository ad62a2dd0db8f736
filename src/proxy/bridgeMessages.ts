/**
 * What the bridge asks of one message: is it JSON-RPC at all, can a response reach a host as it
 * is, which request is still owed an answer when one cannot go, and how an unexpected one is
 * quoted in a log line (short, secrets taken out).
 */
import { JSONRPC } from "../errors/jsonRpcCodes.js";
import { redactedExcerpt } from "../errors/redact.js";
import { idAsWritten } from "../transports/idAsWritten.js";
import { isNotification, isObj, isRequest, isResponse, type RequestId } from "../transports/jsonrpc.js";
import type { FramingProblem } from "../transports/types.js";

/** What an upstream request is answered once `max` of its requests wait for hosts (limits.maxUpstreamRequests). */
export function tooManyAskedError(max: number): string {
  return `too many requests waiting for the host: limits.maxUpstreamRequests (${max})`;
}

/** Characters of an unexpected message quoted in a log line. */
const EXCERPT_CHARS = 200;
/** How far past the excerpt a secret is looked for, so one cut by it is still found. */
const SECRET_SEARCH_CHARS = 8192;

/** A JSON-RPC request, notification or response (JSON-RPC 2.0 §4–5); anything else is not forwarded. */
export function isMessage(msg: unknown): boolean {
  return isRequest(msg) || isNotification(msg) || isResponse(msg);
}

/**
 * Why a response cannot reach a host as it is, or undefined when it can: JSON-RPC 2.0 §5.1
 * (an error is an object with an integer `code` and a string `message`) and MCP (every result is
 * an object).
 */
export function invalidAnswer(msg: Record<string, unknown>): string | undefined {
  if ("error" in msg) {
    const error = msg.error;
    if (!isObj(error)) return "its error is not an object";
    if (!Number.isInteger(error.code)) return "its error has no integer code";
    if (typeof error.message !== "string") return "its error has no string message";
    return undefined;
  }
  if (!isObj(msg.result)) return "its result is not an object";
  return undefined;
}

/** The request an answer was for, when one the host could not take must be replaced by an error. */
export interface OwedAnswer {
  readonly id: RequestId;
  /** The id as the request wrote it (`idAsWritten`). */
  readonly written: RequestId;
}

/** For a response (not itself an internal error the proxy made): its request, owed an answer if it cannot go. */
export function answerOwed(msg: unknown): OwedAnswer | undefined {
  if (!isResponse(msg) || ("error" in msg && isObj(msg.error) && msg.error.code === JSONRPC.INTERNAL_ERROR))
    return undefined;
  return { id: msg.id, written: idAsWritten(msg) };
}

/** A short, safe rendering of an unexpected value for a log line, what `secrets` holds taken out. */
export function excerpt(value: unknown, secrets: Iterable<string | undefined> = []): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  // Cut far past the excerpt's length first, so a secret across the cut is still found whole.
  return redactedExcerpt(text.slice(0, EXCERPT_CHARS + SECRET_SEARCH_CHARS), EXCERPT_CHARS, secrets);
}

/**
 * Why an upstream's answer was dropped unread, for the error its request gets instead (`-32003`):
 * over `limits.maxMessageBytes`, or of more nodes than `limits.maxUpstreamMessageNodes`. Undefined
 * for a problem of another kind.
 */
export function unreadAnswerReason(problem: FramingProblem): string | undefined {
  if (problem.kind === "too-large" && problem.unended === true)
    return (
      `the upstream's answer ran on for ${problem.bytes} bytes without end, over limits.maxMessageBytes and ` +
      "limits.maxSkippedMessageBytes: it was cut, and the upstream connection ended"
    );
  if (problem.kind === "too-large")
    return `the upstream's answer of ${problem.bytes} bytes is over limits.maxMessageBytes`;
  if (problem.kind !== "too-complex") return undefined;
  return (
    `the upstream's answer of ${problem.bytes} bytes holds more than limits.maxUpstreamMessageNodes ` +
    `(${problem.limit}) objects, arrays, members and elements; not read`
  );
}

/** Why a request of the upstream's own went to no host: too large, or too costly to parse. */
export function unreadRequestReason(problem: FramingProblem): string | undefined {
  if (problem.kind === "too-large")
    return `the request of ${problem.bytes} bytes is over the proxy's limits.maxMessageBytes; not sent to the host`;
  if (problem.kind === "too-complex")
    return (
      `the request holds more than the proxy's limits.maxUpstreamMessageNodes (${problem.limit}) objects, arrays, ` +
      "members and elements; not sent to the host"
    );
  return undefined;
}
