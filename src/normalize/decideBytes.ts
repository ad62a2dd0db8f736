/**
 * The decision for raw bytes — a decoded `blob`, or the bytes recovered from a binary string —
 * following the decision table (docs/architecture.md), row by row, in order.
 */
import { isAscii, isUtf8 } from "node:buffer";
import {
  canonicalCharset,
  charsetKnown,
  decodeStrict,
  decodingCharset,
  detectBom,
  isSevenBitCharset,
  isUtf8Family,
  isWideCharset,
} from "./charset.js";
import { type DetectionBudget, detectCharset } from "./charsetDetection.js";
import { getParam, parseMediaType, withParam, withoutParam, type MediaType } from "./mediaType.js";
import { isGenericType, isTextualType, typeFromUri } from "./mimeTables.js";
import type { ResolvedPolicy } from "./policy.js";
import { agreesWithSignature, detectSignature } from "./signature.js";
import { hasBinaryControlBytes, hasBinaryControls, isBinaryString, readsAsWideText } from "./textEvidence.js";

export type BytesDecision =
  | {
      readonly kind: "text";
      /** Decoded when read: a big UTF-8 payload written as bytes (rawJson.ts) never needs it. */
      readonly text: string;
      /** The UTF-8 encoding of `text` when the bytes were UTF-8 already (sizes the JSON cheaply). */
      readonly utf8: Buffer | undefined;
      readonly mime: MediaType;
      /** True when the bytes were in another encoding than UTF-8 (BOM-marked UTF-16/32, a legacy charset). */
      readonly transcoded: boolean;
      readonly reason: string;
      /** Set when the charset was detected from the bytes rather than declared or marked. */
      readonly detected?: DetectedCharset;
    }
  | {
      readonly kind: "blob";
      readonly mime: MediaType | null;
      readonly reason: string;
      readonly detected?: DetectedCharset;
      /** Its charset was not guessed for want of `limits.charsetDetectionBytes`: a warning, not `none`. */
      readonly budgetSpent?: true;
    };

/** A charset the engine guessed (charsetDetection.ts), for the change record. */
export interface DetectedCharset {
  readonly charset: string;
  readonly confidence: number;
}

export interface BytesContext {
  readonly declared: MediaType | null;
  readonly uri: unknown;
  readonly policy: ResolvedPolicy;
  /** What detection may still read for the message this entry is in. */
  readonly budget: DetectionBudget;
}

const TEXT_PLAIN = parseMediaType("text/plain")!;
const OCTET_STREAM = parseMediaType("application/octet-stream")!;

/**
 * The bytes decode exactly, to text with no binary controls, in the charset of a declared textual
 * type: what that type says is then believed over a signature of a few bits (`Signature.weak`).
 */
function readsInDeclaredCharset(bytes: Buffer, declared: MediaType | null, policy: ResolvedPolicy): boolean {
  if (declared === null || isGenericType(declared) || !isTextualType(declared, policy.textual)) return false;
  const param = getParam(declared, "charset");
  const charset = param === undefined ? undefined : canonicalCharset(param);
  if (charset === undefined || isUtf8Family(charset) || !charsetKnown(charset)) return false;
  const text = decodeStrict(bytes, decodingCharset(charset, bytes));
  return text !== null && !hasBinaryControls(text);
}

export function decideBytes(bytes: Buffer, ctx: BytesContext): BytesDecision {
  const { declared, policy } = ctx;

  const signature = detectSignature(bytes);
  if (signature !== null && !(signature.weak === true && readsInDeclaredCharset(bytes, declared, policy))) {
    const agrees =
      declared !== null &&
      !isGenericType(declared) &&
      agreesWithSignature(declared.essence, declared.suffix, signature);
    // A contradicted type's parameters are its own (`format=flowed`, `charset`): none go with the new one.
    const mime = agrees ? declared : parseMediaType(signature.mime)!;
    return { kind: "blob", mime, reason: `${signature.mime} signature` };
  }

  const fromExtension = parseMediaType(typeFromUri(ctx.uri));
  const effective = !isGenericType(declared) ? declared : !isGenericType(fromExtension) ? fromExtension : null;
  const textual = effective !== null && isTextualType(effective, policy.textual);
  const textCapable = effective === null || textual;
  const declaredCharsetParam = declared === null ? undefined : getParam(declared, "charset");
  const declaredCharset = declaredCharsetParam === undefined ? undefined : canonicalCharset(declaredCharsetParam);
  const legacy = declaredCharset !== undefined && !isUtf8Family(declaredCharset) ? declaredCharset : undefined;
  const preserve = policy.charset === "preserve";

  /** The type a text output carries: the textual type known, else text/plain; no foreign charset. */
  const textMime = (asciiText: boolean): MediaType => dropForeignCharset(textual ? effective! : TEXT_PLAIN, asciiText);
  const preservedBlob = (charset: string, reason: string, detected?: DetectedCharset): BytesDecision => {
    const base = textual ? effective! : (declared ?? TEXT_PLAIN);
    // A declared parameter that already names this charset is kept as written and where it
    // stands (charset names are case-insensitive, RFC 2046 §4.1.2): no fix-mime for show.
    const same = base === declared && declaredCharset === charset;
    return {
      kind: "blob",
      mime: same ? base : withParam(base, "charset", charset),
      reason,
      ...(detected === undefined ? {} : { detected }),
    };
  };
  /**
   * Text a second pass would take back to bytes (with no textual type to say otherwise, a string
   * of Latin-1 characters with binary controls or a binary format's start) is not made: the same
   * bytes without the mark or the charset stay bytes too.
   */
  const staysBytes = (text: string): boolean => !textual && isBinaryString(text, false);
  const transcoded = (
    text: string,
    charset: string,
    reason: string,
    detected?: DetectedCharset,
  ): BytesDecision | null => {
    if (text.indexOf("\u0000") !== -1 || staysBytes(text)) return null;
    if (preserve) return preservedBlob(charset, `${reason}; charset preserved`, detected);
    return {
      kind: "text",
      text,
      utf8: undefined,
      mime: textMime(false),
      transcoded: true,
      reason,
      ...(detected === undefined ? {} : { detected }),
    };
  };

  if (textCapable) {
    const bom = detectBom(bytes);
    if (bom !== null) {
      const body = bytes.subarray(bom.length);
      if (bom.charset === "utf-8") {
        // Binary controls after the mark are text only where the type says so: unwrapped here,
        // such text would go back to a blob on a second pass (a text entry is judged the same way).
        const text = isUtf8(body) && body.indexOf(0) === -1 && (textual || !hasBinaryControlBytes(body));
        if (text && staysBytes(body.toString("utf8")))
          return {
            kind: "blob",
            mime: blobMime(declared, fromExtension),
            reason: "UTF-8 with BOM, but binary after it",
          };
        if (text) return utf8Text(body, textMime(isAscii(body)), "UTF-8 with BOM");
      } else {
        // On its own word (no textual type, no wide charset declared) the mark is believed only
        // when what follows reads as text: a binary file may start with the same bytes, and
        // nearly any bytes decode as UTF-16.
        const text = decodeStrict(body, bom.charset);
        const declaredWide = legacy !== undefined && isWideCharset(legacy);
        if (text !== null && !textual && !declaredWide && !readsAsWideText(text))
          return {
            kind: "blob",
            mime: blobMime(declared, fromExtension),
            reason: `${bom.charset.toUpperCase()} BOM, but what it decodes to does not read as text`,
          };
        const decided = text === null ? null : transcoded(text, bom.charset, `${bom.charset} BOM`);
        if (decided !== null) return decided;
      }
    }
    if (legacy !== undefined && isWideCharset(legacy)) {
      const text = decodeStrict(bytes, decodingCharset(legacy, bytes));
      const decided = text === null ? null : transcoded(text, legacy, `declared charset ${legacy}`);
      if (decided !== null) return decided;
    }
    if (legacy !== undefined && isSevenBitCharset(legacy) && shiftsCharset(bytes, legacy)) {
      // Its bytes read as UTF-8 would be escape sequences, not the text: decoded exactly, or
      // left as they are, with the label that says how to read them.
      const text = decodeStrict(bytes, legacy);
      const decided = text === null ? null : transcoded(text, legacy, `declared charset ${legacy}`);
      return decided ?? preservedBlob(legacy, `declared charset ${legacy}, not decoded exactly here; kept`);
    }
  }

  if (bytes.indexOf(0) === -1 && isUtf8(bytes)) {
    if (textCapable && legacy !== undefined && preserve)
      return preservedBlob(legacy, `declared charset ${legacy}; charset preserved`);
    if (textual)
      return utf8Text(
        bytes,
        textMime(isAscii(bytes)),
        legacy === undefined ? "UTF-8 text" : `valid UTF-8 despite declared charset ${legacy}`,
      );
    if (effective === null && !hasBinaryControlBytes(bytes)) {
      // Unwrapped with no type to say it is text, a binary format's start in characters up to
      // U+00FF would read as a binary string on a second pass (with fixMime off it gets no type).
      if (startsLikeBinary(bytes) && isBinaryString(utf8(bytes), false))
        return { kind: "blob", mime: blobMime(declared, fromExtension), reason: "UTF-8 that reads as a binary string" };
      return utf8Text(bytes, textMime(isAscii(bytes)), "UTF-8 text (sniffed)");
    }
  }

  // US-ASCII bytes are UTF-8 already; above 0x7f they are read as WHATWG does, in windows-1252.
  const singleOrDoubleByte = legacy ?? (declaredCharset === "us-ascii" ? declaredCharset : undefined);
  if (textCapable && singleOrDoubleByte !== undefined && !isWideCharset(singleOrDoubleByte)) {
    const decoder = decodingCharset(singleOrDoubleByte);
    const text = decodeStrict(bytes, decoder);
    const reason =
      decoder === singleOrDoubleByte
        ? `declared charset ${decoder}`
        : `declared charset ${singleOrDoubleByte}, decoded as ${decoder} (WHATWG)`;
    // With `charset: preserve` the label stays as declared; only US-ASCII, which these bytes are
    // not in, is replaced by the charset that read them.
    const label = singleOrDoubleByte === "us-ascii" ? decoder : singleOrDoubleByte;
    const decided = text === null ? null : transcoded(text, label, reason);
    if (decided !== null) return decided;
  }

  // Textual bytes that declare no charset and are not UTF-8: the charset is guessed, and the
  // guess is used only when confident and exact; otherwise the blob keeps the type it had.
  if (textual && declaredCharset === undefined && policy.detectCharset) {
    const detection = detectCharset(bytes, ctx.budget);
    if (detection.detected) {
      const { charset, confidence } = detection;
      const decided = transcoded(detection.text, charset, `detected charset ${charset} (confidence ${confidence})`, {
        charset,
        confidence,
      });
      if (decided !== null) return decided;
    }
    return {
      kind: "blob",
      mime: blobMime(declared, fromExtension),
      // Valid UTF-8 gets here only for holding NUL: "not UTF-8" would send a reader after the wrong fault.
      reason: isUtf8(bytes)
        ? "UTF-8, but holds NUL"
        : `not UTF-8; ${detection.detected ? "detected text holds NUL" : detection.why}`,
      ...(!detection.detected && detection.budgetSpent ? { budgetSpent: true as const } : {}),
    };
  }

  const reason =
    textCapable && declaredCharset !== undefined ? undecodedCharsetReason(bytes, declaredCharset) : "not text";
  return { kind: "blob", mime: blobMime(declared, fromExtension), reason };
}

/**
 * Why bytes that declare `charset` stayed a blob: the proxy does not know it, they are not valid
 * in it, or what they decode to is not text (NUL, or binary controls with no textual type).
 */
function undecodedCharsetReason(bytes: Buffer, charset: string): string {
  if (!charsetKnown(charset)) return `declared charset ${charset} is not one the proxy knows`;
  // Read as the engine read them (ISO-8859-1 as windows-1252, as WHATWG does).
  const text = decodeStrict(bytes, decodingCharset(charset, bytes));
  if (text === null) return `declared charset ${charset}, but the bytes are not valid in it`;
  if (text.includes("\u0000")) return `declared charset ${charset} decodes to text holding NUL`;
  return (
    `declared charset ${charset} decodes to what reads as binary ` +
    "(control characters, a binary format's start), not text"
  );
}

/**
 * Whether 7-bit bytes labelled `charset` switch sets anywhere: ESC, SO or SI (ISO-2022), `+`
 * (UTF-7), `~` (HZ). Without one they read the same as ASCII; with a byte above 0x7f they cannot
 * be in that charset at all (the label is wrong).
 */
function shiftsCharset(bytes: Buffer, charset: string): boolean {
  if (!isAscii(bytes)) return false;
  const signs =
    charset.includes("utf") && charset.includes("7") ? [0x2b] : charset.startsWith("hz") ? [0x7e] : [0x1b, 0x0e, 0x0f];
  return signs.some((sign) => bytes.indexOf(sign) !== -1);
}

/** A text decision for UTF-8 bytes; the string is decoded only if someone reads `text`. */
class Utf8Text {
  readonly kind = "text";
  readonly transcoded = false;

  constructor(
    readonly utf8: Buffer,
    readonly mime: MediaType,
    readonly reason: string,
  ) {}

  get text(): string {
    return utf8(this.utf8);
  }
}

function utf8Text(bytes: Buffer, mime: MediaType, reason: string): BytesDecision {
  return new Utf8Text(bytes, mime, reason);
}

/**
 * Whether the first characters of UTF-8 `bytes`, each up to U+00FF, start like a binary format
 * when read one byte per character (`isBinaryString`'s test): a look at the head only, so the
 * whole payload is decoded just for the few that do.
 */
function startsLikeBinary(bytes: Buffer): boolean {
  // 1028 bytes hold the first 512 characters whole when each takes at most two (the rest are past U+00FF).
  const head = bytes.subarray(0, 1028).toString("utf8").slice(0, 512);
  if (/[\u0100-\uffff]/.test(head)) return false;
  return head.startsWith("%PDF-") || detectSignature(Buffer.from(head, "latin1")) !== null;
}

/** Decoding ASCII as Latin-1 gives the same string and is markedly faster in V8. */
function utf8(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
}

/**
 * The type with a non-UTF-8 `charset` parameter dropped: text goes out as Unicode. A US-ASCII
 * label stays only on text that is ASCII (`asciiText`): on any other it names a charset the text
 * is not in.
 */
export function dropForeignCharset(mt: MediaType, asciiText = true): MediaType {
  const param = getParam(mt, "charset");
  if (param === undefined) return mt;
  const charset = canonicalCharset(param);
  const keep = charset === "utf-8" || (charset === "us-ascii" && asciiText);
  return keep ? mt : withoutParam(mt, "charset");
}

/** A blob's type: the declared one if specific, else the extension's, else octet-stream when missing. */
function blobMime(declared: MediaType | null, fromExtension: MediaType | null): MediaType | null {
  if (!isGenericType(declared)) return declared;
  if (!isGenericType(fromExtension)) return fromExtension;
  return declared ?? OCTET_STREAM;
}
