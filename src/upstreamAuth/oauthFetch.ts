/**
 * The fetch the OAuth requests use (discovery, registration, token, refresh): each one bounded
 * by `limits.oauthRequestTimeoutMs`, so an authorization server that never answers cannot hold
 * a host request forever; its answer bounded in size; never to a link-local address, nor over
 * plain http to a host that is not loopback (they carry the PKCE verifier, client secrets,
 * refresh tokens — and OAuth 2.1 asks for TLS), redirects included. And the redaction every
 * message about those requests goes through.
 */
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { isPlainHttpBeyondLoopback } from "../config/loopback.js";
import { redactSecrets } from "../errors/redact.js";
import { visible } from "../errors/visible.js";
import { followRedirects } from "../transports/upstream/sameOriginRedirects.js";
import { describeUrl, networkErrorText } from "../transports/upstream/upstreamMessages.js";
import type { FetchLike } from "./types.js";
import { timeoutSignal } from "../transports/upstream/timeoutSignal.js";

/**
 * The most an OAuth answer (metadata, registration, token) may hold: such documents are a few
 * kilobytes, and a server that sends endless bytes must not fill the proxy's memory.
 */
export const OAUTH_BODY_MAX_BYTES = 1024 * 1024;

/** Redirects an OAuth request follows (each to an address checked again). */
const MAX_REDIRECTS = 10;

/**
 * Link-local addresses — also written as IPv6 (mapped, IPv4-compatible, NAT64) — and the other
 * addresses clouds serve instance metadata and credentials on (AWS's IPv6 one, Alibaba's,
 * Oracle's). No authorization server lives there, and an MCP server naming one (its resource
 * metadata, a redirect) would have the proxy fetch them.
 */
const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet("169.254.0.0", 16, "ipv4");
LINK_LOCAL.addSubnet("fe80::", 10, "ipv6");
LINK_LOCAL.addSubnet("::a9fe:0", 112, "ipv6");
LINK_LOCAL.addSubnet("64:ff9b::a9fe:0", 112, "ipv6");
LINK_LOCAL.addAddress("fd00:ec2::254", "ipv6");
LINK_LOCAL.addAddress("100.100.100.200", "ipv4");
LINK_LOCAL.addAddress("192.0.0.192", "ipv4");

export interface OAuthFetchOptions {
  /** `limits.oauthRequestTimeoutMs`. */
  readonly timeoutMs: number;
  /** The server's `auth.allowHttp`: plain http to any host (a network the operator trusts). */
  readonly allowHttp?: boolean | undefined;
}

export function timedFetch(base: FetchLike, options: OAuthFetchOptions): FetchLike {
  const check = async (target: URL): Promise<void> => {
    await refuseLinkLocal(target);
    if (options.allowHttp !== true) refusePlainHttp(target);
  };
  // Every hop checked before it is asked (the first one too, below).
  const following = followRedirects(base, { check, maxRedirects: MAX_REDIRECTS });
  return async (url, init) => {
    const timeout = timeoutSignal(options.timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const target = new URL(String(url));
    await check(target);
    const request = { ...init, signal };
    // A caller that follows redirects itself is given them as they come.
    const response = await (init?.redirect === "manual" ? base(target, request) : following(target, request));
    return bounded(response, describeUrl(response.url || target.href));
  };
}

function refusePlainHttp(url: URL): void {
  if (isPlainHttpBeyondLoopback(url))
    throw new Error(
      `${describeUrl(url.href)} is plain http to a host that is not loopback: not requested (it would carry OAuth ` +
        `secrets in clear; "allowHttp": true in the server's auth allows it on a network you trust)`,
    );
}

async function refuseLinkLocal(url: URL): Promise<void> {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const family = isIP(host);
  const addresses = family !== 0 ? [{ address: host, family }] : await lookup(host, { all: true }).catch(() => []);
  for (const { address, family: kind } of addresses)
    if (LINK_LOCAL.check(address, kind === 6 ? "ipv6" : "ipv4"))
      throw new Error(
        `${describeUrl(url.href)} is a link-local address or a cloud's instance metadata address: not requested`,
      );
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
 * The SDK's report of an answer that is not OAuth's JSON (a proxy's error page, a load balancer's
 * text, a 200 whose body does not parse) cut to a phrase: its parse error and the raw body say
 * nothing an operator can act on.
 */
function withoutRawAnswer(text: string): string {
  const cut = text.indexOf("Invalid OAuth error response");
  if (cut !== -1) return `${text.slice(0, cut)}not an OAuth answer`;
  // A JSON parse error quotes the start of what it read: an answer that echoed a secret would
  // show its first characters, too few for the redaction to know them.
  return JSON_PARSE_ERROR.test(text) ? "an answer (metadata, registration or token) is not JSON" : text;
}

const JSON_PARSE_ERROR = /is not valid JSON|Unexpected (token|end of JSON|non-whitespace)|in JSON at position/;

/** Most fields named when an OAuth answer does not read: the first are what to fix. */
const PROBLEMS_SHOWN = 3;

/**
 * An OAuth answer that does not read (the SDK's schema refused it), as the fields at fault:
 * its error message is the schema's whole report in JSON, over many lines.
 */
function schemaProblems(error: unknown): string | undefined {
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return undefined;
  const named = issues.slice(0, PROBLEMS_SHOWN).map((issue: { path?: unknown; message?: unknown }) => {
    const path = Array.isArray(issue.path) && issue.path.length > 0 ? issue.path.join(".") : "the document";
    return `${path}: ${String(issue.message)}`;
  });
  const more = issues.length > PROBLEMS_SHOWN ? ` (and ${issues.length - PROBLEMS_SHOWN} more)` : "";
  return `an OAuth answer (metadata, registration or token) is not as the spec has it: ${named.join("; ")}${more}`;
}

/**
 * An OAuth error answer with no `error_description`: the SDK's error then has no message, only
 * the `error` code the server sent — which is what to show.
 */
function bareOAuthError(error: unknown): string | undefined {
  if (!(error instanceof Error) || error.message.trim() !== "") return undefined;
  const code = (error as { errorCode?: unknown }).errorCode;
  return typeof code === "string"
    ? `the authorization server answered the error "${code}", with no description`
    : undefined;
}

/**
 * An error's message with every secret value replaced and its length bounded: the SDK quotes
 * raw response bodies in some errors, and nothing guarantees a server does not echo a token.
 */
export function redactedMessage(error: unknown, secrets: Iterable<string | undefined>): string {
  let text =
    error instanceof Error && error.name === "TimeoutError"
      ? "no answer in time (limits.oauthRequestTimeoutMs)"
      : (schemaProblems(error) ?? bareOAuthError(error) ?? withoutRawAnswer(networkErrorText(error)));
  // What an authorization server wrote (an `error_description`) carries no control characters on.
  text = visible(redactSecrets(text, secrets));
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
