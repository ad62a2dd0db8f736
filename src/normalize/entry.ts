/**
 * One resource entry (`{uri, mimeType?, text}` or `{uri, mimeType?, blob}`) in, its canonical
 * form and a change record out. Total: any input, no exceptions.
 */
import { decideBytes, dropForeignCharset, type BytesContext, type BytesDecision } from "./decideBytes.js";
import { EntryContext, type EntryResult, type PayloadMeasure } from "./entryContext.js";
import { decodeStrictBase64, decodeStrictBase64Ascii, encodeBase64, isCompactBase64Length } from "./base64.js";
import { jsonStringBytes, jsonUtf8Bytes } from "../wire/jsonSize.js";
import { canonicalCharset, isSevenBitCharset } from "./charset.js";
import type { DetectionBudget } from "./charsetDetection.js";
import { getParam, isOverlongMediaType, type MediaType, overlongMediaTypeReason, parseMediaType } from "./mediaType.js";
import { mimeOutcome } from "./mimeChange.js";
import { isGenericType, isTextualType, typeFromUri } from "./mimeTables.js";
import { isJsonObject, type JsonObject, rebuild } from "./objects.js";
import type { Policy, ResolvedPolicy } from "./policy.js";
import { isRawJsonString, RawJsonString } from "../wire/rawJson.js";
import { lossyCount, lossyReason } from "./lossyText.js";
import { isAsciiString, isBinaryString, recoverEscapedBytes, surrogateShape } from "./textEvidence.js";

export type { EntryResult } from "./entryContext.js";

const TEXT_PLAIN = parseMediaType("text/plain")!;
/** JSON length of a blob string: compact base64 needs no escaping, so its length is enough. */
function blobJsonBytes(blob: string, bytes: Buffer | null): number {
  return bytes !== null && isCompactBase64Length(blob, bytes.length) ? blob.length + 2 : jsonStringBytes(blob);
}

function textJsonBytes(decision: Extract<BytesDecision, { kind: "text" }>): number {
  return decision.utf8 === undefined ? jsonStringBytes(decision.text) : jsonUtf8Bytes(decision.utf8);
}

/** The JSON size of an entry's payload, measured only when a record needs it. */
class PayloadJson implements PayloadMeasure {
  constructor(
    private readonly entry: JsonObject,
    private readonly hasBlob: boolean,
    private readonly payload: string,
    private readonly bytes: Buffer | null,
  ) {}

  jsonBytes(): number {
    // A literal read as bytes goes on as those bytes when kept: counted as written.
    const literal = this.entry[this.hasBlob ? "blob" : "text"];
    if (isRawJsonString(literal)) return literal.jsonBytes();
    return this.hasBlob ? blobJsonBytes(this.payload, this.bytes) : jsonStringBytes(this.payload);
  }
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

/** `budget`: what charset detection may read for the message the entry is in (its own, alone). */
export function normalizeResourceEntry(
  entry: unknown,
  policy: Policy,
  path: string,
  budget: DetectionBudget = policy.detectionBudget(),
): EntryResult {
  if (!isJsonObject(entry)) return { entry, record: null };
  const hasText = typeof entry.text === "string" || isRawJsonString(entry.text);
  const hasBlob = typeof entry.blob === "string" || isRawJsonString(entry.blob);
  if (hasText === hasBlob) return { entry, record: null };

  const declared = parseMediaType(entry.mimeType);
  const settings = policy.for(entry.uri, declared);
  const key = hasBlob ? "blob" : "text";
  // A big blob read as bytes (wire/rawJson.ts) stays bytes: its JSON length is its literal's, and
  // UTF-8 text it holds goes out as a raw literal too, never as a JS string.
  const plainBlob = hasBlob ? plainAsciiBlob(entry.blob) : null;
  const payload = plainBlob === null ? asString(entry[key]) : "";
  // The limit is in bytes: a string payload counts its UTF-8 (at most 3 bytes a code unit, so a
  // short one needs no count), a raw literal its own bytes.
  const max = settings.maxNormalizeBytes;
  const payloadSize =
    plainBlob !== null
      ? (entry.blob as RawJsonString).byteLength - 2
      : payload.length * 3 > max
        ? Buffer.byteLength(payload, "utf8")
        : undefined;
  const tooLarge = payloadSize !== undefined && payloadSize > max;
  const overlongType = isOverlongMediaType(entry.mimeType);
  const bytes =
    !hasBlob || tooLarge || overlongType
      ? null
      : plainBlob === null
        ? decodeStrictBase64(payload)
        : decodeStrictBase64Ascii(plainBlob);
  const measure = new PayloadJson(entry, hasBlob, payload, bytes);
  const ctx = new EntryContext(entry, path, declared, settings, key, measure, policy.recordUnchanged, budget);

  if (tooLarge)
    return ctx.unchanged(
      "skip-too-large",
      `${key} of ${payloadSize} bytes is over maxNormalizeBytes (${settings.maxNormalizeBytes})`,
    );
  if (overlongType) return ctx.unchanged("skip-too-large", overlongMediaTypeReason(entry.mimeType as string));
  if (!hasBlob) return decideTextEntry(ctx, payload);
  if (bytes === null) return ctx.unchanged("skip-invalid-base64", "blob is not standard base64");
  return decideBlobEntry(ctx, bytes, plainBlob !== null);
}

/** A `blob` entry whose bytes decoded: text comes out as `text`, anything else keeps its blob. */
function decideBlobEntry(ctx: EntryContext, bytes: Buffer, readAsBytes: boolean): EntryResult {
  const { entry, settings } = ctx;
  const decision = decideBytes(bytes, bytesContextOf(ctx));
  ctx.detected = decision.detected;
  if (decision.kind !== "text") return applyMime(ctx, decision, "blob");
  const action = decision.transcoded ? "transcode" : "unwrap-blob";
  if (!(decision.transcoded ? settings.transcode : settings.unwrapBlobs))
    return blobMimeOnly(ctx, `${decision.reason}; ${action} is off`);
  // With fixMime off an unwrapped blob keeps its declared type; transcoded text still loses a
  // charset that no longer describes it.
  const mime =
    settings.fixMime || decision.transcoded ? mimeOutcome(entry.mimeType, decision.mime) : { value: undefined };
  // Last use of the decoded bytes: ofUtf8 may escape them in place (not in dryRun, which sends the original).
  const raw =
    readAsBytes && decision.utf8 !== undefined && !settings.dryRun ? RawJsonString.ofUtf8(decision.utf8) : null;
  const text = raw ?? decision.text;
  const next = rebuild(entry, { text, ...(mime.value === undefined ? {} : { mimeType: mime.value }) }, [
    "blob",
    "text",
  ]);
  return ctx.changed(action, decision.reason, next, "text", raw?.byteLength ?? textJsonBytes(decision));
}

/** A `text` entry: warnings for what cannot be carried, bytes hidden in the string recovered, else its type fixed. */
function decideTextEntry(ctx: EntryContext, payload: string): EntryResult {
  const { settings, declared } = ctx;
  const shape = surrogateShape(payload);
  if (shape === "unrepresentable")
    return ctx.unchanged("warn-unrepresentable", "text has lone surrogates that UTF-8 cannot carry");
  const lossy = lossyCount(payload);
  if (lossy !== null) return ctx.unchanged("warn-lossy-text", lossyReason(lossy));
  if (shape === "escaped-bytes")
    return decideRecoveredBytes(ctx, recoverEscapedBytes(payload), "surrogate-escaped bytes");
  // Its type as the bytes of a blob are judged: declared, else the URI's extension.
  const typed = !isGenericType(declared) ? declared : parseMediaType(typeFromUri(ctx.entry.uri));
  const declaredTextual = !isGenericType(typed) && isTextualType(typed!, settings.textual);
  if (isBinaryString(payload, declaredTextual))
    return decideRecoveredBytes(ctx, Buffer.from(payload, "latin1"), "binary string", payload);
  return ordinaryText(ctx, payload);
}

/** A `text` entry that is what it says: only its type may be fixed. */
function ordinaryText(ctx: EntryContext, payload: string): EntryResult {
  const { entry, settings, declared } = ctx;
  if (!settings.fixMime) return ctx.unchanged("none", "ordinary text");
  return applyMime(
    ctx,
    { kind: "blob", mime: textEntryMime(declared, entry.uri, settings, payload), reason: "ordinary text" },
    "text",
  );
}

/**
 * Bytes recovered from a `text` string (`how` says from what): decided as a blob's would be. Bytes
 * that read back as the very text they came from (`original`: ASCII with control characters) hid
 * nothing: that text is ordinary, as a second pass over what a first one unwrapped finds it.
 */
function decideRecoveredBytes(ctx: EntryContext, recovered: Buffer, how: string, original?: string): EntryResult {
  const { entry, settings } = ctx;
  const decision = decideBytes(recovered, bytesContextOf(ctx));
  ctx.detected = decision.detected;
  if (decision.kind === "text" && original !== undefined && decision.text === original)
    return ordinaryText(ctx, original);
  if (decision.kind === "text") {
    if (!settings.transcode) return ctx.unchanged("none", `${how}; transcode is off`);
    const mime = mimeOutcome(entry.mimeType, decision.mime);
    const next = rebuild(entry, {
      text: decision.text,
      ...(mime.value === undefined ? {} : { mimeType: mime.value }),
    });
    return ctx.changed("transcode", `${how}: ${decision.reason}`, next, "text", textJsonBytes(decision));
  }
  if (!settings.reencodeBinaryText) return ctx.unchanged("none", `${how}; reencodeBinaryText is off`);
  const blob = encodeBase64(recovered);
  const mime = mimeOutcome(entry.mimeType, settings.fixMime ? decision.mime : ctx.declared);
  const next = rebuild(entry, { blob, ...(mime.value === undefined ? {} : { mimeType: mime.value }) }, [
    "text",
    "blob",
  ]);
  return ctx.changed("reencode-blob", `${how}: ${decision.reason}`, next, "blob", blob.length + 2);
}

/** A text entry's type: the declared one (foreign charset dropped unless preserved), else extension or text/plain. */
function textEntryMime(
  declared: MediaType | null,
  uri: unknown,
  settings: ResolvedPolicy,
  text: string,
): MediaType | null {
  if (isGenericType(declared)) {
    const fromExtension = parseMediaType(typeFromUri(uri));
    return fromExtension !== null && isTextualType(fromExtension, settings.textual) ? fromExtension : TEXT_PLAIN;
  }
  // A 7-bit charset's label is kept: the characters are its escape sequences, and the label is
  // the only way to read them.
  const charset = getParam(declared!, "charset");
  if (charset !== undefined && isSevenBitCharset(canonicalCharset(charset)) && isAsciiString(text)) return declared;
  return settings.charset === "transcode" ? dropForeignCharset(declared!) : declared;
}

/** What deciding an entry's bytes needs: its declared type, URI, settings and the message's detection budget. */
function bytesContextOf(ctx: EntryContext): BytesContext {
  return { declared: ctx.declared, uri: ctx.entry.uri, policy: ctx.settings, budget: ctx.budget };
}

/** Only the mimeType may change: the payload (in member `key`) stays exactly as it was. */
function applyMime(ctx: EntryContext, decision: Extract<BytesDecision, { kind: "blob" }>, key: string): EntryResult {
  const unchanged = decision.budgetSpent ? "skip-detection-budget" : "none";
  if (!ctx.settings.fixMime) return ctx.unchanged(unchanged, decision.reason);
  const mime = mimeOutcome(ctx.entry.mimeType, decision.mime);
  if (mime.action === null) return ctx.unchanged(unchanged, decision.reason);
  return ctx.changed(mime.action, decision.reason, rebuild(ctx.entry, { mimeType: mime.value }), key, ctx.payloadBytes);
}

/** A blob that stays a blob although it holds text (its rule is off): only its type may change. */
function blobMimeOnly(ctx: EntryContext, reason: string): EntryResult {
  const { declared } = ctx;
  const fromExtension = parseMediaType(typeFromUri(ctx.entry.uri));
  const mime = !isGenericType(declared) ? declared : !isGenericType(fromExtension) ? fromExtension : declared;
  return applyMime(ctx, { kind: "blob", mime, reason }, "blob");
}
