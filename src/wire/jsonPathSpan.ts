/**
 * Where the value at a change record's path (`contents[0]`, `content[2].resource`) stands in a
 * JSON text: the record's entry as it came over the wire, or as it went out.
 */
import { itemSpans, memberSpans, skipSpace, type Span, valueEnd } from "./jsonText.js";

/** A member name, or an index in brackets. */
const STEP = /([^.[\]]+)|\[(\d+)\]/g;

/** The whole text's value. */
export function rootSpan(text: string): Span {
  const start = skipSpace(text, 0);
  return { start, end: valueEnd(text, start) };
}

/** The span of `path` below the value at `from` (`"result"` below the message: a member). Undefined when absent. */
export function spanAtPath(text: string, from: Span, path: string): Span | undefined {
  let span: Span | undefined = from;
  for (const step of path.matchAll(STEP)) {
    const open = text.charCodeAt(span.start);
    if (step[2] !== undefined) span = open === 0x5b ? itemSpans(text, span.start)[Number(step[2])] : undefined;
    else span = open === 0x7b ? memberSpans(text, span.start).get(step[1]!) : undefined;
    if (span === undefined) return undefined;
  }
  return span;
}
