/**
 * Ids of host requests given up before the upstream answered them: cancelled by the host, or
 * answered by the proxy when `limits.requestTimeoutMs` ran out. The upstream may still answer
 * one (a server should not after a cancel; many do, and a slow one answers after a timeout), and
 * a request reusing that id would get the late answer as its own. So such a reuse is refused
 * until the late answer has come (and been dropped) or `holdMs` has passed. At most `max` ids are
 * kept, the oldest let go first: a host cancelling without end cannot grow the proxy.
 */
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";

export class GivenUpIds {
  /** Id → when it was given up (`performance.now()`), oldest first. */
  private readonly since = new Map<RequestId, number>();

  constructor(
    private readonly max: number,
    private readonly holdMs: number,
  ) {}

  add(id: RequestId): void {
    const now = performance.now();
    this.since.delete(id);
    // Oldest first: those whose hold is over go from the front, so a session that cancels now and
    // then keeps none of them for long.
    for (const [old, at] of this.since) {
      if (now - at < this.holdMs && this.since.size < this.max) break;
      this.since.delete(old);
    }
    this.since.set(id, now);
  }

  /** Whether a late answer to a request given up with this id may still come. */
  holds(id: RequestId): boolean {
    // Asked of every host request: nothing given up, nothing looked up.
    if (this.since.size === 0) return false;
    const at = this.since.get(id);
    if (at === undefined) return false;
    if (performance.now() - at < this.holdMs) return true;
    this.since.delete(id);
    return false;
  }

  /** The late answer came: the id is free again. Whether it was one given up. */
  answered(id: RequestId): boolean {
    return this.since.delete(id);
  }
}
