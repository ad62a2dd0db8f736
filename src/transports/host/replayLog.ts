/**
 * What the SSE streams of one streamable HTTP session sent, kept so that a host whose stream
 * drops can resume it: a GET carrying `Last-Event-ID` gets the events after that one again, on
 * the new response (MCP 2025-11-25 basic/transports §"Resumability and Redelivery").
 *
 * An event id is `STREAM.SEQ`: the stream (0 the session's GET stream, 1, 2, … one per POST that
 * opened a stream) and the event's place in it, from 1 (0 is the position before the first event,
 * what a priming event carries). The id says which stream to resume, so a resume never mixes two
 * streams' messages.
 *
 * Bounded by bytes over the whole session (`limits.sseReplayBytes`): each event counts what its
 * text holds in memory (`heldBytes`) and `EVENT_OVERHEAD_BYTES` for what holds it, the oldest go
 * first, and an event larger than the whole budget is never kept. A resume whose events are partly gone gets what is
 * left, and is told how many are missing. A stream's record goes once the stream is finished
 * (nothing more will be sent on it) and none of its events is left; its last place is remembered
 * a while longer (`FINISHED_REMEMBERED` of them), so a host resuming from the end of it is told
 * it missed nothing.
 *
 * An answer is never lost in silence: one that is let go (or never fits) leaves in its place, at
 * its id, a small error for its request (`lostAnswer`, written when a resume asks for it), so a
 * host that resumes late is told to ask again instead of waiting for an answer that will not come.
 * A stand-in stays with the stream's record, and with its last place once the record has gone; it
 * counts `STAND_IN_BYTES` against the same budget, and goes after the events (oldest first) while
 * stand-ins hold less than half of it: newer traffic (another call's progress) pushes out events,
 * not the error that tells a host its answer is lost.
 */
import { heldBytes, type WireJson } from "../wireJson.js";

/** What holding one event costs besides its text (its objects, its id, its places in two lists). */
export const EVENT_OVERHEAD_BYTES = 512;

/** Finished streams whose last place is remembered after their record has gone. */
const FINISHED_REMEMBERED = 256;

/** What holding one stand-in for a lost answer costs (its place in two maps, the id). */
export const STAND_IN_BYTES = 128;

export interface ReplayEvent {
  readonly id: string;
  readonly wire: WireJson;
}

interface Kept {
  readonly stream: number;
  readonly seq: number;
  readonly event: ReplayEvent;
  readonly bytes: number;
  /** The request the event answers, when it is an answer. */
  readonly answers: AnswerId | undefined;
}

/** A request id, as the answer carries it. */
export type AnswerId = string | number;

/** Seq → the id of the request whose answer is no longer held (an error stands in for it). */
type LostAnswers = Map<number, AnswerId>;

interface StreamRecord {
  /** The last seq given out on the stream (0: none yet). */
  lastSeq: number;
  /** The events still kept, oldest first, from index `first` (the places before it emptied). */
  readonly kept: Array<Kept | undefined>;
  first: number;
  finished: boolean;
  lost: LostAnswers | undefined;
}

interface FinishedStream {
  readonly lastSeq: number;
  readonly lost: LostAnswers | undefined;
}

/** What a resume gets: the events after its cursor still kept, and how many after it are not. */
export interface Replay {
  readonly events: readonly ReplayEvent[];
  readonly missing: number;
}

/** A parsed `Last-Event-ID` this log could have written; undefined for anything else. */
export function parseEventId(id: string): { stream: number; seq: number } | undefined {
  const match = /^(\d{1,9})\.(\d{1,15})$/.exec(id);
  if (match === null) return undefined;
  return { stream: Number(match[1]), seq: Number(match[2]) };
}

export class ReplayLog {
  private readonly streams = new Map<number, StreamRecord>();
  /** Stream → its last seq (and lost answers), for finished streams whose record has gone (oldest first). */
  private readonly finished = new Map<number, FinishedStream>();
  /**
   * Every kept event, oldest first, from index `first`: the order they are let go in. A place is
   * emptied as its event goes (the array itself is cut down only now and then): an event let go
   * must not stay in memory behind it.
   */
  private readonly order: Array<Kept | undefined> = [];
  private first = 0;
  /** Every stand-in, oldest first, from index `lostFirst`: the order they are let go in. */
  private readonly lostOrder: Array<{ readonly stream: number; readonly seq: number }> = [];
  private lostFirst = 0;
  /** Places in `lostOrder` whose stand-in went with its forgotten stream. */
  private deadPlaces = 0;
  private bytes = 0;
  /** What the stand-ins still held count, within `bytes`. */
  private standInBytesHeld = 0;

  constructor(
    readonly maxBytes: number,
    /** What each event costs besides its text (tests count text alone with 0). */
    private readonly overheadBytes = EVENT_OVERHEAD_BYTES,
    /** The error that stands in for the answer to `id` once that answer is no longer held. */
    private readonly lostAnswer: (id: AnswerId) => WireJson = (id) => JSON.stringify({ jsonrpc: "2.0", id }),
    /** What each stand-in costs. */
    private readonly standInBytes = STAND_IN_BYTES,
  ) {}

  /** Starts a stream's record (before its first event or priming id). */
  open(stream: number): void {
    if (!this.streams.has(stream))
      this.streams.set(stream, { lastSeq: 0, kept: [], first: 0, finished: false, lost: undefined });
  }

  /** The id of the stream's position now: a resume from it gets what is sent after this call. */
  position(stream: number): string {
    return `${stream}.${this.streams.get(stream)?.lastSeq ?? 0}`;
  }

  /**
   * Gives the stream's next event its id, and keeps it when it fits the budget at all. `answers`:
   * the request the event answers (an answer not kept leaves an error in its place).
   */
  append(stream: number, wire: WireJson, answers?: AnswerId): ReplayEvent & { kept: boolean } {
    const record = this.streams.get(stream) ?? this.openRecord(stream);
    const seq = ++record.lastSeq;
    const event = { id: `${stream}.${seq}`, wire };
    // What it holds in memory: a string past Latin-1 takes two bytes a character.
    const bytes = heldBytes(wire, this.maxBytes - this.overheadBytes) + this.overheadBytes;
    if (bytes > this.maxBytes) {
      if (answers !== undefined) this.loseAnswer(record, stream, seq, answers);
      while (this.bytes > this.maxBytes) this.dropOldest();
      return { ...event, kept: false };
    }
    const kept: Kept = { stream, seq, event, bytes, answers };
    record.kept.push(kept);
    this.order.push(kept);
    this.bytes += bytes;
    while (this.bytes > this.maxBytes) this.dropOldest();
    return { ...event, kept: true };
  }

  /**
   * The events of `stream` after `seq`; undefined when the log has no such position (a stream it
   * never had or has forgotten, or a seq it never gave out).
   */
  after(stream: number, seq: number): Replay | undefined {
    const record = this.streams.get(stream);
    if (record === undefined) {
      const finished = this.finished.get(stream);
      if (finished === undefined || seq > finished.lastSeq) return undefined;
      const events = this.standInsAfter(stream, finished.lost, seq);
      return { events, missing: finished.lastSeq - seq - events.length };
    }
    if (seq > record.lastSeq) return undefined;
    const events: ReplayEvent[] = [];
    for (let i = record.first; i < record.kept.length; i++) {
      const kept = record.kept[i]!;
      if (kept.seq > seq) events.push(kept.event);
    }
    const lost = this.standInsAfter(stream, record.lost, seq);
    // In the order sent: the stand-ins go where their answers were.
    if (lost.length > 0) {
      events.push(...lost);
      events.sort((a, b) => seqOf(a) - seqOf(b));
    }
    return { events, missing: record.lastSeq - seq - events.length };
  }

  /** Nothing more will be sent on `stream`: its record goes with its last kept event. */
  finish(stream: number): void {
    const record = this.streams.get(stream);
    if (record === undefined) return;
    record.finished = true;
    if (record.first === record.kept.length) this.forget(stream, record);
  }

  /** A finished stream with nothing kept: its record goes, its last place stays a while. */
  private forget(stream: number, record: StreamRecord): void {
    this.streams.delete(stream);
    this.finished.set(stream, { lastSeq: record.lastSeq, lost: record.lost });
    if (this.finished.size <= FINISHED_REMEMBERED) return;
    const [oldest, gone] = this.finished.entries().next().value as [number, FinishedStream];
    this.finished.delete(oldest);
    // Its stand-ins go with it; their places in `lostOrder` then name nothing, and are swept out
    // once they are most of it.
    const dropped = gone.lost?.size ?? 0;
    this.bytes -= dropped * this.standInBytes;
    this.standInBytesHeld -= dropped * this.standInBytes;
    this.deadPlaces += dropped;
    if (this.deadPlaces >= 1024 && this.deadPlaces * 2 > this.lostOrder.length - this.lostFirst) this.sweepPlaces();
  }

  /** `lostOrder` without the places of stand-ins that have gone. */
  private sweepPlaces(): void {
    const live = this.lostOrder.slice(this.lostFirst).filter((place) => this.lostOf(place.stream)?.has(place.seq));
    this.lostOrder.length = 0;
    for (const place of live) this.lostOrder.push(place);
    this.lostFirst = 0;
    this.deadPlaces = 0;
  }

  /** Bytes kept now, for tests. */
  get keptBytes(): number {
    return this.bytes;
  }

  private openRecord(stream: number): StreamRecord {
    this.open(stream);
    return this.streams.get(stream)!;
  }

  /** The answer at `seq` is no longer held: an error for its request stands in for it. */
  private loseAnswer(record: StreamRecord, stream: number, seq: number, id: AnswerId): void {
    record.lost ??= new Map();
    record.lost.set(seq, id);
    this.lostOrder.push({ stream, seq });
    this.bytes += this.standInBytes;
    this.standInBytesHeld += this.standInBytes;
  }

  /** The stand-ins of `stream`, whether its record is live or gone with it finished. */
  private lostOf(stream: number): LostAnswers | undefined {
    return (this.streams.get(stream) ?? this.finished.get(stream))?.lost;
  }

  /** The stand-ins of `stream` after `seq`, written now. */
  private standInsAfter(stream: number, lost: LostAnswers | undefined, seq: number): ReplayEvent[] {
    if (lost === undefined) return [];
    const events: ReplayEvent[] = [];
    for (const [at, id] of lost) if (at > seq) events.push({ id: `${stream}.${at}`, wire: this.lostAnswer(id) });
    return events;
  }

  /**
   * The oldest event goes (an answer leaves a stand-in); the oldest stand-in only once no event is
   * left or stand-ins hold half the budget: a stand-in is what keeps a host from waiting in silence
   * for an answer, and small — but lost answers must not crowd out the events still to come.
   */
  private dropOldest(): void {
    if (this.first === this.order.length || this.standInBytesHeld * 2 > this.maxBytes) {
      this.dropOldestStandIn();
      return;
    }
    const oldest = this.order[this.first]!;
    this.order[this.first++] = undefined;
    this.bytes -= oldest.bytes;
    const record = this.streams.get(oldest.stream);
    if (record !== undefined) {
      if (oldest.answers !== undefined) this.loseAnswer(record, oldest.stream, oldest.seq, oldest.answers);
      // The oldest of the session is the oldest of its stream.
      record.kept[record.first++] = undefined;
      compact(record.kept, record.first, (n) => {
        record.first = n;
      });
      if (record.finished && record.first === record.kept.length) this.forget(oldest.stream, record);
    }
    compact(this.order, this.first, (n) => {
      this.first = n;
    });
  }

  private dropOldestStandIn(): void {
    const place = this.lostOrder[this.lostFirst++];
    if (place === undefined) {
      // Nothing left to let go: the count is what stand-ins of forgotten streams left behind.
      this.bytes = 0;
      this.standInBytesHeld = 0;
      return;
    }
    if (this.lostOf(place.stream)?.delete(place.seq) === true) {
      this.bytes -= this.standInBytes;
      this.standInBytesHeld -= this.standInBytes;
    }
    compact(this.lostOrder, this.lostFirst, (n) => {
      this.lostFirst = n;
    });
  }
}

/** Drops a queue's consumed head once it is most of the array (amortized O(1) per item). */
function compact(items: unknown[], first: number, setFirst: (first: number) => void): void {
  if (first < 1024 || first * 2 < items.length) return;
  items.splice(0, first);
  setFirst(0);
}

function seqOf(event: ReplayEvent): number {
  return Number(event.id.slice(event.id.indexOf(".") + 1));
}
