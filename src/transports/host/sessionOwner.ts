/**
 * Who a host session belongs to: the digest of the credential that opened it (the listener's
 * bearer token, hashed), or nobody when the listener has no auth. A request that names a
 * session (`Mcp-Session-Id`, `/messages?sessionId=`) is served only when it carries the same
 * credential; otherwise it is answered as if the session did not exist, so another client —
 * even one holding a valid token of its own — can neither use it, take its stream, end it, nor
 * learn that it exists.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** A fixed-length digest of the credential a request carries; undefined without auth. */
export type SessionOwner = Buffer | undefined;

/** How the listener names a request's owner (the digest of its bearer token). */
export type OwnerOf = (req: IncomingMessage) => SessionOwner;

/** True when `presented` may use a session opened by `owner`; constant time for equal lengths. */
export function sameOwner(owner: SessionOwner, presented: SessionOwner): boolean {
  if (owner === undefined || presented === undefined) return owner === presented;
  return owner.length === presented.length && timingSafeEqual(owner, presented);
}
