/**
 * The contract every transport in this project meets, on both sides of the proxy. It is the
 * SDK's `Transport` (so SDK hosts and servers can use our transports and the normalizing
 * decorator in-process), with two promises the SDK's own transports do not make:
 *
 * - messages are delivered exactly as parsed from the wire (`JSON.parse`, nothing stripped,
 *   reordered or rejected by a schema), and sent exactly as given;
 * - framing is linear in the message size, and every size limit is a named option.
 */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";
import type { RequestId } from "./jsonrpc.js";

export type { Transport, TransportSendOptions, JSONRPCMessage, MessageExtraInfo };

/**
 * Options the proxy passes along with a message it forwards. `forwardHeaders` carries the
 * host's MCP HTTP headers (`mcp-protocol-version`, `mcp-method`, `mcp-name`, …) so an HTTP
 * upstream sees what the host sent, including protocol versions the SDK does not know.
 */
export interface ProxySendOptions extends TransportSendOptions {
  forwardHeaders?: Readonly<Record<string, string>>;
}

/**
 * What an upstream transport knows of a message it delivers beyond the message itself: the
 * request whose response stream carried it (a streamable HTTP server sends what belongs to a
 * request on that request's stream). The proxy routes it to the same host request's stream.
 */
export interface UpstreamMessageExtra extends MessageExtraInfo {
  relatedRequestId?: RequestId;
  /**
   * The transport built this error answer itself: the request never reached the server, or the
   * server answered it with no JSON-RPC (an HTTP error, a network failure). It says nothing of
   * the server working.
   */
  failedRequest?: true;
}

/**
 * A message a transport could not deliver as JSON: reported, never thrown, never silently
 * dropped. `id` is the JSON-RPC id when it could still be read (so the peer can be answered).
 */
export interface FramingProblem {
  /**
   * `too-complex`: more nodes (objects, arrays, members, elements) than `limit` (a host's:
   * `limits.maxMessageNodes`; an upstream's: `limits.maxUpstreamMessageNodes`); not parsed.
   */
  readonly kind: "too-large" | "too-complex" | "invalid-json" | "not-jsonrpc";
  readonly limit?: number;
  readonly bytes: number;
  readonly id?: string | number;
  /** `id` as written, for the answers the proxy builds under it (a number past 2^53 parses rounded). */
  readonly idText?: string;
  /**
   * A request or notification of the peer's own, whose `id` answers nothing of ours (a peer's ids
   * may equal ours): its top level has a `method`, or — a message too large to read, known by its
   * ends — its start does not show it to be an answer (`mayAskAtHead` in lineFraming.ts).
   */
  readonly asks?: boolean;
  /**
   * A message too large to read whose start shows it to be an answer (a top-level `result` or
   * `error`, no `method`): the answer to a request of ours, whether or not its id was seen.
   */
  readonly answers?: boolean;
  /** First characters of the offending line, for the log; never the whole content. */
  readonly excerpt: string;
  /** A message still running far past the limit without end: the stream it came on is over. */
  readonly unended?: boolean;
}

/** Transports that can report framing problems implement this in addition to `Transport`. */
export interface ReportsFramingProblems {
  onproblem?: ((problem: FramingProblem) => void) | undefined;
  /**
   * Upstreams: what the proxy sends this one that must not be quoted back from it — configured
   * header values, a token, a URL's secrets, `env` values — for the log lines that quote what it
   * sent (a server may echo them in any field).
   */
  secretsSent?(): Iterable<string | undefined>;
}

/**
 * Flow control a transport may offer, used by the proxy to hold one side back while the other
 * is not taking data (so a flood never piles up in this process):
 *
 * - the sending side says how much it holds that the peer has not taken (`queuedBytes`) and
 *   offers one promise that settles when that has shrunk (`whenDrained`): the same promise for
 *   every caller until then — one waiter per stream, never one listener per message;
 * - the receiving side stops and restarts reading from its peer (`pauseReading`,
 *   `resumeReading`): a socket, pipe or response body is no longer read, so the peer's own
 *   writes block. Messages already read may still be delivered after a pause (at most one read
 *   chunk's worth).
 *
 * Every member is optional: a transport without them is simply never held back.
 */
export interface FlowControl {
  /** Bytes sent toward the peer that this process still holds (stream and socket buffers). */
  readonly queuedBytes?: number;
  /** Settles once the peer has taken some or all of what was queued, or the transport ended. */
  whenDrained?(): Promise<void>;
  /**
   * Stops reading from the peer until `resumeReading`. Idempotent. `peerBehind`: the reason is
   * the peer's own — it has not taken what it was sent — so a check that the peer is alive may
   * still judge it (by whether it takes what is queued); otherwise (the other side is behind)
   * the peer cannot be judged while it is not read. The latest call's reason holds.
   */
  pauseReading?(peerBehind?: boolean): void;
  /** Reads from the peer again. Idempotent. */
  resumeReading?(): void;
}

/**
 * Host transports: the session could not start (its upstream did not). Each request the host sent
 * meanwhile is answered with a JSON-RPC error `code`/`message`, then the transport ends, saying why
 * where it can (a WebSocket close reason) — not a plain close the host cannot tell from a goodbye.
 */
export interface RefusesStart {
  refuseStart?(code: number, message: string): Promise<void>;
}

/**
 * Host transports whose peer takes each message whole (stdio, WebSocket, SSE): a batch of answers
 * the upstream sent as one array goes on as one array (JSON-RPC 2.0 §6). A streamable HTTP host
 * routes each answer to its own request's stream, so it is handed them one by one.
 */
export interface KeepsBatches {
  readonly keepsBatches?: boolean;
}

/**
 * Host transports that cannot carry every message to the host: a stateless streamable HTTP POST
 * whose `Accept` takes JSON only has no stream for a question of the server's (and no GET
 * stream to send it on instead). Without the method, every message reaches the host.
 */
export interface ReachesHost {
  /** Whether a message sent with this `relatedRequestId` can reach the host, now or later. */
  reaches?(related: RequestId): boolean;
}

export type ProxyTransport = Transport &
  ReportsFramingProblems &
  FlowControl &
  RefusesStart &
  KeepsBatches &
  ReachesHost;

/**
 * What every upstream (client-side) transport is: a `ProxyTransport` that can say why its
 * connection ended (exit code or signal and last stderr line, HTTP status, close code), so the
 * proxy can tell hosts and the health check. Undefined while it runs or when it is not known.
 */
export interface UpstreamTransport extends ProxyTransport {
  describeEnd(): string | undefined;
  /**
   * Whether the connection ended because the server ended its session (streamable HTTP: 404 to
   * the session's id — a restart, an expiry). The server answers; such an end is no failure of it.
   */
  endedBySession?(): boolean;
}
