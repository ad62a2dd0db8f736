/**
 * A change record's sizes as the wire carried them. The engine measures an entry as
 * `JSON.stringify` would write it; a server may write it otherwise — every non-ASCII character
 * as `\uXXXX` (Python's default), `\/`, spaces — and an entry the proxy leaves as it was goes
 * on in the text it came in. So the records of a message that arrived as text are measured
 * there: before, the entry's text as it came; after, its text as it goes out (an entry left as
 * it was: the same). The logs, metrics and reports then count the bytes that really crossed.
 *
 * What goes out is serialized here once and kept as the message's wire text, so the host
 * transport writes that very text instead of serializing it a second time. A message read with
 * raw strings (a big read) is measured in the text around them, each literal counted as the bytes
 * it came in; what goes out of it is not serialized here (that would join a big read into one
 * string): a changed entry keeps the engine's "after" — the proxy writes what it changed as
 * `JSON.stringify` does, and a literal it kept as it came, which the engine counts as written. A
 * message built in process keeps the engine's measure. A dry run's "after", which never went out,
 * is worked out as it would have gone (`wouldHaveSent`; a big read's, the engine's "after", as
 * when it is made). Each text is walked once for all its records.
 */
import { isChange, type ChangeRecord, WARNING_ACTIONS } from "../normalize/change.js";
import { JsonSpans } from "../wire/jsonPathSpan.js";
import type { Span } from "../wire/jsonText.js";
import { messageText } from "./wireJson.js";
import { arrivedAsStringified, rememberOrigin } from "./wireOrigin.js";
import { RAW_MARK } from "../wire/rawJson.js";
import { rememberWireText, type WireSkeleton, wireSkeletonOf, wireTextOf } from "./wireText.js";

/** `changes` measured on the wire; `original` arrived as text, `sent` is what goes on (maybe `original`). */
export function measuredOnWire(
  changes: readonly ChangeRecord[],
  original: unknown,
  sent: unknown,
  key: "result" | "params",
): readonly ChangeRecord[] {
  const text = wireTextOf(original);
  if (text === undefined) {
    const skeleton = wireSkeletonOf(original);
    return skeleton === undefined ? changes : measuredInSkeleton(changes, skeleton, key);
  }
  let output: JsonSpans | undefined;
  let serialized = false;
  const outputSpans = (): JsonSpans | undefined => {
    // `sent` is the original, or rebuilt from it (never a message read as a skeleton of raw strings).
    if (serialized || sent === original) return output;
    serialized = true;
    try {
      // Its untouched parts go out as the text they came in (wireOrigin.ts), as the transport would write them.
      rememberOrigin(sent, original);
      const out = messageText(sent);
      rememberWireText(sent, out);
      output = new JsonSpans(out);
    } catch {
      // Not serializable here: the transport says so; the engine's sizes stand.
    }
    return output;
  };
  // A changed message whose original was written as JSON.stringify writes it (most servers):
  // the engine measured exactly what crossed, both ways. Found while serializing what goes out.
  if (sent !== original && outputSpans() !== undefined && arrivedAsStringified(original as object) === true)
    return changes;
  const input = new JsonSpans(text);
  return changes.map((record) => {
    const entry = below(input, key, record.path);
    if (entry === undefined) return record;
    const before = input.bytes(entry);
    let after: number | undefined;
    if (!isChange(record) || WARNING_ACTIONS.has(record.action)) after = before;
    else if (record.applied) {
      const out = outputSpans();
      const span = out === undefined ? undefined : below(out, key, record.path);
      if (span !== undefined) after = out!.bytes(span);
    } else after = wouldHaveSent(record, input, entry);
    return resized(record, before, after);
  });
}

/**
 * A dry run's entry as it would have gone out: the engine's figure (every member as
 * `JSON.stringify` writes it), with each number, object and array member — what the proxy writes
 * as the text it came in when it rebuilds an entry around them (wireOrigin.ts) — counted as it
 * came instead. Strings are written anew either way. Undefined where the entry is not an object.
 */
function wouldHaveSent(record: ChangeRecord, input: JsonSpans, entry: Span): number | undefined {
  const members = input.membersOf(entry);
  if (members === undefined) return undefined;
  let after = record.bytesAfter;
  for (const span of members.values()) {
    const first = input.text.charCodeAt(span.start);
    // A string (0x22), true, false or null is written as JSON.stringify writes it.
    if (first === 0x22 || first === 0x74 || first === 0x66 || first === 0x6e) continue;
    const text = input.text.slice(span.start, span.end);
    after += Buffer.byteLength(text, "utf8") - Buffer.byteLength(JSON.stringify(JSON.parse(text)), "utf8");
  }
  return after;
}

/** `changes` of a message read with raw strings: "before" as the entry came, its literals as written. */
function measuredInSkeleton(
  changes: readonly ChangeRecord[],
  skeleton: WireSkeleton,
  key: "result" | "params",
): readonly ChangeRecord[] {
  const input = new JsonSpans(skeleton.text);
  const standIn = new RegExp(`"${RAW_MARK}(\\d+)"`, "g");
  return changes.map((record) => {
    const entry = below(input, key, record.path);
    if (entry === undefined) return record;
    let before = input.bytes(entry);
    for (const match of skeleton.text.slice(entry.start, entry.end).matchAll(standIn))
      before += (skeleton.raws[Number(match[1])]?.byteLength ?? match[0].length) - match[0].length;
    const kept = !isChange(record) || WARNING_ACTIONS.has(record.action);
    // Made or not (a dry run), a changed entry is the engine's "after": what the proxy writes.
    return resized(record, before, kept ? before : record.bytesAfter);
  });
}

/**
 * `record` with the sizes the wire gave; `after` undefined where it could not be measured (what
 * went out did not serialize here, a dry run's entry is not an object): the engine's "after",
 * shifted by what the wire's writing added to the entry.
 */
function resized(record: ChangeRecord, before: number, measuredAfter: number | undefined): ChangeRecord {
  const after = measuredAfter ?? record.bytesAfter + (before - record.bytesBefore);
  if (before === record.bytesBefore && after === record.bytesAfter) return record;
  return { ...record, bytesBefore: before, bytesAfter: after, saved: before - after };
}

/**
 * A record's entry in a message's text. Result paths are below `result` (`contents[0]`); a
 * request's name `params` themselves (`params.messages[0].content`).
 */
function below(spans: JsonSpans, key: string, path: string): Span | undefined {
  const root = spans.root;
  if (path.startsWith(`${key}.`) || path.startsWith(`${key}[`)) return spans.at(root, path);
  const base = spans.at(root, key);
  return base === undefined ? undefined : spans.at(base, path);
}
