/**
 * The fetch the OAuth requests use (discovery, registration, token, refresh): each one bounded
 * by `limits.oauthRequestTimeoutMs`, so an authorization server that never answers cannot hold
 * a host request forever. And the redaction every message about those requests goes through.
 */
import { redactSecrets } from "../errors/redact.js";
import { visible } from "../errors/visible.js";
import { describeUrl, networkErrorText } from "../transports/upstream/upstreamMessages.js";
import type { FetchLike } from "./types.js";

/**
 * The most an OAuth answer (metadata, registration, token) may hold: such documents are a few
 * kilobytes, and a server that sends endless bytes must not fill the proxy's memory.
 */
export const OAUTH_BODY_MAX_BYTES = 1024 * 1024;

export function timedFetch(base: FetchLike, timeoutMs: number): FetchLike {
  return async (url, init) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const response = await base(url, {
      ...init,
      signal: init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout,
    });
    return bounded(response, describeUrl(String(url)));
  };
}

/** The response, its body cut off with an error past `OAUTH_BODY_MAX_BYTES`. */
function bounded(response: Response, where: string): Response {
  if (response.body === null) return response;
  const tooLarge = (): Error => new Error(`the answer of ${where} is larger than ${OAUTH_BODY_MAX_BYTES} bytes`);
  if (Number(response.headers.get("content-length") ?? 0) > OAUTH_BODY_MAX_BYTES) {
    void response.body.cancel().catch(() => {});
    throw tooLarge();
  }
  let seen = 0;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > OAUTH_BODY_MAX_BYTES) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
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
  // What an authorization server wrote (an `error_description`) carries no control characters on.
  text = visible(redactSecrets(text, secrets));
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
