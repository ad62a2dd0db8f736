/**
 * A Server-Sent Events parser (WHATWG HTML §9.2.6 "Interpreting an event stream") that is
 * linear in the stream length, for MCP's SSE streams (streamable HTTP responses and the GET
 * stream, legacy HTTP+SSE), where one event can carry a 50+ MiB JSON-RPC result.
 *
 * Why not `eventsource-parser` (what the SDK's clients use): it works on decoded strings and
 * re-slices its buffer per chunk; here the line layer is the byte-level `LineSplitter`, each
 * byte is scanned once, a line is joined once, and an event over `maxEventBytes` is skipped
 * without being buffered, reported with the JSON-RPC id read from its ends. One that runs on far
 * past that without end (`cutPastBytes`; a line that does, too) ends the stream: it is reported
 * then, with the id its start shows, and nothing more is read — dropping a flood without end
 * would hold a core for as long as the server sends.
 *
 * Deliberate difference from the WHATWG rules: bytes that are not UTF-8 are not replaced by
 * U+FFFD (that would silently corrupt content); the event is reported instead.
 *
 * Pure: bytes in, values out.
 */
import { isUtf8 } from "node:buffer";
import { startsWithBom } from "../wire/jsonNodes.js";
import {
  LineSplitter,
  type LineSink,
  OVERSIZED_HEAD_BYTES,
  OVERSIZED_TAIL_BYTES,
  type OversizedLine,
} from "../wire/lineSplitter.js";
import { oversizedProblem } from "./lineFraming.js";

export interface SseEvent {
  /** The `event:` field; "message" when absent. */
  readonly type: string;
  /** The `data:` lines joined with LF. */
  readonly data: string;
  /** The last `id:` seen on the stream so far (WHATWG "last event ID buffer"). */
  readonly lastEventId: string;
}

export interface SseProblem {
  readonly kind: "too-large" | "invalid-utf8";
  readonly type: string;
  /** Bytes of the event's data. */
  readonly bytes: number;
  /** The JSON-RPC id, when it could be read from the ends of the data. */
  readonly id?: string | number;
  /** `id` as written. */
  readonly idText?: string;
  /** The data's start names a method: the peer's own request or notification (lineFraming.ts). */
  readonly asks?: boolean;
  /** The data's start shows an answer (a top-level `result` or `error`). */
  readonly answers?: boolean;
  readonly excerpt: string;
  /** The event ran on `cutPastBytes` past `maxEventBytes` without end: the stream is over. */
  readonly unended?: boolean;
}

export type SseItem =
  | { readonly event: SseEvent; readonly problem?: undefined; readonly retry?: undefined }
  | { readonly problem: SseProblem; readonly event?: undefined; readonly retry?: undefined }
  /** A `retry:` field: the reconnection time the server asks for, in ms. */
  | { readonly retry: number; readonly event?: undefined; readonly problem?: undefined };

export interface SseParserOptions {
  /** Largest event data accepted, in bytes (`limits.maxMessageBytes`). */
  maxEventBytes: number;
  /**
   * How far past `maxEventBytes` an event (or a line) may run on, dropped, before the stream is
   * cut (`limits.maxSkippedMessageBytes`): a result a little too large that ends is skipped and
   * the stream goes on. Never cut when absent.
   */
  cutPastBytes?: number | undefined;
}

const DATA = Buffer.from("data");
const COLON = 0x3a;
const SPACE = 0x20;
const LF = Buffer.from("\n");

export class SseParser {
  readonly maxEventBytes: number;
  /** Bytes past which an event without end cuts the stream; undefined when none does. */
  private readonly cutAtBytes: number | undefined;
  private readonly splitter: LineSplitter;
  private out: SseItem[] = [];
  private atStreamStart = true;
  private type = "";
  private data: string[] = [];
  private dataBytes = 0;
  private lastEventId = "";
  /** Set when the current event's data is being skipped (too large or not UTF-8). */
  private skipping: EventEnds | undefined;
  /** Set once an event or line ran on without end: nothing more is read. */
  private cut = false;
  private readonly sink: LineSink = {
    line: (bytes) => this.onLine(bytes),
    oversized: (line) => this.onOversizedLine(line),
  };

  constructor(options: SseParserOptions) {
    this.maxEventBytes = options.maxEventBytes;
    this.cutAtBytes = options.cutPastBytes === undefined ? undefined : options.maxEventBytes + options.cutPastBytes;
    // A data line may be as long as an event plus its "data: " prefix.
    this.splitter = new LineSplitter(this.maxEventBytes + DATA.length + 2, true);
  }

  get stats(): { bytesScanned: number; bytesCopied: number } {
    return { bytesScanned: this.splitter.bytesScanned, bytesCopied: this.splitter.bytesCopied };
  }

  push(chunk: Uint8Array): SseItem[] {
    if (this.cut) return [];
    this.splitter.push(chunk, this.sink);
    this.cutWhenUnended();
    const out = this.out;
    this.out = [];
    return out;
  }

  /** End of stream: an event without its closing blank line is discarded (WHATWG §9.2.6). */
  end(): SseItem[] {
    if (this.cut) return [];
    this.splitter.takeRest({ line: () => {}, oversized: () => {} });
    const out = this.out;
    this.out = [];
    return out;
  }

  private onLine(raw: Buffer): void {
    let line = raw;
    line = this.withoutStreamBom(line);
    if (line.length === 0) {
      this.dispatch();
      return;
    }
    if (line[0] === COLON) return; // comment (keep-alive)
    const colon = line.indexOf(COLON);
    const field = (colon === -1 ? line : line.subarray(0, colon)).toString("latin1");
    let value = colon === -1 ? Buffer.alloc(0) : line.subarray(colon + 1);
    if (value[0] === SPACE) value = value.subarray(1);
    switch (field) {
      case "data":
        this.addData(value);
        return;
      case "event":
        this.type = this.decode(value) ?? this.type;
        return;
      case "id": {
        const id = this.decode(value);
        if (id !== undefined && !id.includes("\0")) this.lastEventId = id;
        return;
      }
      case "retry":
        if (/^\d+$/.test(value.toString("latin1"))) this.out.push({ retry: Number(value.toString("latin1")) });
        return;
      default:
        return; // unknown fields are ignored
    }
  }

  /** The stream's first line without its one byte order mark (WHATWG: skipped once); later lines as they are. */
  private withoutStreamBom(line: Buffer): Buffer {
    if (!this.atStreamStart) return line;
    this.atStreamStart = false;
    return startsWithBom(line) ? line.subarray(3) : line;
  }

  private addData(value: Buffer): void {
    if (this.skipping) {
      this.dataBytes += value.length + 1;
      this.skipping.more(value);
      return;
    }
    if (this.dataBytes + value.length > this.maxEventBytes) {
      this.skip("too-large", value);
      this.dataBytes += value.length + 1;
      return;
    }
    if (!isUtf8(value)) {
      this.skip("invalid-utf8", value);
      this.dataBytes += value.length + 1;
      return;
    }
    this.data.push(value.toString("utf8"));
    this.dataBytes += value.length + 1;
  }

  private onOversizedLine(line: OversizedLine): void {
    // Only a data line matters; an enormous comment or unknown field is dropped as WHATWG says.
    const head = dataValueOf(this.withoutStreamBom(line.head));
    if (head === undefined) return;
    if (this.skipping) this.skipping.more(head, line.tail);
    else this.skip("too-large", head, line.tail);
    this.dataBytes += line.bytes - (line.head.length - head.length) + 1;
  }

  /**
   * The event's data is dropped from here on: only its two ends are kept, across its data lines
   * (joined with LF, as the data is), enough to tell an answer from a message of the peer's own
   * and to read its id. `tail`: the end of a line kept apart from its start (one too long to hold).
   */
  private skip(kind: SseProblem["kind"], value: Buffer, tail?: Buffer): void {
    const data = this.data;
    this.data = [];
    this.skipping = new EventEnds(kind);
    // Only the lines its ends are made of are copied: the first few and the last few.
    let first = 0;
    for (let bytes = 0; first < data.length && bytes < OVERSIZED_HEAD_BYTES; first++) bytes += data[first]!.length + 1;
    let last = data.length;
    for (let bytes = 0; last > first && bytes < OVERSIZED_TAIL_BYTES; last--) bytes += data[last - 1]!.length + 1;
    for (const line of [...data.slice(0, first), ...data.slice(last)]) this.skipping.more(Buffer.from(line));
    this.skipping.more(value, tail);
  }

  /**
   * The event (its data so far and the line being dropped) has run `cutPastBytes` past the
   * limit: it is reported now, known by its start (its end has not come), and the stream is over.
   */
  private cutWhenUnended(): void {
    const dropping = this.splitter.dropping;
    const bytes = this.dataBytes + (dropping?.bytes ?? 0);
    if (this.cutAtBytes === undefined || bytes <= this.cutAtBytes) return;
    this.cut = true;
    const head =
      this.skipping?.head ?? (dropping === undefined ? undefined : dataValueOf(this.withoutStreamBom(dropping.head)));
    // Only the data's start is known: its end, where an id written last would be, never came.
    const ends = oversizedProblem({ bytes, head: head ?? Buffer.alloc(0), tail: Buffer.alloc(0) });
    const type = this.type === "" ? "message" : this.type;
    this.out.push({ problem: { ...ends, kind: "too-large", type, unended: true } });
  }

  private decode(value: Buffer): string | undefined {
    return isUtf8(value) ? value.toString("utf8") : undefined;
  }

  private dispatch(): void {
    const type = this.type === "" ? "message" : this.type;
    const skipping = this.skipping;
    const data = this.data;
    const bytes = Math.max(0, this.dataBytes - 1);
    this.type = "";
    this.data = [];
    this.dataBytes = 0;
    this.skipping = undefined;
    if (skipping) {
      // Known by its ends as any message too large to keep is; not UTF-8, it says so.
      const ends = oversizedProblem({ bytes, head: skipping.head, tail: skipping.tail });
      this.out.push({ problem: { ...ends, kind: skipping.kind, type } });
      return;
    }
    // No data field: nothing is dispatched (WHATWG: "If the data buffer is an empty string…").
    if (data.length === 0) return;
    this.out.push({
      event: { type, data: data.length === 1 ? (data[0] as string) : data.join("\n"), lastEventId: this.lastEventId },
    });
  }
}

/** The value of a `data` line (the start of one), one leading space dropped; undefined for another field. */
function dataValueOf(line: Buffer): Buffer | undefined {
  if (!line.subarray(0, DATA.length).equals(DATA) || line[DATA.length] !== COLON) return undefined;
  const value = line.subarray(DATA.length + 1);
  return value[0] === SPACE ? value.subarray(1) : value;
}

/** The two ends of a dropped event's data, its lines joined with LF as the data is. */
class EventEnds {
  head = Buffer.alloc(0);
  /** Set once the head has all it can have: 4 KiB, or a line cut short (its middle is gone). */
  private headDone = false;
  /**
   * The last lines' ends from `oldest` on, newest last, no more than make `OVERSIZED_TAIL_BYTES`:
   * a list, not `withEnd` per line, which an event of millions of short lines makes far slower.
   */
  private recent: Buffer[] = [];
  private oldest = 0;
  private recentBytes = 0;
  private lines = 0;

  constructor(readonly kind: SseProblem["kind"]) {}

  /** One more data line; `end`: its last bytes, when `line` is only its start. */
  more(line: Buffer, end?: Buffer): void {
    const first = this.lines++ === 0;
    if (!this.headDone) {
      const room = OVERSIZED_HEAD_BYTES - this.head.length - (first ? 0 : 1);
      this.head = Buffer.concat(first ? [this.head, line.subarray(0, room)] : [this.head, LF, line.subarray(0, room)]);
      this.headDone = this.head.length >= OVERSIZED_HEAD_BYTES || end !== undefined;
    }
    if (!first) this.keep(LF);
    // Copied: a view would hold the whole chunk it was read in.
    this.keep(Buffer.from(end ?? line.subarray(Math.max(0, line.length - OVERSIZED_TAIL_BYTES))));
  }

  /** The last `OVERSIZED_TAIL_BYTES` of the data. */
  get tail(): Buffer {
    const joined = Buffer.concat(this.recent.slice(this.oldest), this.recentBytes);
    return joined.subarray(Math.max(0, joined.length - OVERSIZED_TAIL_BYTES));
  }

  private keep(part: Buffer): void {
    if (part.length === 0) return;
    this.recent.push(part);
    this.recentBytes += part.length;
    while (this.recentBytes - this.recent[this.oldest]!.length >= OVERSIZED_TAIL_BYTES)
      this.recentBytes -= this.recent[this.oldest++]!.length;
    // Parts let go are dropped now and then, not one by one (an event of a million short lines).
    if (this.oldest > 1024) {
      this.recent = this.recent.slice(this.oldest);
      this.oldest = 0;
    }
  }
}
