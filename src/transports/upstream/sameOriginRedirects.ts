/**
 * Redirects followed hop by hop, each target checked before anything goes to it. The inner fetch
 * must not follow redirects itself: each request goes out once, to the address it names.
 *
 * An HTTP upstream's are followed only within its origin (`sameOriginRedirects`). Its requests
 * carry what the operator configured for that server (`headers`, a bearer token) and the
 * session's messages: a redirect to another origin would hand them to a server nobody named
 * (`fetch` drops only `Authorization` on the way, and `X-Api-Key` is as secret). Such a redirect
 * is refused with an error naming where it pointed, so the operator can configure that address
 * instead; one within the origin (a trailing slash, a moved path) is followed as `fetch` follows it.
 */
import type { ResponseLike } from "./nodeFetch.js";

type HeaderInput = ConstructorParameters<typeof Headers>[0];

/** What is read of a request here: `node:http`'s light requests and `fetch`'s alike. */
interface RequestShape {
  method?: string;
  headers?: HeaderInput;
  body?: unknown;
  redirect?: string;
}

/** Hops followed before giving up, as `fetch` counts them. */
const MAX_REDIRECTS = 20;

export interface RedirectPolicy {
  /** Throws when `target` (where a `status` answer from `from` points) is not to be followed. */
  check(target: URL, from: URL, status: number): void | Promise<void>;
  /** Hops followed before giving up; default as `fetch`, 20. */
  maxRedirects?: number;
}

export function followRedirects<I extends RequestShape, R extends ResponseLike>(
  fetchWith: (url: string | URL, init?: I) => Promise<R>,
  policy: RedirectPolicy,
): (url: string | URL, init?: I) => Promise<R> {
  const maxRedirects = policy.maxRedirects ?? MAX_REDIRECTS;
  return async (input, init) => {
    let url = new URL(input);
    let request = { ...init, redirect: "manual" } as I;
    for (let hops = 0; ; hops++) {
      const response = await fetchWith(url, request);
      const location = isRedirect(response) ? response.headers.get("location") : null;
      if (location === null) return response;
      await response.body?.cancel().catch(() => undefined);
      const target = resolved(location, url);
      await policy.check(target, url, response.status);
      if (hops === maxRedirects) throw failed(`more than ${maxRedirects} redirects`);
      request = afterRedirect(response.status, request);
      url = target;
    }
  };
}

export function sameOriginRedirects<I extends RequestShape, R extends ResponseLike>(
  fetchWith: (url: string | URL, init?: I) => Promise<R>,
): (url: string | URL, init?: I) => Promise<R> {
  return followRedirects(fetchWith, {
    check: (target, from, status) => {
      if (target.origin !== from.origin) throw refused(status, target);
    },
  });
}

function isRedirect(response: ResponseLike): boolean {
  return response.status >= 300 && response.status < 400;
}

function resolved(location: string, base: URL): URL {
  try {
    return new URL(location, base);
  } catch {
    throw failed(`the upstream redirected to ${JSON.stringify(location.slice(0, 200))}, which is not a URL`);
  }
}

/** As `fetch`: a 303 (and a 301 or 302 after a POST) is followed by a GET without the body. */
function afterRedirect<I extends RequestShape>(status: number, request: I): I {
  const method = request.method ?? "GET";
  if (!(status === 303 && method !== "HEAD") && !((status === 301 || status === 302) && method === "POST"))
    return request;
  const { body: _body, ...rest } = request;
  return { ...rest, method: "GET", headers: withoutBodyHeaders(request.headers) } as I;
}

function withoutBodyHeaders(headers: HeaderInput | undefined): HeaderInput | undefined {
  if (headers === undefined) return headers;
  const kept = new Headers(headers);
  for (const name of ["content-type", "content-length", "content-encoding", "content-language", "content-location"])
    kept.delete(name);
  return kept;
}

function refused(status: number, target: URL): Error {
  return failed(
    `the upstream redirected (HTTP ${status}) to ${target.origin} (another origin): not followed, so what is ` +
      "configured for this server and the session's messages go nowhere else; set its url to the address it " +
      "redirects to",
  );
}

function failed(why: string): Error {
  return new TypeError("fetch failed", { cause: new Error(why) });
}
