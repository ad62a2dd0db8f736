/** Change records of the fit layer, shaped like the engine's (one per block changed or warned). */
import type { ChangeAction, ChangeRecord } from "../normalize/change.js";
import { jsonBytes } from "../wire/jsonSize.js";
import { mimeString } from "../normalize/mimeChange.js";
import { isRawJsonString } from "../wire/rawJson.js";

/** UTF-8 bytes of a block's JSON; a raw (byte-held) payload is counted without being decoded. */
export function blockJsonBytes(block: Record<string, unknown>): number {
  let raw = 0;
  let copy: Record<string, unknown> | null = null;
  for (const key of ["data", "blob", "text"]) {
    const value = block[key];
    if (isRawJsonString(value)) {
      copy ??= { ...block };
      copy[key] = "";
      raw += value.jsonBytes() - 2;
    }
  }
  return jsonBytes(copy ?? block) + raw;
}

/** A block's JSON bytes, or several blocks' as they sit in the content list (commas between). */
function blocksJsonBytes(blocks: Record<string, unknown> | readonly Record<string, unknown>[]): number {
  return Array.isArray(blocks)
    ? blocks.reduce((sum: number, block) => sum + blockJsonBytes(block) + 1, -1)
    : blockJsonBytes(blocks as Record<string, unknown>);
}

export function fitRecord(fields: {
  action: ChangeAction;
  path: string;
  uri?: string | null;
  /** The block changed; several, when they were replaced together. */
  before: Record<string, unknown> | readonly Record<string, unknown>[];
  after: Record<string, unknown> | readonly Record<string, unknown>[];
  mimeBefore?: unknown;
  mimeAfter?: unknown;
  reason: string;
  applied: boolean;
}): ChangeRecord {
  const bytesBefore = blocksJsonBytes(fields.before);
  const after = fields.after;
  const bytesAfter = after === fields.before ? bytesBefore : blocksJsonBytes(after);
  return {
    action: fields.action,
    path: fields.path,
    uri: fields.uri ?? null,
    mimeBefore: mimeString(fields.mimeBefore),
    mimeAfter: mimeString(fields.mimeAfter === undefined ? fields.mimeBefore : fields.mimeAfter),
    bytesBefore,
    bytesAfter,
    saved: bytesBefore - bytesAfter,
    reason: fields.reason,
    applied: fields.applied,
  };
}
