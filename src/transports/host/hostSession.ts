/**
 * How host-side endpoints hand a new host session to the proxy, and what they share with the
 * HTTP listener that owns them.
 */
import type { BodyBudget } from "./bodyBudget.js";
import type { FramingProblem, ProxyTransport } from "../types.js";
import type { OwnerOf, SessionOwner } from "./sessionOwner.js";

export type HostSessionKind = "streamable-http" | "sse" | "websocket";

export interface HostSessionInfo {
  /** The server NAME from the path (`/mcp/NAME`, `/sse/NAME`, `/ws/NAME`). */
  readonly server: string;
  readonly kind: HostSessionKind;
  /**
   * True for a streamable HTTP POST without `Mcp-Session-Id` that is not `initialize`
   * (protocol 2026-07-28 and other stateless hosts): the session lives for that one POST.
   */
  readonly stateless: boolean;
  /** The host's forwardable `mcp-*` headers from the request that opened the session. */
  readonly headers: Readonly<Record<string, string>>;
  /** The session id the host sees (`Mcp-Session-Id`, the SSE `sessionId`), if any. */
  readonly sessionId?: string | undefined;
  /** Who opened it (the digest of its bearer token; undefined without auth). */
  readonly owner?: SessionOwner;
}

/**
 * Called for every new host session. The callee connects the transport (calling `start()`,
 * which releases messages received so far) and must end its upstream when the transport's
 * `onclose` fires. A rejected promise ends the session with a JSON-RPC error to the host.
 */
export type OnHostSession = (transport: ProxyTransport, info: HostSessionInfo) => void | Promise<void>;

/**
 * A stateless host POSTed an answer over the limit (refused 413, unread): it belongs to no
 * session, so whichever upstream of `server`'s pool for `owner` asked that question (by the id
 * the answer's ends show) is told, not left waiting for it.
 */
export type OnStatelessAnswerTooLarge = (problem: FramingProblem, server: string, owner: SessionOwner) => void;

/** Where a problem was seen, for the listener's log (HTTP problems are answered in the reply). */
export interface ProblemSite {
  readonly server: string;
  readonly kind: HostSessionKind;
  readonly sessionId?: string | undefined;
}

/** Counts live host sessions against `limits.maxSessions`. */
export interface SessionSlots {
  /**
   * Takes a slot for `client` (its address); returns its release function, or null when none is
   * left. `replaceable`: the session may give its slot up to a new one of the same client while it
   * is idle (a streamable HTTP session its host left without a DELETE).
   */
  acquire(client?: string, replaceable?: ReplaceableSession): (() => void) | null;
}

/** A session that can be ended to make room for a new one of its client, while it is idle. */
export interface ReplaceableSession {
  /** Since when it has had no request and no open stream; undefined while it has some. */
  idleSince(): number | undefined;
  /** Ends it (its slot is released at once), saying why. */
  replace(why: string): void;
}

/** What every endpoint of one server NAME needs from the listener. */
export interface HostEndpointContext {
  /**
   * The owner of a request (the digest of its bearer token); a session is bound to the owner of
   * the request that opened it. Absent (or returning undefined): sessions are bound to nobody.
   */
  readonly ownerOf?: OwnerOf;
  readonly server: string;
  readonly maxMessageBytes: number;
  /** Largest HTTP request body (`limits.maxBodyBytes`); default `maxMessageBytes`. */
  readonly maxBodyBytes?: number;
  /** Most messages in one JSON-RPC batch (`limits.maxBatch`); a bigger batch is refused whole. */
  readonly maxBatch?: number;
  /**
   * Most nodes (objects, arrays, members, elements) in one message (or batch) from a host (`limits.maxMessageNodes`),
   * counted before it is parsed; unbounded when absent.
   */
  readonly maxMessageNodes?: number;
  /** Request bodies held at once over the listener (`limits.bodyBytesInFlight`); unbounded when absent. */
  readonly bodyBudget?: BodyBudget;
  /** How long a refused request's body is still read before its connection is cut (`limits.closeTimeoutMs`). */
  readonly closeTimeoutMs: number;
  readonly sseKeepAliveMs: number;
  readonly slots: SessionSlots;
  readonly maxSessions: number;
  readonly onSession: OnHostSession;
  readonly onproblem?: ((problem: FramingProblem, site: ProblemSite) => void) | undefined;
  /** A stateless host's answer over the limit (`OnStatelessAnswerTooLarge`). */
  readonly onStatelessAnswerTooLarge?: OnStatelessAnswerTooLarge | undefined;
}
