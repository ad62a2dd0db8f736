/**
 * Flow control of an HTTP upstream, where every message is a POST: what it has not taken yet
 * is the bodies of POSTs still waiting for their response headers, and "reading" it means
 * pulling its response streams. One counter and one shared waiter per transport; a gate the
 * SSE body readers pass before each read.
 */
import { SENT } from "../drainWaiter.js";
import { ReadGate } from "../readGate.js";

export class HttpFlowControl {
  /** Closed while the host is behind: SSE response bodies are not read. */
  readonly gate = new ReadGate();
  private bytes = 0;
  private waiting: Promise<void> | undefined;
  private settle: (() => void) | undefined;

  get queuedBytes(): number {
    return this.bytes;
  }

  /** A POST of `bytes` is being sent. */
  posting(bytes: number): void {
    this.bytes += bytes;
  }

  /** That POST has its response (or failed): the upstream took it. */
  posted(bytes: number): void {
    this.bytes -= bytes;
    this.wake();
  }

  /** Settles when a POST in flight completes; at once when none is. */
  whenDrained(): Promise<void> {
    if (this.bytes <= 0) return SENT;
    this.waiting ??= new Promise<void>((resolve) => (this.settle = resolve));
    return this.waiting;
  }

  /** The transport ended: nothing waits on it any more. */
  end(): void {
    this.gate.open();
    this.wake();
  }

  private wake(): void {
    const settle = this.settle;
    this.waiting = undefined;
    this.settle = undefined;
    settle?.();
  }
}
