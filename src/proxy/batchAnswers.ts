/**
 * The answers to one host batch, gathered to go back as one array (JSON-RPC 2.0 §6: the server
 * answers a batch with an array of the responses) to a host that takes messages whole (stdio,
 * WebSocket, legacy SSE) on a protocol with batches. They come from several places: what the
 * proxy refuses of the batch at once, what it serves itself (pages of cut results), and the
 * upstream — in an array of its own, or one by one (a streamable HTTP server sends each on its
 * stream). Sent as they came, the proxy's own answers left the upstream's array, and a host that
 * matches a batch to one array waited for the rest. The upstream's own array goes on as it wrote
 * it (a notification between answers included), with the proxy's answers added at its end.
 *
 * Held until the last request of the batch is answered (or cancelled by the host: nothing is
 * owed on it then). What is held is bounded: past `maxHeldBytes` the answers held so far go out
 * as an array of their own, the rest later — a long call in a batch must not hold the other
 * answers' bytes for as long as it runs.
 */
import { encodeWire, heldBytes } from "../transports/wireJson.js";

export class BatchAnswers {
  private held: unknown[] = [];
  private heldBytes = 0;
  /** Requests of the batch forwarded and not answered yet. */
  private owed = 0;
  /** Every item of the batch has been looked at: no more requests join it. */
  private sealed = false;

  constructor(
    private readonly send: (answers: unknown[]) => void,
    private readonly maxHeldBytes: number,
  ) {}

  /** A request of the batch was forwarded: its answer is owed. */
  owe(): void {
    this.owed++;
  }

  /** An answer the proxy gave an item of the batch at once (a refusal): nothing was owed on it. */
  add(answer: unknown): void {
    this.hold(answer);
  }

  /**
   * The answer to a forwarded request of the batch. `relayed`: the upstream's own array being
   * handed on, where the answer stays in its place (with what else the upstream put there); the
   * answers held join that array when it completes the batch.
   */
  answer(answer: unknown, relayed?: unknown[]): void {
    this.owed--;
    if (relayed === undefined) {
      this.hold(answer);
      this.settle();
      return;
    }
    relayed.push(answer);
    if (!this.sealed || this.owed > 0) return;
    for (const held of this.held) relayed.push(held);
    this.held = [];
    this.heldBytes = 0;
  }

  /** A forwarded request the host cancelled: no answer is owed on it any more. */
  withdraw(): void {
    this.owed--;
    this.settle();
  }

  /** Every item has been looked at: what is held goes if nothing more is owed. */
  seal(): void {
    this.sealed = true;
    this.settle();
  }

  private hold(answer: unknown): void {
    this.held.push(answer);
    // The last answer goes at once: only one that waits for others is measured.
    if (this.sealed && this.owed === 0) return;
    try {
      this.heldBytes += heldBytes(encodeWire(answer));
    } catch {
      // What JSON cannot write fails when sent, where the host is told.
    }
  }

  private settle(): void {
    const complete = this.sealed && this.owed === 0;
    if (!complete && this.heldBytes <= this.maxHeldBytes) return;
    if (this.held.length === 0) return;
    const answers = this.held;
    this.held = [];
    this.heldBytes = 0;
    this.send(answers);
  }
}
