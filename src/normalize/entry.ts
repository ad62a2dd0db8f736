/**
 * One resource entry (`{uri, mimeType?, text}` or `{uri, mimeType?, blob}`) in, its canonical
 * form and a change record out. Total: any input, no exceptions.
 */
import type { ChangeAction, ChangeRecord } from "./change.js";
import { decideBytes, dropForeignCharset, type BytesDecision, type DetectedCharset } from "./decideBytes.js";
import { decodeStrictBase64, decodeStrictBase64Ascii, encodeBase64, isCompactBase64Length } from "./base64.js";
import { entryJsonBytes, jsonStringBytes, jsonUtf8Bytes } from "../wire/jsonSize.js";
import { parseMediaType, type MediaType } from "./mediaType.js";
import { mimeOutcome, mimeString } from "./mimeChange.js";
import { isGenericType, isTextualType, typeFromUri } from "./mimeTables.js";
import { isJsonObject, rebuild, type JsonObject } from "./objects.js";
import type { Policy, ResolvedPolicy } from "./policy.js";
import { isRawJsonString, RawJsonString } from "../wire/rawJson.js";
import { lossyCount, lossyReason } from "./lossyText.js";
import { isBinaryString, recoverEscapedBytes, surrogateShape } from "./textEvidence.js";

export interface EntryResult {
  /** The entry to send on: the original object itself when nothing changes (or in dryRun). */
  readonly entry: unknown;
  /** Null when the value is not a resource entry at all. */
  readonly record: ChangeRecord | null;
}

const TEXT_PLAIN = parseMediaType("text/plain")!;
/** JSON length of a blob string: compact base64 needs no escaping, so its length is enough. */
function blobJsonBytes(blob: string, bytes: Buffer | null): number {
  return bytes !== null && isCompactBase64Length(blob, bytes.length) ? blob.length + 2 : jsonStringBytes(blob);
}

function textJsonBytes(decision: Extract<BytesDecision, { kind: "text" }>): number {
  return decision.utf8 === undefined ? jsonStringBytes(decision.text) : jsonUtf8Bytes(decision.utf8);
}

/**
 * The ASCII bytes of a raw `blob` literal that has no escapes (plain base64 as servers send it):
 * such a blob is decoded from its bytes. Null for every other payload, which is read as a string.
 */
function plainAsciiBlob(value: unknown): Buffer[] | null {
  return isRawJsonString(value) ? value.plainAscii() : null;
}

/** A payload as a JS string: raw strings other than plain blobs are decoded here. */
function asString(value: unknown): string {
  return isRawJsonString(value) ? value.value() : (value as string);
}

export function normalizeResourceEntry(entry: unknown, policy: Policy, path: string): EntryResult {
  if (!isJsonObject(entry)) return { entry, record: null };
  const hasText = typeof entry.text === "string" || isRawJsonString(entry.text);
  const hasBlob = typeof entry.blob === "string" || isRawJsonString(entry.blob);
  if (hasText === hasBlob) return { entry, record: null };

  const declared = parseMediaType(entry.mimeType);
  const settings = policy.for(entry.uri, declared);
  const key = hasBlob ? "blob" : "text";
  // A big blob read as bytes (rawJson.ts) stays bytes: its JSON length is its literal's, and
  // UTF-8 text it holds goes out as a raw literal too, never as a JS string.
  const plainBlob = hasBlob ? plainAsciiBlob(entry.blob) : null;
  const payload = plainBlob === null ? asString(entry[key]) : "";
  // The limit is in bytes: a string payload counts its UTF-8, a raw literal its own bytes.
  const payloadSize =
    plainBlob === null ? Buffer.byteLength(payload, "utf8") : (entry.blob as RawJsonString).byteLength - 2;
  const bytes =
    !hasBlob || payloadSize > settings.maxNormalizeBytes
      ? null
      : plainBlob === null
        ? decodeStrictBase64(payload)
        : decodeStrictBase64Ascii(plainBlob);
  const payloadBytes =
    plainBlob !== null
      ? (entry.blob as RawJsonString).jsonBytes()
      : hasBlob
        ? blobJsonBytes(payload, bytes)
        : jsonStringBytes(payload);
  const bytesBefore = entryJsonBytes(entry, key, payloadBytes);
  const uri = typeof entry.uri === "string" ? entry.uri : null;
  const mimeBefore = mimeString(entry.mimeType);
  const applied = !settings.dryRun;
  // Set once the bytes' charset has been guessed: every record made after that carries it.
  let detected: DetectedCharset | undefined;
  // Written out, not spread from a shared base: a spread per record showed up in profiles.
  const record = (
    action: ChangeAction,
    reason: string,
    mimeAfter: string | null,
    bytesAfter: number,
  ): ChangeRecord => ({
    path,
    uri,
    mimeBefore,
    bytesBefore,
    applied,
    action,
    reason,
    mimeAfter,
    bytesAfter,
    saved: bytesBefore - bytesAfter,
    ...(detected === undefined ? {} : { detected }),
  });
  const unchanged = (action: ChangeAction, reason: string): EntryResult => ({
    entry,
    record: record(action, reason, mimeBefore, bytesBefore),
  });
  const changed = (
    action: ChangeAction,
    reason: string,
    next: JsonObject,
    nextKey: string,
    nextPayloadBytes: number,
  ): EntryResult => {
    const bytesAfter = entryJsonBytes(next, nextKey, nextPayloadBytes);
    return {
      entry: settings.dryRun ? entry : next,
      record: record(action, reason, mimeString(next.mimeType), bytesAfter),
    };
  };

  if (payloadSize > settings.maxNormalizeBytes) {
    return unchanged(
      "skip-too-large",
      `${key} of ${payloadSize} bytes is over maxNormalizeBytes (${settings.maxNormalizeBytes})`,
    );
  }

  if (hasBlob) {
    if (bytes === null) return unchanged("skip-invalid-base64", "blob is not standard base64");
    const decision = decideBytes(bytes, { declared, uri: entry.uri, policy: settings });
    detected = decision.detected;
    if (decision.kind === "text") {
      const action = decision.transcoded ? "transcode" : "unwrap-blob";
      if (decision.transcoded ? settings.transcode : settings.unwrapBlobs) {
        const mime = mimeOutcome(entry.mimeType, decision.mime);
        // Last use of the decoded bytes: ofUtf8 may escape them in place (not in dryRun, which sends the original).
        const raw =
          plainBlob !== null && decision.utf8 !== undefined && !settings.dryRun
            ? RawJsonString.ofUtf8(decision.utf8)
            : null;
        const text = raw ?? decision.text;
        const next = rebuild(entry, { text, ...(mime.value === undefined ? {} : { mimeType: mime.value }) }, [
          "blob",
          "text",
        ]);
        return changed(action, decision.reason, next, "text", raw?.byteLength ?? textJsonBytes(decision));
      }
      return blobMimeOnly(
        entry,
        declared,
        settings,
        `${decision.reason}; ${action} is off`,
        changed,
        unchanged,
        payloadBytes,
      );
    }
    return applyMime(entry, decision, settings, changed, unchanged, "blob", payloadBytes);
  }

  const shape = surrogateShape(payload);
  if (shape === "unrepresentable")
    return unchanged("warn-unrepresentable", "text has lone surrogates that UTF-8 cannot carry");
  const lossy = lossyCount(payload);
  if (lossy !== null) return unchanged("warn-lossy-text", lossyReason(lossy));
  const declaredTextual = !isGenericType(declared) && isTextualType(declared, settings.textual);
  let recovered: Buffer | null = null;
  let how = "";
  if (shape === "escaped-bytes") {
    recovered = recoverEscapedBytes(payload);
    how = "surrogate-escaped bytes";
  } else if (isBinaryString(payload, declaredTextual)) {
    recovered = Buffer.from(payload, "latin1");
    how = "binary string";
  }
  if (recovered !== null) {
    const decision = decideBytes(recovered, { declared, uri: entry.uri, policy: settings });
    detected = decision.detected;
    if (decision.kind === "text") {
      if (!settings.transcode) return unchanged("none", `${how}; transcode is off`);
      const mime = mimeOutcome(entry.mimeType, decision.mime);
      const next = rebuild(entry, {
        text: decision.text,
        ...(mime.value === undefined ? {} : { mimeType: mime.value }),
      });
      return changed("transcode", `${how}: ${decision.reason}`, next, "text", textJsonBytes(decision));
    }
    if (!settings.reencodeBinaryText) return unchanged("none", `${how}; reencodeBinaryText is off`);
    const blob = encodeBase64(recovered);
    const mime = mimeOutcome(entry.mimeType, settings.fixMime ? decision.mime : declared);
    const next = rebuild(entry, { blob, ...(mime.value === undefined ? {} : { mimeType: mime.value }) }, [
      "text",
      "blob",
    ]);
    return changed("reencode-blob", `${how}: ${decision.reason}`, next, "blob", blob.length + 2);
  }

  if (!settings.fixMime) return unchanged("none", "ordinary text");
  return applyMime(
    entry,
    { kind: "blob", mime: textEntryMime(declared, entry.uri, settings), reason: "ordinary text" },
    settings,
    changed,
    unchanged,
    "text",
    payloadBytes,
  );
}

type Changed = (
  action: ChangeAction,
  reason: string,
  next: JsonObject,
  nextKey: string,
  nextPayloadBytes: number,
) => EntryResult;
type Unchanged = (action: ChangeAction, reason: string) => EntryResult;

/** A text entry's type: the declared one (foreign charset dropped unless preserved), else extension or text/plain. */
function textEntryMime(declared: MediaType | null, uri: unknown, settings: ResolvedPolicy): MediaType | null {
  if (isGenericType(declared)) {
    const fromExtension = parseMediaType(typeFromUri(uri));
    return fromExtension !== null && isTextualType(fromExtension, settings.textual) ? fromExtension : TEXT_PLAIN;
  }
  return settings.charset === "transcode" ? dropForeignCharset(declared!) : declared;
}

/** Only the mimeType may change: the payload stays exactly as it was. */
function applyMime(
  entry: JsonObject,
  decision: Extract<BytesDecision, { kind: "blob" }>,
  settings: ResolvedPolicy,
  changed: Changed,
  unchanged: Unchanged,
  key: string,
  payloadBytes: number,
): EntryResult {
  if (!settings.fixMime) return unchanged("none", decision.reason);
  const mime = mimeOutcome(entry.mimeType, decision.mime);
  if (mime.action === null) return unchanged("none", decision.reason);
  return changed(mime.action, decision.reason, rebuild(entry, { mimeType: mime.value }), key, payloadBytes);
}

function blobMimeOnly(
  entry: JsonObject,
  declared: MediaType | null,
  settings: ResolvedPolicy,
  reason: string,
  changed: Changed,
  unchanged: Unchanged,
  payloadBytes: number,
): EntryResult {
  const fromExtension = parseMediaType(typeFromUri(entry.uri));
  const mime = !isGenericType(declared) ? declared : !isGenericType(fromExtension) ? fromExtension : declared;
  return applyMime(entry, { kind: "blob", mime, reason }, settings, changed, unchanged, "blob", payloadBytes);
}
