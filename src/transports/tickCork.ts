/**
 * One system call for the writes of one tick, without holding back the first. The first write of
 * a tick goes out at once — a lone answer is not delayed by what the tick does after it (logs,
 * metrics) — and the writes after it in the same tick wait under a cork until the tick ends,
 * then leave as one writev: a flood of small messages costs a system call per upstream read, not
 * one per message. One `process.nextTick` per tick that writes; nothing per message.
 */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

const IDLE = 0;
const WROTE = 1;
const CORKED = 2;

export class TickCork {
  private state = IDLE;

  constructor(private readonly stream: Corkable) {}

  /** Call before each write of a whole message. */
  beforeWrite(): void {
    if (this.state === IDLE) {
      this.state = WROTE;
      process.nextTick(this.endOfTick);
    } else if (this.state === WROTE) {
      this.state = CORKED;
      this.stream.cork();
    }
  }

  /** Holds every write until the end of the tick: a message written in several pieces goes out as one. */
  corkNow(): void {
    if (this.state === IDLE) process.nextTick(this.endOfTick);
    if (this.state !== CORKED) {
      this.state = CORKED;
      this.stream.cork();
    }
  }

  private readonly endOfTick = (): void => {
    if (this.state === CORKED) this.stream.uncork();
    this.state = IDLE;
  };
}
