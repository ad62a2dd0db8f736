/**
 * Waiting for a writable stream to take what it holds, with one waiter per stream: while the
 * stream is behind, every caller gets the same promise, and one set of listeners is attached
 * (removed when it settles). A listener per write instead piles up thousands of `drain`
 * listeners on a slow peer, and removing them one by one is quadratic.
 */

/** What `send` returns when the message was taken at once: one settled promise, shared. */
export const SENT: Promise<void> = Promise.resolve();

/** The parts of a Node writable (a stream, a socket, an HTTP response) the waiter reads. */
export interface DrainableStream {
  readonly writableLength: number;
  readonly writableNeedDrain: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  on(event: "drain" | "finish" | "close" | "error", listener: () => void): unknown;
  off(event: "drain" | "finish" | "close" | "error", listener: () => void): unknown;
}

/**
 * Whether a `drain` (or, once ended, `finish`) is still to come: the stream holds data and
 * told its writer to wait. A stream under its high-water mark flushes without any event.
 */
export function mustWaitForDrain(stream: DrainableStream): boolean {
  if (stream.destroyed || stream.writableFinished) return false;
  if (stream.writableEnded) return stream.writableLength > 0;
  return stream.writableNeedDrain;
}

export class DrainWaiter {
  private waiting: Promise<void> | undefined;

  constructor(private readonly stream: DrainableStream) {}

  /** Bytes the stream holds that its peer has not taken. */
  get queuedBytes(): number {
    return this.stream.writableLength;
  }

  /** Settles when the stream has drained, finished, closed or failed; at once when it is not behind. */
  wait(): Promise<void> {
    if (this.waiting !== undefined) return this.waiting;
    const stream = this.stream;
    if (!mustWaitForDrain(stream)) return SENT;
    this.waiting = new Promise<void>((resolve) => {
      const done = (): void => {
        stream.off("drain", done);
        stream.off("finish", done);
        stream.off("close", done);
        stream.off("error", done);
        this.waiting = undefined;
        resolve();
      };
      stream.on("drain", done);
      stream.on("finish", done);
      stream.on("close", done);
      stream.on("error", done);
    });
    return this.waiting;
  }
}
