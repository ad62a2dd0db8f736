/**
 * Small pieces every upstream transport shares: reading request ids from what goes out,
 * building the JSON-RPC error that answers a host when its request cannot reach the upstream
 * (every pending request gets an error naming the cause, never silence), and naming an
 * upstream URL in messages without leaking credentials.
 */
import { redactedExcerpt, redactSecrets, type SecretRedactor, secretRedactor } from "../../errors/redact.js";
import { isRawJsonString } from "../../wire/rawJson.js";
import { rememberOrigin } from "../wireOrigin.js";
import { isForwardedMcpHeader } from "../mcpHeaders.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Framed } from "../lineFraming.js";
import type { FramingProblem } from "../types.js";

/**
 * An upstream URL as it may appear in logs and errors: scheme, host and path. Userinfo and the
 * query string are dropped (both commonly carry API keys); header values never appear at all.
 */
export function describeUrl(url: URL | string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return "<invalid URL>";
  }
}

/**
 * The message of an error from `fetch`/sockets, with the cause's code (ECONNREFUSED, …), without
 * `secrets` (what the proxy sends the upstream): fetch quotes a header value it cannot send.
 */
/** Longest reason phrase quoted from an upstream's HTTP status line (standard ones are a few words). */
const REASON_PHRASE_CHARS = 100;

/**
 * `HTTP 503 Service Unavailable`: an upstream's status with its reason phrase, which is the
 * server's words — what it holds of `secrets` removed, and cut (a server may send kilobytes).
 */
export function statusLine(status: number, reason: string | undefined, secrets: Iterable<string | undefined>): string {
  return reason ? `HTTP ${status} ${redactedExcerpt(reason, REASON_PHRASE_CHARS, secrets)}` : `HTTP ${status}`;
}

const BAD_PORT =
  "fetch refuses this port, as browsers do (6000, 6665–6669, 10080 and other well-known ports): " +
  "serve the upstream on another port";

export function networkErrorText(error: unknown, secrets: Iterable<string | undefined> = []): string {
  return redactSecrets(errorText(error), secrets);
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const code =
    typeof cause === "object" && cause !== null
      ? (cause as { code?: unknown }).code
      : (error as { code?: unknown }).code;
  const causeMessage = cause instanceof Error ? cause.message : undefined;
  const text = [
    error.message,
    typeof code === "string" ? code : undefined,
    causeMessage && causeMessage !== error.message ? causeMessage : undefined,
    // undici's words for a port the Fetch standard blocks, as browsers do: nothing was sent.
    causeMessage === "bad port" ? BAD_PORT : undefined,
  ]
    .filter(Boolean)
    .join(": ");
  // fetch quotes the whole URL in some errors ("Request cannot be constructed from a URL that
  // includes credentials: http://user:pass@…?key=…"): URLs are shown without userinfo or
  // query, like everywhere else: secrets never appear in logs or errors.
  return text.replace(/\b(?:https?|wss?):\/\/[^\s"'<>]+/gi, (url) => describeUrl(url));
}

/** Callbacks a transport delivers framing results to. */
export interface FramedTarget {
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  onproblem?: ((problem: FramingProblem) => void) | undefined;
}

/**
 * Hands a framing result on. `secrets`: what the proxy sent this upstream, taken out of a problem's
 * excerpt (the log quotes it, and a server may echo what it was sent).
 */
export function deliverFramed(
  target: FramedTarget,
  framed: Framed,
  secrets?: () => Iterable<string | undefined>,
): void {
  if (framed.problem) target.onproblem?.(withoutSecrets(framed.problem, secrets));
  else target.onmessage?.(withoutSecretsInError(framed.message as JSONRPCMessage, secrets));
}

/**
 * An error answer with what the proxy sent this upstream (`secrets`: a token, a header value)
 * taken out of its strings and names: a server that quotes the credentials it was sent ("token
 * rejected: Bearer …") must not hand them to a host, which never had them. Every other message,
 * and an error answer quoting none of them, is the very same object; a rebuilt one keeps the
 * text of what it did not change (its numbers as written).
 */
export function withoutSecretsInError<T extends JSONRPCMessage | unknown[]>(
  message: T,
  secrets: (() => Iterable<string | undefined>) | undefined,
): T {
  if (Array.isArray(message)) {
    // A batch: each of its error answers as if it came alone (the array itself has no `error`).
    // An array inside it is no message (it goes no further than the log, excerpted without secrets).
    const items = message as unknown[];
    const cleaned = items.map((item) =>
      Array.isArray(item) ? item : withoutSecretsInError(item as JSONRPCMessage, secrets),
    );
    return (cleaned.every((item, i) => item === items[i]) ? message : cleaned) as T;
  }
  // What is not an object (a batch's `null` or number: JSON-RPC's to refuse, not ours) has no error.
  if (typeof message !== "object" || message === null) return message;
  const error = (message as { error?: unknown }).error;
  if (secrets === undefined || typeof error !== "object" || error === null) return message;
  const redactor = secretRedactor(secrets());
  if (!redactor.any) return message;
  const redacted = redactStrings(error, redactor);
  if (redacted === error) return message;
  const rebuilt = { ...message, error: redacted } as unknown as T;
  rememberOrigin(rebuilt, message);
  return rebuilt;
}

/** Deepest an error's `data` is searched for secrets; what lies deeper is replaced, never sent unsearched. */
const MAX_SEARCH_DEPTH = 1000;

/** `value` with secrets taken out of every string and name in it; the same value when none held one. */
function redactStrings(value: unknown, redactor: SecretRedactor, depth = 0): unknown {
  if (typeof value === "string") return redactor.redact(value);
  // A long string read as bytes (a big `data`): decoded to be searched, kept as bytes when clean.
  if (isRawJsonString(value)) {
    const text = value.value();
    const redacted = redactor.redact(text);
    return redacted === text ? value : redacted;
  }
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_SEARCH_DEPTH) return "[nested too deeply to be searched for secrets]";
  let changed = false;
  const out: Record<string, unknown> | unknown[] = Array.isArray(value) ? [] : Object.create(null);
  for (const [key, item] of Object.entries(value)) {
    const next = redactStrings(item, redactor, depth + 1);
    const name = Array.isArray(value) ? key : redactor.redact(key);
    if (next !== item || name !== key) changed = true;
    (out as Record<string, unknown>)[name] = next;
  }
  if (!changed) return value;
  return Array.isArray(value) ? out : { ...out };
}

/** `problem` with `secrets` taken out of its excerpt. */
export function withoutSecrets(
  problem: FramingProblem,
  secrets: (() => Iterable<string | undefined>) | undefined,
): FramingProblem {
  if (secrets === undefined || problem.excerpt === "") return problem;
  return { ...problem, excerpt: redactSecrets(problem.excerpt, secrets()) };
}

/**
 * The host's headers an HTTP upstream sends on (`ProxySendOptions.forwardHeaders`), checked once
 * more against the one rule (mcpHeaders.ts) so a caller cannot slip another header through.
 */
export function forwardableHeaders(forward: Readonly<Record<string, string>> | undefined): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(forward ?? {})) {
    const lower = name.toLowerCase();
    if (isForwardedMcpHeader(lower)) out.push([lower, value]);
  }
  return out;
}

/** `fetch` rejects network failures with a TypeError whose `cause` is the system error: the same shape here. */
export function fetchFailed(error: Error): Error {
  return new TypeError("fetch failed", { cause: error });
}
