/**
 * The answers to one host batch, gathered to go back as one array (JSON-RPC 2.0 §6: the server
 * answers a batch with an array of the responses) to a host that takes messages whole (stdio,
 * WebSocket) on a protocol with batches. They come from several places: what the proxy refuses
 * of the batch at once, what it serves itself (pages of cut results), and the upstream — in an
 * array of its own, or one by one (a streamable HTTP server sends each on its stream). Sent as
 * they came, the proxy's own answers left the upstream's array, and a host that matches a batch
 * to one array waited for the rest. An upstream array that completes the batch goes on as the
 * upstream wrote it (a notification between answers included), with the answers held added at
 * its end; one that does not leaves its answers with the others, to wait for the last.
 *
 * Held until the last request of the batch is answered (or cancelled by the host: nothing is
 * owed on it then). What a session holds over all its batches is bounded (`HeldAnswers`): past
 * it, the answers a batch holds go out as an array of their own, the rest later — a long call
 * in a batch must not hold the other answers' bytes for as long as it runs, nor many batches
 * each a little.
 */
import { encodeWire, heldBytes } from "../transports/wireJson.js";

/** The bytes every batch of one session holds, and the most it may. */
export interface HeldAnswers {
  bytes: number;
  readonly maxBytes: number;
}

export class BatchAnswers {
  private held: unknown[] = [];
  private bytesHeld = 0;
  /** This batch's answers placed in the upstream array being handed on (`answer(…, relayed)`). */
  private inRelay: unknown[] = [];
  /** Requests of the batch forwarded and not answered yet. */
  private owed = 0;
  /** Every item of the batch has been looked at: no more requests join it. */
  private sealed = false;

  constructor(
    private readonly send: (answers: unknown[]) => void,
    private readonly session: HeldAnswers,
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
   * handed on, where the answer takes its place for now; `relayEnded` decides, once the whole
   * array has been gone through, whether it stays there.
   */
  answer(answer: unknown, relayed?: unknown[]): void {
    this.owed--;
    if (relayed === undefined) {
      this.hold(answer);
      this.settle();
      return;
    }
    relayed.push(answer);
    this.inRelay.push(answer);
  }

  /**
   * The upstream's array `out` holds all its answers of this batch: when they complete it, the
   * answers held join them there; otherwise they are taken out of it to wait with the others.
   */
  relayEnded(out: unknown[]): void {
    const mine = this.inRelay;
    this.inRelay = [];
    if (this.complete) {
      for (const answer of this.held) out.push(answer);
      this.release();
      return;
    }
    const taken = new Set(mine);
    let kept = 0;
    for (const item of out) if (!taken.has(item)) out[kept++] = item;
    out.length = kept;
    for (const answer of mine) this.hold(answer);
    this.settle();
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

  private get complete(): boolean {
    return this.sealed && this.owed === 0;
  }

  private hold(answer: unknown): void {
    this.held.push(answer);
    // The last answer goes at once: only one that waits for others is measured.
    if (this.complete) return;
    let bytes = 0;
    try {
      bytes = heldBytes(encodeWire(answer));
    } catch {
      // What JSON cannot write fails when sent, where the host is told.
    }
    this.bytesHeld += bytes;
    this.session.bytes += bytes;
  }

  private settle(): void {
    if (!this.complete && this.session.bytes <= this.session.maxBytes) return;
    if (this.held.length === 0) return;
    const answers = this.held;
    this.release();
    this.send(answers);
  }

  /** Lets go of what is held: it has been sent, or joined the upstream's array. */
  private release(): void {
    this.session.bytes -= this.bytesHeld;
    this.held = [];
    this.bytesHeld = 0;
  }
}
