/**
 * The fetch the OAuth requests use (discovery, registration, token, refresh): each one bounded
 * by `limits.oauthRequestTimeoutMs`, so an authorization server that never answers cannot hold
 * a host request forever. And the redaction every message about those requests goes through.
 */
import { redactSecrets } from "../errors/redact.js";
import { networkErrorText } from "../transports/upstream/upstreamMessages.js";
import type { FetchLike } from "./types.js";

export function timedFetch(base: FetchLike, timeoutMs: number): FetchLike {
  return (url, init) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    return base(url, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
  };
}

/**
 * An error's message with every secret value replaced and its length bounded: the SDK quotes
 * raw response bodies in some errors, and nothing guarantees a server does not echo a token.
 */
export function redactedMessage(error: unknown, secrets: Iterable<string | undefined>): string {
  let text =
    error instanceof Error && error.name === "TimeoutError"
      ? "no answer in time (limits.oauthRequestTimeoutMs)"
      : networkErrorText(error);
  text = redactSecrets(text, secrets);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
