/**
 * `limits.maxSessions` and `limits.maxSessionsPerClient`: one counter shared by every endpoint
 * and server NAME, so the listener as a whole never holds more host sessions (and upstream
 * connections) than configured, and no single client address can take them all.
 *
 * Each endpoint names the client (its remote address) when it takes a slot. (Not an
 * AsyncLocalStorage: on Node 20 one turns on async hooks for every promise and callback of the
 * process, a cost paid on every proxied call.)
 *
 * A client at its limit whose new session would be refused gets the slot of its own session idle
 * the longest instead, if that one has been idle `replaceIdleAfterMs` at least: hosts that end a
 * streamable HTTP session by dropping it, never sending DELETE, would otherwise lock their client
 * (every local host: loopback is one client) out until `limits.sessionIdleMs` reaps them. The
 * replaced session's host, if it comes back, gets 404 and initializes again, as the spec says.
 */
import type { ReplaceableSession, SessionSlots } from "../transports/host/hostSession.js";

interface Held {
  readonly session: ReplaceableSession;
  readonly release: () => void;
}

export class SessionCounter implements SessionSlots {
  private taken = 0;
  private readonly perClient = new Map<string, number>();
  /** Sessions that may give their slot up, by client. */
  private readonly replaceable = new Map<string, Set<Held>>();

  constructor(
    readonly max: number,
    readonly maxPerClient: number = Number.POSITIVE_INFINITY,
    /** How long a session must have been idle before a new one of its client may take its slot. */
    readonly replaceIdleAfterMs: number = Number.POSITIVE_INFINITY,
    private readonly now: () => number = Date.now,
  ) {}

  get inUse(): number {
    return this.taken;
  }

  /** Sessions held by one client address. */
  inUseBy(client: string): number {
    return this.perClient.get(client) ?? 0;
  }

  /** True when `client` may open one more session: under its limit, or one of its sessions may give its slot up. */
  clientMayOpen(client: string): boolean {
    return this.inUseBy(client) < this.maxPerClient || this.idleLongest(client) !== undefined;
  }

  acquire(client?: string, replaceable?: ReplaceableSession): (() => void) | null {
    // At either limit, the client's own session idle the longest may make room (never another client's).
    const full = this.taken >= this.max || (client !== undefined && this.inUseBy(client) >= this.maxPerClient);
    if (full && (client === undefined || !this.replaceIdle(client))) return null;
    this.taken++;
    if (client !== undefined) this.perClient.set(client, this.inUseBy(client) + 1);
    let released = false;
    const release = (): void => {
      // Idempotent: a session may be ended from several sides at once.
      if (released) return;
      released = true;
      this.taken--;
      if (client === undefined) return;
      if (held !== undefined) {
        const own = this.replaceable.get(client);
        own?.delete(held);
        if (own?.size === 0) this.replaceable.delete(client);
      }
      const left = this.inUseBy(client) - 1;
      // No entry per address that has gone: the map stays as small as the live clients.
      if (left <= 0) this.perClient.delete(client);
      else this.perClient.set(client, left);
    };
    const held = client === undefined || replaceable === undefined ? undefined : { session: replaceable, release };
    if (held !== undefined && client !== undefined) {
      const own = this.replaceable.get(client) ?? new Set<Held>();
      own.add(held);
      this.replaceable.set(client, own);
    }
    return release;
  }

  /** `client`'s session idle the longest, if it has been idle long enough to give its slot up. */
  private idleLongest(client: string): { held: Held; since: number } | undefined {
    const latest = this.now() - this.replaceIdleAfterMs;
    let oldest: { held: Held; since: number } | undefined;
    for (const held of this.replaceable.get(client) ?? []) {
      const since = held.session.idleSince();
      if (since === undefined || since > latest) continue;
      if (oldest === undefined || since < oldest.since) oldest = { held, since };
    }
    return oldest;
  }

  /** Ends `client`'s session idle the longest, if it has been idle long enough; true when one went. */
  private replaceIdle(client: string): boolean {
    const oldest = this.idleLongest(client);
    if (oldest === undefined) return false;
    const idleS = Math.round((this.now() - oldest.since) / 1000);
    const limit =
      this.taken >= this.max
        ? `limits.maxSessions (${this.max})`
        : `limits.maxSessionsPerClient (${this.maxPerClient})`;
    oldest.held.release();
    oldest.held.session.replace(`idle for ${idleS} s when its client opened a new session past ${limit}`);
    return true;
  }
}
