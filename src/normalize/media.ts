/**
 * `image` / `audio` content blocks (`{type, data, mimeType}`) and `resource_link` items.
 * Only `mimeType` ever changes; `data` is never touched. A signature is read from the
 * first bytes only, so a 50 MiB screenshot costs the same as a 50-byte one.
 */
import { isUtf8 } from "node:buffer";
import { decodeStrictBase64 } from "./base64.js";
import type { ChangeAction, ChangeRecord } from "./change.js";
import { jsonBytes, jsonStringBytes } from "../wire/jsonSize.js";
import {
  isOverlongMediaType,
  type MediaType,
  overlongMediaTypeReason,
  parseMediaType,
  withEssence,
} from "./mediaType.js";
import { mimeOutcome, mimeString } from "./mimeChange.js";
import { isGenericType, isTextualType, typeFromUri } from "./mimeTables.js";
import { isJsonObject, rebuild, type JsonObject } from "./objects.js";
import type { Policy } from "./policy.js";
import { isRawJsonString, type RawJsonString } from "../wire/rawJson.js";
import { agreesWithSignature, detectSignature, type Signature } from "./signature.js";
import { hasBinaryControlBytes } from "./textEvidence.js";

export interface BlockResult {
  readonly block: unknown;
  readonly record: ChangeRecord | null;
}

/** Enough base64 for every signature the table reads (ftyp brands, Matroska doctype). */
const HEAD_CHARS = 344;

/**
 * The first bytes of `data`. Data that fits in the head is validated whole; longer data only
 * in its head (`data` is forwarded untouched either way).
 */
function headBytes(data: string | RawJsonString): { bytes: Buffer; whole: boolean } | null {
  if (typeof data !== "string") {
    // A raw literal: its first characters are its first bytes when it is plain ASCII.
    const body = data.plainAscii();
    return body === null
      ? headBytes(data.value())
      : headOf(firstBytes(body, HEAD_CHARS * 2).toString("ascii"), data.byteLength - 2);
  }
  return headOf(data.slice(0, HEAD_CHARS * 2), data.length);
}

function firstBytes(parts: readonly Buffer[], count: number): Buffer {
  const head: Buffer[] = [];
  let have = 0;
  for (const part of parts) {
    if (have >= count) break;
    head.push(part.subarray(0, count - have));
    have += head[head.length - 1]!.length;
  }
  return Buffer.concat(head);
}

function headOf(window: string, length: number): { bytes: Buffer; whole: boolean } | null {
  const compact = window.replace(/[\t\n\r ]/g, "");
  const whole = window.length === length && compact.length <= HEAD_CHARS;
  const bytes = decodeStrictBase64(whole ? compact : compact.slice(0, HEAD_CHARS & ~3));
  return bytes === null ? null : { bytes, whole };
}

/** JSON bytes of `data` without its quotes. */
function dataJsonBytes(data: unknown): number {
  if (typeof data === "string") return jsonStringBytes(data) - 2;
  return isRawJsonString(data) ? data.jsonBytes() - 2 : 0;
}

/** UTF-8 text without binary controls (a head cut mid-character may drop up to 3 bytes). */
function looksLikeText(head: Buffer, whole: boolean): boolean {
  if (head.length === 0 || head.indexOf(0) !== -1) return false;
  for (let cut = 0; cut <= (whole ? 0 : Math.min(3, head.length - 1)); cut++) {
    const body = head.subarray(0, head.length - cut);
    if (isUtf8(body)) return !hasBinaryControlBytes(body);
  }
  return false;
}

/** The signature's type as the block's kind: audio blocks name WebM/Ogg/MP4 video containers as audio. */
function asKind(kind: "image" | "audio", sig: Signature): string | null {
  const top = sig.mime.slice(0, sig.mime.indexOf("/"));
  if (kind === "image") return top === "image" ? sig.mime : null;
  if (top === "audio") return sig.mime;
  if (sig.family === "matroska" && sig.mime === "video/webm") return "audio/webm";
  if (sig.family === "ogg") return "audio/ogg";
  if (sig.family === "isobmff") return "audio/mp4";
  return null;
}

function recordFor(
  block: JsonObject,
  next: JsonObject,
  action: ChangeAction,
  reason: string,
  path: string,
  applied: boolean,
): ChangeRecord {
  // `data` is usually plain base64 but may carry MIME line breaks, which JSON escapes.
  const dataBytes = dataJsonBytes(block.data);
  const before = jsonBytes({ ...block, data: "" }) + dataBytes;
  const after = next === block ? before : jsonBytes({ ...next, data: "" }) + dataBytes;
  return {
    action,
    path,
    uri: null,
    mimeBefore: mimeString(block.mimeType),
    mimeAfter: mimeString(next.mimeType),
    bytesBefore: before,
    bytesAfter: after,
    saved: before - after,
    reason,
    applied,
  };
}

export function normalizeMediaBlock(block: unknown, policy: Policy, path: string): BlockResult {
  if (
    !isJsonObject(block) ||
    (block.type !== "image" && block.type !== "audio") ||
    (typeof block.data !== "string" && !isRawJsonString(block.data))
  ) {
    return { block, record: null };
  }
  const kind = block.type;
  const declared = parseMediaType(block.mimeType);
  const settings = policy.for(null, declared);
  if (!settings.media) return { block, record: null };
  const applied = !settings.dryRun;
  const keep = (action: ChangeAction, reason: string): BlockResult => ({
    block,
    record: recordFor(block, block, action, reason, path, applied),
  });
  const change = (next: MediaType, reason: string): BlockResult => {
    const outcome = mimeOutcome(block.mimeType, next);
    if (outcome.action === null) return keep("none", reason);
    const rebuilt = rebuild(block, { mimeType: outcome.value });
    // A block with no mimeType at all gets one (`fill-mime`), as a resource entry does.
    const record = recordFor(block, rebuilt, outcome.action, reason, path, applied);
    return { block: applied ? rebuilt : block, record };
  };

  if (isOverlongMediaType(block.mimeType)) return keep("skip-too-large", overlongMediaTypeReason(block.mimeType));
  const head = headBytes(block.data);
  if (head === null) return keep("skip-invalid-base64", `${kind} data is not standard base64`);
  const sig = detectSignature(head.bytes);
  if (sig === null) {
    // A block whose bytes are not media at all (text) keeps its type and is warned
    // about; SVG and other textual image types are text by definition.
    if (!isTextualType(declared, settings.textual) && looksLikeText(head.bytes, head.whole)) {
      return keep("warn-media-mismatch", `${kind} block holds text`);
    }
    return declared === null
      ? keep("warn-media-mismatch", `no known ${kind} signature and no mimeType`)
      : change(declared, `no known ${kind} signature; declared type kept`);
  }
  const wanted = asKind(kind, sig);
  if (wanted === null) {
    return keep("warn-media-mismatch", `${kind} block holds ${sig.mime} bytes; type kept`);
  }
  if (
    declared !== null &&
    !isGenericType(declared) &&
    agreesWithSignature(declared.essence, declared.suffix, sig) &&
    declared.type === kind
  ) {
    return change(declared, `${sig.mime} signature agrees`);
  }
  const next = declared === null ? parseMediaType(wanted)! : withEssence(declared, wanted);
  return change(next, `${sig.mime} signature`);
}

/** `resource_link` items: a missing or generic `mimeType` filled from the URI's extension. */
export function normalizeResourceLink(link: unknown, policy: Policy, path: string): BlockResult {
  if (!isJsonObject(link) || link.type !== "resource_link") return { block: link, record: null };
  return fillListedMime(link, policy, path);
}

/** Entries of `resources/list`, `resources/templates/list` and resource links. */
export function fillListedMime(item: JsonObject, policy: Policy, path: string): BlockResult {
  if (isOverlongMediaType(item.mimeType)) return { block: item, record: null };
  const declared = parseMediaType(item.mimeType);
  const uri = typeof item.uri === "string" ? item.uri : typeof item.uriTemplate === "string" ? item.uriTemplate : null;
  const settings = policy.for(uri, declared);
  if (!settings.fixMime || !isGenericType(declared)) return { block: item, record: null };
  const fromExtension = parseMediaType(typeFromUri(uri));
  if (isGenericType(fromExtension)) return { block: item, record: null };
  const outcome = mimeOutcome(item.mimeType, fromExtension);
  if (outcome.action === null) return { block: item, record: null };
  const next = rebuild(item, { mimeType: outcome.value });
  const before = jsonBytes(item);
  const after = jsonBytes(next);
  return {
    block: settings.dryRun ? item : next,
    record: {
      action: outcome.action,
      path,
      uri,
      mimeBefore: mimeString(item.mimeType),
      mimeAfter: outcome.value ?? null,
      bytesBefore: before,
      bytesAfter: after,
      saved: before - after,
      reason: "type from the URI's extension",
      applied: !settings.dryRun,
    },
  };
}
