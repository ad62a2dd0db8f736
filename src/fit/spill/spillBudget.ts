/**
 * The memory all sessions' pages share (`limits.spillMaxBytes`) and their lifetime
 * (`limits.spillTtlMs`). Every spill has the same lifetime, so creation order is expiry order:
 * one queue, swept from the front, and one timer at the oldest expiry frees memory even when no
 * new spill comes to trigger a sweep. A spill that does not fit is refused (pages already handed
 * out are never dropped early to make room).
 */

export interface SpillHolder {
  /** Drops the spill `id` as expired. */
  expire(id: string): void;
}

interface Held {
  readonly holder: SpillHolder;
  readonly id: string;
  readonly bytes: number;
  readonly expiresAt: number;
  released: boolean;
}

/** Released records left in the queue before it is compacted (past half of it too). */
const COMPACT_AFTER = 1024;

export class SpillBudget {
  private used = 0;
  private queue: Held[] = [];
  private head = 0;
  /** Records in the queue released before their turn at its front (a result sent whole after all). */
  private releasedBehind = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly maxBytes: number,
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get usedBytes(): number {
    return this.used;
  }

  /** Records the queue holds: live spills, and released ones not yet dropped. */
  get records(): number {
    return this.queue.length - this.head;
  }

  /** Room for `bytes` more, held until released or expired; null when it does not fit. */
  reserve(holder: SpillHolder, id: string, bytes: number): { expiresAt: number; release: () => void } | null {
    this.sweep();
    if (this.used + bytes > this.maxBytes) return null;
    const held: Held = { holder, id, bytes, expiresAt: this.now() + this.ttlMs, released: false };
    this.used += bytes;
    this.queue.push(held);
    this.arm();
    return {
      expiresAt: held.expiresAt,
      release: () => {
        if (held.released) return;
        held.released = true;
        this.used -= held.bytes;
        // Behind a live spill it would wait for that one's expiry: thousands of spills let go at
        // once (a result cut block by block, then sent whole) are dropped now and then instead.
        if (++this.releasedBehind > COMPACT_AFTER && this.releasedBehind * 2 > this.records) this.compact();
      },
    };
  }

  /** Expires every spill past its time. */
  sweep(): void {
    const now = this.now();
    while (this.head < this.queue.length && this.queue[this.head]!.expiresAt <= now) {
      const held = this.queue[this.head++]!;
      if (held.released) this.releasedBehind--;
      else {
        held.released = true;
        this.used -= held.bytes;
        held.holder.expire(held.id);
      }
    }
    // Also drop released spills at the front, so the queue does not grow with spills already gone.
    while (this.head < this.queue.length && this.queue[this.head]!.released) {
      this.head++;
      this.releasedBehind--;
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Drops every released record, keeping the live ones in expiry order. */
  private compact(): void {
    this.queue = this.queue.slice(this.head).filter((held) => !held.released);
    this.head = 0;
    this.releasedBehind = 0;
  }

  private arm(): void {
    if (this.timer !== undefined || this.head >= this.queue.length) return;
    const wait = Math.max(0, this.queue[this.head]!.expiresAt - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sweep();
      this.arm();
    }, wait + 1);
    this.timer.unref();
  }
}
