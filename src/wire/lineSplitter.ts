/**
 * Bounded line splitting for byte streams: each byte is scanned once, a line's chunks are joined
 * once, and a line over the limit is skipped up to its newline while only its first and last
 * bytes are kept (enough to name the JSON-RPC id of an oversized message). Used under stdio
 * framing, the SSE parser and the log reader.
 *
 * Pure: bytes in, lines out. No IO, no clock.
 */

const LF = 0x0a;
const CR = 0x0d;

/** Bytes kept from the start of an oversized line (for the excerpt and the id). */
export const OVERSIZED_HEAD_BYTES = 4096;
/** Bytes kept from the end of an oversized line (the SDK serialises a request's `id` last). */
export const OVERSIZED_TAIL_BYTES = 256;

/**
 * `head` with the start of `piece` after it, up to `OVERSIZED_HEAD_BYTES`: the start a message too
 * large to keep is known by, gathered as its pieces come.
 */
export function withStart(head: Buffer, piece: Uint8Array): Buffer {
  if (head.length >= OVERSIZED_HEAD_BYTES) return head;
  return Buffer.concat([head, piece.subarray(0, OVERSIZED_HEAD_BYTES - head.length)]);
}

/**
 * The last `OVERSIZED_TAIL_BYTES` of `tail` with `piece` after it, copied (a view would hold the
 * whole chunk it was read in): the end a message too large to keep is known by.
 */
export function withEnd(tail: Buffer, piece: Uint8Array): Buffer {
  const joined = Buffer.concat([tail, piece.subarray(Math.max(0, piece.length - OVERSIZED_TAIL_BYTES))]);
  return Buffer.from(joined.subarray(Math.max(0, joined.length - OVERSIZED_TAIL_BYTES)));
}

/** What is left of a line that was longer than the limit: its size and its two ends. */
export interface OversizedLine {
  readonly bytes: number;
  readonly head: Buffer;
  readonly tail: Buffer;
}

export interface LineSink {
  line(bytes: Buffer): void;
  /**
   * A line at least `keepPiecesFrom` bytes long, in the pieces it arrived in (never joined: a
   * sink that can read pieces spares a copy of a big message). Without it, `line` gets them joined.
   */
  pieces?(pieces: Buffer[], bytes: number): void;
  oversized(line: OversizedLine): void;
}

const CR_BYTE = Buffer.from([CR]);

/**
 * Splits a byte stream into lines in time linear in its length. `breakOnCR` selects the SSE
 * rule (a line ends at CRLF, LF or CR — WHATWG HTML §9.2.6); without it a line ends at LF and
 * one trailing CR is dropped (so CRLF works too).
 */
export class LineSplitter {
  /** Bytes examined by delimiter scans so far: equals the bytes pushed (each is scanned once). */
  bytesScanned = 0;
  /** Bytes copied while joining a line's pieces (at most one copy of each line). */
  bytesCopied = 0;

  private parts: Buffer[] = [];
  private partBytes = 0;
  private discarding = false;
  private discardBytes = 0;
  private head: Buffer = Buffer.alloc(0);
  private tail: Buffer = Buffer.alloc(0);
  private pendingCR = false;
  /** A CR that ended the last chunk, not yet counted: the line break's if an LF comes next. */
  private heldCR = false;

  constructor(
    readonly maxLineBytes: number,
    readonly breakOnCR: boolean,
    readonly keepPiecesFrom = Infinity,
  ) {}

  push(chunk: Uint8Array, sink: LineSink): void {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    if (this.heldCR && buf.length > 0) {
      this.heldCR = false;
      if (buf[0] !== LF) this.accumulate(CR_BYTE);
    }
    if (this.pendingCR) {
      // A CR ended the previous chunk: an LF starting this one belongs to the same line break.
      this.pendingCR = false;
      if (buf[0] === LF) start = 1;
    }
    // Next LF / CR positions are cached so short lines do not rescan the rest of the chunk.
    let nextLF = -2;
    let nextCR = this.breakOnCR ? -2 : -1;
    while (start < buf.length) {
      if (nextLF !== -1 && nextLF < start) nextLF = this.scan(buf, LF, start);
      if (nextCR !== -1 && nextCR < start) nextCR = this.scan(buf, CR, start);
      const end = nextCR === -1 ? nextLF : nextLF === -1 ? nextCR : Math.min(nextLF, nextCR);
      if (end === -1) {
        const last = buf.length - 1;
        this.heldCR = !this.breakOnCR && buf[last] === CR;
        this.accumulate(buf.subarray(start, this.heldCR ? last : buf.length));
        return;
      }
      // A CR before the LF is the line break's, not the line's: it does not count toward the limit.
      const crlf = !this.breakOnCR && buf[end] === LF && end > start && buf[end - 1] === CR;
      this.accumulate(buf.subarray(start, crlf ? end - 1 : end));
      this.finishLine(sink);
      start = end + 1;
      if (buf[end] === CR) {
        if (start === buf.length) this.pendingCR = true;
        else if (buf[start] === LF) start += 1;
      }
    }
  }

  /**
   * The bytes of the line begun and not finished (none while one over the limit is dropped): for
   * a reader that takes the stream over from this one.
   */
  get unfinished(): Buffer {
    if (this.discarding) return Buffer.alloc(0);
    return Buffer.concat(this.heldCR ? [...this.parts, CR_BYTE] : this.parts, this.partBytes + (this.heldCR ? 1 : 0));
  }

  /** The line being dropped, so far: its bytes and its start (undefined while none is). */
  get dropping(): { readonly bytes: number; readonly head: Buffer } | undefined {
    return this.discarding ? { bytes: this.discardBytes, head: this.head } : undefined;
  }

  /** The bytes after the last line break (an unterminated last line), or undefined. */
  takeRest(sink: LineSink): void {
    this.pendingCR = false;
    // A CR that ended the stream ends its last line: not the line's.
    this.heldCR = false;
    if (this.partBytes > 0 || this.discarding) this.finishLine(sink);
  }

  private scan(buf: Buffer, byte: number, from: number): number {
    const at = buf.indexOf(byte, from);
    this.bytesScanned += (at === -1 ? buf.length : at + 1) - from;
    return at;
  }

  private accumulate(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.discarding) {
      this.discardBytes += piece.length;
      this.keepTail(piece);
      return;
    }
    if (this.partBytes + piece.length <= this.maxLineBytes) {
      this.parts.push(piece);
      this.partBytes += piece.length;
      return;
    }
    // Over the limit: keep only the two ends, drop the rest now (never buffer the whole line).
    this.discarding = true;
    this.discardBytes = this.partBytes + piece.length;
    this.parts.push(piece);
    const head: Buffer[] = [];
    let headBytes = 0;
    for (const part of this.parts) {
      if (headBytes >= OVERSIZED_HEAD_BYTES) break;
      const take = part.subarray(0, OVERSIZED_HEAD_BYTES - headBytes);
      head.push(take);
      headBytes += take.length;
    }
    this.head = Buffer.concat(head, headBytes);
    this.tail = Buffer.alloc(0);
    // The end: as many of the last parts as make it (a line may come in pieces of a few bytes).
    let from = this.parts.length;
    for (let bytes = 0; from > 0 && bytes < OVERSIZED_TAIL_BYTES; ) bytes += this.parts[--from]!.length;
    for (const part of this.parts.slice(from)) this.keepTail(part);
    this.parts = [];
    this.partBytes = 0;
  }

  private keepTail(piece: Buffer): void {
    this.tail = withEnd(this.tail, piece);
  }

  private finishLine(sink: LineSink): void {
    if (this.discarding) {
      const info: OversizedLine = {
        bytes: this.discardBytes,
        head: this.head,
        tail: stripCR(this.tail, this.breakOnCR),
      };
      this.discarding = false;
      this.discardBytes = 0;
      this.head = Buffer.alloc(0);
      this.tail = Buffer.alloc(0);
      sink.oversized(info);
      return;
    }
    if (this.parts.length > 1 && this.partBytes >= this.keepPiecesFrom && sink.pieces !== undefined) {
      const parts = this.parts;
      let bytes = this.partBytes;
      this.parts = [];
      this.partBytes = 0;
      const lastPart = parts[parts.length - 1]!;
      const stripped = stripCR(lastPart, this.breakOnCR);
      bytes -= lastPart.length - stripped.length;
      if (stripped.length > 0) parts[parts.length - 1] = stripped;
      else parts.pop();
      sink.pieces(parts, bytes);
      return;
    }
    let line: Buffer;
    if (this.parts.length === 0) line = Buffer.alloc(0);
    else if (this.parts.length === 1) line = this.parts[0] as Buffer;
    else {
      line = Buffer.concat(this.parts, this.partBytes);
      this.bytesCopied += line.length;
    }
    this.parts = [];
    this.partBytes = 0;
    sink.line(stripCR(line, this.breakOnCR));
  }
}

function stripCR(line: Buffer, breakOnCR: boolean): Buffer {
  return !breakOnCR && line.length > 0 && line[line.length - 1] === CR ? line.subarray(0, line.length - 1) : line;
}
