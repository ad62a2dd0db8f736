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
 * raw strings (a big read), or built in process, keeps the engine's measure; so does a dry run's
 * "after", which never went out: the engine's figure, shifted by what the wire's writing added
 * to the entry.
 */
import { isChange, type ChangeRecord, WARNING_ACTIONS } from "../normalize/change.js";
import { rootSpan, spanAtPath } from "../wire/jsonPathSpan.js";
import type { Span } from "../wire/jsonText.js";
import { messageText } from "./wireJson.js";
import { arrivedAsStringified, rememberOrigin } from "./wireOrigin.js";
import { rememberWireText, wireSkeletonOf, wireTextOf } from "./wireText.js";

/** `changes` measured on the wire; `original` arrived as text, `sent` is what goes on (maybe `original`). */
export function measuredOnWire(
  changes: readonly ChangeRecord[],
  original: unknown,
  sent: unknown,
  key: "result" | "params",
): readonly ChangeRecord[] {
  const input = wireTextOf(original);
  if (input === undefined) return changes;
  let output: string | undefined;
  const outputText = (): string | undefined => {
    if (output !== undefined || sent === original || wireSkeletonOf(sent) !== undefined) return output;
    try {
      // Its untouched parts go out as the text they came in (wireOrigin.ts), as the transport would write them.
      rememberOrigin(sent, original);
      output = messageText(sent);
      rememberWireText(sent, output);
    } catch {
      // Not serializable here (nested too deep): the transport says so; the engine's sizes stand.
    }
    return output;
  };
  // A changed message whose original was written as JSON.stringify writes it (most servers):
  // the engine measured exactly what crossed, both ways. Found while serializing what goes out.
  if (sent !== original && outputText() !== undefined && arrivedAsStringified(original as object) === true)
    return changes;
  const inputBase = spanAtPath(input, rootSpan(input), key);
  if (inputBase === undefined) return changes;
  let outputBase: Span | undefined;
  return changes.map((record) => {
    const entry = spanAtPath(input, inputBase, record.path);
    if (entry === undefined) return record;
    const before = byteLength(input, entry);
    let after: number | undefined;
    if (!isChange(record) || WARNING_ACTIONS.has(record.action)) after = before;
    else if (record.applied) {
      const text = outputText();
      if (text !== undefined) outputBase ??= spanAtPath(text, rootSpan(text), key);
      const span = outputBase === undefined ? undefined : spanAtPath(text!, outputBase, record.path);
      if (span !== undefined) after = byteLength(text!, span);
    }
    after ??= record.bytesAfter + (before - record.bytesBefore);
    if (before === record.bytesBefore && after === record.bytesAfter) return record;
    return { ...record, bytesBefore: before, bytesAfter: after, saved: before - after };
  });
}

function byteLength(text: string, span: Span): number {
  return Buffer.byteLength(text.slice(span.start, span.end), "utf8");
}
