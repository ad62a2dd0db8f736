/**
 * `limits.maxSessions`: one counter shared by every endpoint and server NAME, so the listener
 * as a whole never holds more host sessions (and upstream connections) than configured.
 */
import type { SessionSlots } from "../transports/host/hostSession.js";

export class SessionCounter implements SessionSlots {
  private taken = 0;

  constructor(readonly max: number) {}

  get inUse(): number {
    return this.taken;
  }

  acquire(): (() => void) | null {
    if (this.taken >= this.max) return null;
    this.taken++;
    let released = false;
    return () => {
      // Idempotent: a session may be ended from several sides at once.
      if (released) return;
      released = true;
      this.taken--;
    };
  }
}
