/**
 * Where the value at a change record's path (`contents[0]`, `content[2].resource`) stands in a
 * JSON text: the record's entry as it came over the wire, or as it went out. One `JsonSpans` per
 * text remembers each container it has taken apart, so the records of one message — thousands of
 * entries in one array — cost one walk of the text, not one each.
 */
import { itemSpans, memberSpans, skipSpace, type Span, valueEnd } from "./jsonText.js";

/** A member name, or an index in brackets. */
const STEP = /([^.[\]]+)|\[(\d+)\]/g;

export class JsonSpans {
  private readonly members = new Map<number, Map<string, Span>>();
  private readonly items = new Map<number, Span[]>();
  private rootSpan: Span | undefined;

  constructor(readonly text: string) {}

  /** The whole text's value. */
  get root(): Span {
    if (this.rootSpan === undefined) {
      const start = skipSpace(this.text, 0);
      this.rootSpan = { start, end: valueEnd(this.text, start) };
    }
    return this.rootSpan;
  }

  /** The span of `path` below the value at `from`; undefined when it is not there. */
  at(from: Span, path: string): Span | undefined {
    let span: Span | undefined = from;
    for (const step of path.matchAll(STEP)) {
      const open = this.text.charCodeAt(span.start);
      if (step[2] !== undefined) span = open === 0x5b ? this.itemsAt(span.start)[Number(step[2])] : undefined;
      else span = open === 0x7b ? this.membersAt(span.start).get(step[1]!) : undefined;
      if (span === undefined) return undefined;
    }
    return span;
  }

  /** The member spans of the object at `span`, by name; undefined when it is not an object. */
  membersOf(span: Span): ReadonlyMap<string, Span> | undefined {
    return this.text.charCodeAt(span.start) === 0x7b ? this.membersAt(span.start) : undefined;
  }

  /** UTF-8 bytes of the text at `span`. */
  bytes(span: Span): number {
    return Buffer.byteLength(this.text.slice(span.start, span.end), "utf8");
  }

  private membersAt(open: number): Map<string, Span> {
    let spans = this.members.get(open);
    if (spans === undefined) {
      spans = memberSpans(this.text, open);
      this.members.set(open, spans);
    }
    return spans;
  }

  private itemsAt(open: number): Span[] {
    let spans = this.items.get(open);
    if (spans === undefined) {
      spans = itemSpans(this.text, open);
      this.items.set(open, spans);
    }
    return spans;
  }
}
