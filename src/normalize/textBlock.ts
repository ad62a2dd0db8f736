/**
 * `{type: "text", text}` content blocks (tool results, prompt and sampling messages). The engine
 * never rewrites them; it only flags lossy text, so they produce a record only then.
 */
import type { ChangeRecord } from "./change.js";
import { lossyCountOf, lossyReason, textBlockJsonBytes } from "./lossyText.js";
import type { JsonObject } from "./objects.js";
import type { Policy } from "./policy.js";
import { isRawJsonString } from "../wire/rawJson.js";

export function lossyTextBlockRecord(block: JsonObject, policy: Policy, path: string): ChangeRecord | null {
  const text = block.text;
  if (typeof text !== "string" && !isRawJsonString(text)) return null;
  const count = lossyCountOf(text);
  if (count === null) return null;
  const bytes = textBlockJsonBytes(block);
  return {
    path,
    uri: null,
    mimeBefore: null,
    bytesBefore: bytes,
    applied: !policy.for(null, null).dryRun,
    action: "warn-lossy-text",
    reason: lossyReason(count),
    mimeAfter: null,
    bytesAfter: bytes,
    saved: 0,
  };
}
