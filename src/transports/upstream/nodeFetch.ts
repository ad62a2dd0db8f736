/**
 * The requests of an HTTP upstream, on `node:http` instead of the global `fetch`.
 *
 * `fetch` (undici) costs a proxy three to five times the CPU of `http.request` per request: the
 * fetch algorithm, a `Request`, `Headers`, abort listeners and a web `ReadableStream` per body.
 * Under a burst of sessions that cost fills the event loop, and since the loop accepts one new
 * connection per turn, new host connections (a session's GET stream, its first POST) wait
 * behind everything the established sessions do. This answers the same `FetchLike` calls the
 * transports make with a lighter request and a body read from the socket as it arrives (paused
 * while nobody reads it, so the upstream's writes wait, as with a web stream).
 *
 * A URL with credentials or another scheme is handed to `fetch` itself (which refuses the first).
 * A redirect is answered as it came, not followed (`redirect: "manual"`): the transports follow
 * redirects within the upstream's origin only (sameOriginRedirects.ts).
 * Headers are read as `fetch` reads them (see `headerRecord`).
 * No `accept-encoding` is sent; a body a server compressed anyway is decoded (contentCoding.ts).
 */
import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type RequestOptions,
} from "node:http";
import { urlToHttpOptions } from "node:url";
import type { Transform } from "node:stream";
import { decoded } from "./contentCoding.js";
import { fetchFailed } from "./upstreamMessages.js";
import { abortError, asAbortSignal, type AbortLike } from "./postAbort.js";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/** What the transports read of a response body: `getReader()` and `cancel()`, as a web stream has. */
export interface BodyStreamLike {
  getReader(): BodyReaderLike;
  cancel(reason?: unknown): Promise<void>;
}

export interface BodyReaderLike {
  read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>;
  cancel(reason?: unknown): Promise<void>;
  releaseLock(): void;
}

/** What the transports read of a response: a `Response` has all of it. */
export interface ResponseLike {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers: { get(name: string): string | null };
  readonly body: BodyStreamLike | null;
}

export type RequestInitLike = {
  method?: string;
  headers?: Headers | Record<string, string>;
  body?: string;
  /** A real `AbortSignal`, or the lighter `PostAbort` (made into a signal where `fetch` itself runs). */
  signal?: AbortLike | null;
  /** `manual`: a redirect is answered as it came (what `node:http` does anyway). */
  redirect?: "manual";
};
export type FetchLikeLight = (url: string | URL, init?: RequestInitLike) => Promise<ResponseLike>;

/** A `fetch` that takes real signals only (the global one, the OAuth layer's, a test's). */
export type FetchWithSignals = (url: string | URL, init?: RequestInit) => Promise<ResponseLike>;

/** `fetch` answering `FetchLikeLight` calls: an `AbortLike` that is not a signal is made into one. */
export function withAbortSignals(fetchWith: FetchWithSignals): FetchLikeLight {
  return (url, init) => fetchWith(url, fetchInit(init));
}

function fetchInit(init: RequestInitLike | undefined): RequestInit | undefined {
  if (init?.signal == null) return init as RequestInit | undefined;
  return { ...init, signal: asAbortSignal(init.signal) };
}

/**
 * Connections kept alive and shared by every session to the same upstream origin. A GET to an MCP
 * server is always an event stream that lives as long as the session: it gets connections of its
 * own (`stream`), so it never takes a warm one a request would have reused (a new connection
 * waits in a busy server's accept queue; a stream can wait, a request should not).
 */
interface Agents {
  http: HttpAgent;
  https: HttpsAgent;
  httpStream: HttpAgent;
  httpsStream: HttpsAgent;
}

/**
 * One set of agents per idle-connection limit (a process has one limit, so one set). The limit
 * is how many freed connections each origin keeps open: a burst of sessions frees as many
 * connections at once as it had requests in flight, and every one closed past the limit is a new
 * connection for a later request, waiting in the server's accept queue.
 */
const agentsByIdleLimit = new Map<number | undefined, Agents>();

function agentsFor(idleConnections: number | undefined): Agents {
  let agents = agentsByIdleLimit.get(idleConnections);
  if (agents === undefined) {
    // Node reads a maxFreeSockets of 0 as its default: keeping none is no keep-alive at all.
    const options =
      idleConnections === undefined
        ? { keepAlive: true }
        : idleConnections === 0
          ? { keepAlive: false }
          : { keepAlive: true, maxFreeSockets: idleConnections };
    agents = {
      http: new HttpAgent(options),
      https: new HttpsAgent(options),
      httpStream: new HttpAgent(options),
      httpsStream: new HttpsAgent(options),
    };
    agentsByIdleLimit.set(idleConnections, agents);
  }
  return agents;
}

/** Headers `fetch` adds that a server may look at; sent the same here. */
const FETCH_DEFAULTS: ReadonlyArray<[string, string]> = [
  ["accept", "*/*"],
  ["accept-language", "*"],
  ["sec-fetch-mode", "cors"],
  ["user-agent", "node"],
];

/**
 * `fetch` on `node:http`, keeping at most `idleConnections` idle connections open per origin
 * (undefined: Node's agent default).
 */
export function nodeFetchWith(idleConnections?: number): FetchLikeLight {
  const agents = agentsFor(idleConnections);
  return (input, init) => nodeRequest(agents, input, init);
}

/** `fetch` on `node:http` with Node's agent defaults. */
export const nodeFetch: FetchLikeLight = nodeFetchWith();

function nodeRequest(agents: Agents, input: string | URL, init: RequestInitLike = {}): Promise<ResponseLike> {
  const url = typeof input === "string" ? new URL(input) : input;
  if (url.username !== "" || url.password !== "" || (url.protocol !== "http:" && url.protocol !== "https:"))
    return fetch(url, fetchInit(init));
  const headers = headerRecord(init.headers);
  for (const [name, value] of FETCH_DEFAULTS) headers[name] ??= value;
  const body = init.body;
  if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
  const https = url.protocol === "https:";
  const method = init.method ?? "GET";
  // A kept-alive socket the server closed meanwhile (it restarted, or timed the socket out) fails
  // before any answer (the request most likely never reached it), so it goes again on another socket.
  // A fresh socket's failure is the upstream's answer, reported as fetch reports it.
  const send = (): Promise<ResponseLike> =>
    new Promise<ResponseLike>((resolve, reject) => {
      const signal = init.signal ?? undefined;
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const req = (https ? httpsRequest : httpRequest)(
        {
          ...requestOptionsOf(url),
          method,
          headers,
          agent:
            method === "GET" ? (https ? agents.httpsStream : agents.httpStream) : https ? agents.https : agents.http,
        },
        (res) => resolve(new NodeResponse(res, res.statusCode ?? 0, signal)),
      );
      if (signal !== undefined) endOnAbort(req, signal);
      req.on("error", (error: NodeJS.ErrnoException) => {
        if (signal?.aborted === true) reject(signal.reason);
        else if (req.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE"))
          send().then(resolve, reject);
        else reject(fetchFailed(error));
      });
      req.end(body);
    });
  return send();
}

/**
 * Headers as a `Headers` object built from `init` would hold them — names in lower case, values
 * of names that differ only in case joined with ", ", leading and trailing HTTP whitespace
 * (tab, CR, LF, space) dropped — as a plain object without a prototype, the shape `node:http`
 * takes, without building a `Headers` (the transports pass a plain object per request).
 * Invalid characters are left for `node:http` to refuse, as `fetch` refuses them.
 */
export function headerRecord(init: RequestInitLike["headers"]): Record<string, string> {
  const headers: Record<string, string> = Object.create(null);
  if (init === undefined) return headers;
  if (init instanceof Headers) {
    for (const [name, value] of init) headers[name] = value;
    return headers;
  }
  for (const name of Object.keys(init)) {
    const lower = name.toLowerCase();
    const value = trimHttpWhitespace(init[name]!);
    const before = headers[lower];
    headers[lower] = before === undefined ? value : `${before}, ${value}`;
  }
  return headers;
}

function isHttpWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/** The value without leading and trailing HTTP whitespace (no new string when it has none). */
function trimHttpWhitespace(value: string): string {
  if (value === "" || (!isHttpWhitespace(value.charCodeAt(0)) && !isHttpWhitespace(value.charCodeAt(value.length - 1))))
    return value;
  return value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
}

/**
 * The parts of a URL `node:http` reads, worked out once per URL object (the transports send every
 * request of a session to the same one) instead of on every request; worked out again if the
 * object was changed since.
 */
const requestOptionsByUrl = new WeakMap<URL, RequestOptions & { href?: string }>();

function requestOptionsOf(url: URL): RequestOptions {
  let options = requestOptionsByUrl.get(url);
  if (options === undefined || options.href !== url.href) {
    options = urlToHttpOptions(url);
    requestOptionsByUrl.set(url, options);
  }
  return options;
}

/**
 * Ends the request when `signal` aborts — before its answer, or while its body is still read (the
 * socket goes, and with it what is left of the body) — as `http.request`'s own `signal` option
 * does; here the listener is the only cost of a signal that is not an `AbortSignal`. Let go when
 * the request closes (its answer read whole, or its connection gone).
 */
function endOnAbort(req: ClientRequest, signal: AbortLike): void {
  const onAbort = (): void => {
    req.destroy(abortError());
  };
  signal.addEventListener("abort", onAbort, { once: true });
  req.once("close", () => signal.removeEventListener("abort", onAbort));
}

class NodeResponse implements ResponseLike {
  readonly ok: boolean;
  readonly statusText: string;
  readonly headers: { get(name: string): string | null };
  readonly body: BodyStreamLike | null;

  constructor(
    res: IncomingMessage,
    readonly status: number,
    signal: AbortLike | undefined,
  ) {
    this.ok = status >= 200 && status < 300;
    this.statusText = res.statusMessage ?? "";
    this.headers = {
      get: (name) => {
        const value = res.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
      },
    };
    // Like fetch: no body for these statuses (and none for HEAD, which the transports never send).
    if (status === 204 || status === 304) {
      res.resume();
      this.body = null;
    } else {
      this.body = new NodeBody(res, decoded(res), signal);
    }
  }
}

const DONE: Promise<void> = Promise.resolve();

/**
 * A response body read chunk by chunk, in the order it arrives: a chunk nobody asked for yet is
 * kept and the socket paused until it is taken. Ends with `done`, fails as the socket fails
 * (or with the abort reason), and `cancel()` drops the connection's rest.
 */
class NodeBody implements BodyStreamLike, BodyReaderLike {
  private readonly chunks: Buffer[] = [];
  private ended = false;
  private failure: unknown;
  private waiter:
    | { resolve: (r: { done: true } | { done: false; value: Uint8Array }) => void; reject: (e: unknown) => void }
    | undefined;
  /** What is read: the response itself, or its bytes decoded (`Content-Encoding`). */
  private readonly readable: IncomingMessage | Transform;

  constructor(
    private readonly res: IncomingMessage,
    source: IncomingMessage | Transform | Error,
    signal: AbortLike | undefined,
  ) {
    this.readable = source instanceof Error ? res : source;
    if (source instanceof Error) {
      res.destroy();
      this.finish(source);
      return;
    }
    if (source !== res)
      source.on("error", (error) => {
        res.destroy();
        this.finish(
          new Error(`the upstream's ${res.headers["content-encoding"]} body does not decode: ${error.message}`),
        );
      });
    source.on("data", (chunk: Buffer) => {
      const waiter = this.waiter;
      if (waiter !== undefined) {
        this.waiter = undefined;
        waiter.resolve({ done: false, value: chunk });
        return;
      }
      this.chunks.push(chunk);
      source.pause();
    });
    source.on("end", () => this.finish(undefined));
    res.on("error", (error) => this.finish(signal?.aborted === true ? signal.reason : error));
    res.on("close", () => {
      // A body received whole ends when what reads it ends (a decoder may still hold its last bytes).
      if (!this.ended && !res.complete)
        this.finish(
          signal?.aborted === true
            ? signal.reason
            : new TypeError("terminated", { cause: new Error("the connection closed before the response ended") }),
        );
    });
  }

  getReader(): BodyReaderLike {
    return this;
  }

  read(): Promise<{ done: true } | { done: false; value: Uint8Array }> {
    const chunk = this.chunks.shift();
    if (chunk !== undefined) {
      if (this.chunks.length === 0 && !this.ended) this.readable.resume();
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ done: true });
    this.readable.resume();
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  cancel(): Promise<void> {
    this.chunks.length = 0;
    let released = DONE;
    if (!this.ended) {
      this.ended = true;
      if (this.readable !== this.res) {
        this.res.unpipe();
        this.readable.destroy();
      }
      // A body already read whole (an empty 202) leaves its keep-alive connection for the next
      // request, and resolves once the connection is back in the pool (at the response's end):
      // what the caller sends next reuses it. The rest of a body still arriving is not wanted,
      // and that connection goes.
      if (this.res.complete) {
        // A decoder may have taken the whole body in already: the response has ended then.
        if (!this.res.readableEnded && !this.res.destroyed)
          released = new Promise((resolve) => {
            this.res.once("end", resolve);
            this.res.once("close", resolve);
          });
        this.res.resume();
      } else this.res.destroy();
    }
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve({ done: true });
    return released;
  }

  releaseLock(): void {}

  private finish(failure: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = failure;
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter === undefined) return;
    if (failure === undefined) waiter.resolve({ done: true });
    else waiter.reject(failure);
  }
}
