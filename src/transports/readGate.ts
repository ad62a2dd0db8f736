/**
 * A gate readers pass before each read: open, it costs nothing (no promise per read); closed,
 * every reader waits on one shared promise until it opens again. Used where pausing means
 * "stop pulling": an HTTP response body, a host's next POST.
 */
export class ReadGate {
  private closed: Promise<void> | undefined;
  private reopen: (() => void) | undefined;

  get isOpen(): boolean {
    return this.closed === undefined;
  }

  close(): void {
    if (this.closed !== undefined) return;
    this.closed = new Promise<void>((resolve) => (this.reopen = resolve));
  }

  open(): void {
    const reopen = this.reopen;
    this.closed = undefined;
    this.reopen = undefined;
    reopen?.();
  }

  /** Undefined while open; else the promise that settles when it opens. */
  passage(): Promise<void> | undefined {
    return this.closed;
  }
}
