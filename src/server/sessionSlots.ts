/**
 * `limits.maxSessions` and `limits.maxSessionsPerClient`: one counter shared by every endpoint
 * and server NAME, so the listener as a whole never holds more host sessions (and upstream
 * connections) than configured, and no single client address can take them all.
 *
 * Each endpoint names the client (its remote address) when it takes a slot. (Not an
 * AsyncLocalStorage: on Node 20 one turns on async hooks for every promise and callback of the
 * process, a cost paid on every proxied call.)
 */
import type { SessionSlots } from "../transports/host/hostSession.js";

export class SessionCounter implements SessionSlots {
  private taken = 0;
  private readonly perClient = new Map<string, number>();

  constructor(
    readonly max: number,
    readonly maxPerClient: number = Number.POSITIVE_INFINITY,
  ) {}

  get inUse(): number {
    return this.taken;
  }

  /** Sessions held by one client address. */
  inUseBy(client: string): number {
    return this.perClient.get(client) ?? 0;
  }

  /** True when `client` may open one more session. */
  clientMayOpen(client: string): boolean {
    return this.inUseBy(client) < this.maxPerClient;
  }

  acquire(client?: string): (() => void) | null {
    if (this.taken >= this.max) return null;
    if (client !== undefined && !this.clientMayOpen(client)) return null;
    this.taken++;
    if (client !== undefined) this.perClient.set(client, this.inUseBy(client) + 1);
    let released = false;
    return () => {
      // Idempotent: a session may be ended from several sides at once.
      if (released) return;
      released = true;
      this.taken--;
      if (client === undefined) return;
      const left = this.inUseBy(client) - 1;
      // No entry per address that has gone: the map stays as small as the live clients.
      if (left <= 0) this.perClient.delete(client);
      else this.perClient.set(client, left);
    };
  }
}
