/**
 * Takes turns with everything else in the process. A stream that is ready is read by libuv up to
 * 32 times in a row (64 KiB each) before the event loop looks at anything else, so one flooding
 * peer could keep every other session — and `/healthz` — waiting for the 2 MiB of messages it
 * just read to be handled. Past `maxBytes` the stream is paused until the next turn of the event
 * loop (one `setImmediate` per `maxBytes` read, nothing per chunk but a sum).
 *
 * `hold`/`release` are the flow-control pause (a peer behind on the other side): the stream
 * resumes only when neither holds it.
 */

/** Bytes read from one stream before it yields the event loop: 256 KiB. */
export const READ_TURN_BYTES = 256 * 1024;

export class ReadYield {
  private bytes = 0;
  private yielding = false;
  private held = false;

  constructor(
    private readonly pause: () => void,
    private readonly resume: () => void,
    private readonly maxBytes: number = READ_TURN_BYTES,
  ) {}

  /** Counts `n` bytes just read; past the turn's share, pauses until the next turn. */
  took(n: number): void {
    this.bytes += n;
    if (this.bytes <= this.maxBytes || this.yielding) return;
    this.yielding = true;
    this.pause();
    setImmediate(this.nextTurn);
  }

  hold(): void {
    this.held = true;
    this.pause();
  }

  release(): void {
    this.held = false;
    if (!this.yielding) this.resume();
  }

  private readonly nextTurn = (): void => {
    this.bytes = 0;
    this.yielding = false;
    if (!this.held) this.resume();
  };
}
