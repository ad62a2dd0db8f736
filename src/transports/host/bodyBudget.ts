/**
 * The bytes of HTTP request bodies held in memory at once, over every connection of a listener
 * (`limits.bodyBytesInFlight`). Each body is capped on its own (`maxBodyBytes`), but many
 * uploads at once would add up without bound: a body that would take the total past the budget
 * is refused (503, retry) and what it holds is given back, so a few clients uploading at once
 * cannot run the proxy out of memory.
 */
export class BodyBudget {
  #held = 0;

  constructor(readonly maxBytes: number) {}

  /** Takes `bytes` from the budget; false (nothing taken) when they do not fit. */
  take(bytes: number): boolean {
    if (this.#held + bytes > this.maxBytes) return false;
    this.#held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.#held -= bytes;
  }

  /** Bytes held now. */
  get held(): number {
    return this.#held;
  }
}
