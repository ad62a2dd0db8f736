/**
 * `limits.maxSessions` and `limits.maxSessionsPerClient`: one counter shared by every endpoint
 * and server NAME, so the listener as a whole never holds more host sessions (and upstream
 * connections) than configured, and no single client address can take them all (issue 5).
 *
 * The client a session belongs to is not passed through the endpoints: the listener runs each
 * request inside `clientScope.run(address, …)` and `acquire()` reads it from there
 * (AsyncLocalStorage follows the request across its awaits).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { SessionSlots } from "../transports/host/hostSession.js";

/** The client (remote address) of the request being handled. */
export const clientScope = new AsyncLocalStorage<string>();

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

  acquire(): (() => void) | null {
    const client = clientScope.getStore();
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
