/**
 * The charset of textual bytes that declare none and are not UTF-8, guessed with `chardet` (pure
 * JavaScript, synchronous: the engine stays pure). A guess is only acted on when it is
 * confident and checked: enough bytes, chardet's confidence at or above the threshold, an exact
 * round trip through the guessed charset (charset.ts), text without binary or C1 control
 * characters, and for a single-byte charset no sibling that reads the bytes as other plausible
 * text (charsetSiblings.ts). Anything less keeps the bytes as they came.
 *
 * The thresholds were chosen on test/fixtures/corpus/charsets (natural text in 20 legacy
 * charsets cut at 12–500 bytes, UTF-16 without a BOM, random bytes) and thousands of seeded
 * random byte strings without control bytes: at these values no text was transcoded in a wrong
 * charset and no random string was transcoded at all (test/normalize/charsetDetection.test.ts
 * checks both on every run).
 */
import { createRequire } from "node:module";
import type * as Chardet from "chardet";
import {
  bytesPresent,
  canonicalCharset,
  type CharacterTest,
  decodeStrict,
  isUtf8Family,
  singleByteCharsetTable,
  tableReadsAnyAs,
} from "./charset.js";
import { siblingAmbiguity } from "./charsetSiblings.js";
import { hasBinaryControls } from "./textEvidence.js";

const require = createRequire(import.meta.url);
let chardetModule: typeof Chardet | undefined;

/** chardet, loaded (synchronously) with the first bytes that need a guess: not at start-up. */
function chardet(): typeof Chardet {
  chardetModule ??= require("chardet") as typeof Chardet;
  return chardetModule;
}

/** Fewer bytes than this are too short to tell charsets apart: never guessed. */
export const DETECT_MIN_BYTES = 48;
/** chardet's confidence (0–100) a multi-byte CJK guess needs (real text scores 90–100, random bytes up to ~80). */
export const DETECT_MULTIBYTE_MIN_CONFIDENCE = 90;
/** …a single-byte guess needs below DETECT_LONG_BYTES (random high bytes reach ~65 at 48 bytes)… */
export const DETECT_SHORT_MIN_CONFIDENCE = 70;
/** …and from this many bytes on, where random bytes stay under 30 and Cyrillic text scores 36–40. */
export const DETECT_LONG_BYTES = 160;
export const DETECT_LONG_MIN_CONFIDENCE = 35;
/** The multi-byte charsets chardet reports: their scores run on another scale. */
const MULTIBYTE = new Set([
  "shift_jis",
  "euc-jp",
  "euc-kr",
  "gb18030",
  "big5",
  "iso-2022-jp",
  "iso-2022-kr",
  "iso-2022-cn",
]);

/** The confidence a guess of `charset` over `length` bytes needs to be used. */
export function requiredConfidence(charset: string, length: number): number {
  if (MULTIBYTE.has(charset)) return DETECT_MULTIBYTE_MIN_CONFIDENCE;
  return length >= DETECT_LONG_BYTES ? DETECT_LONG_MIN_CONFIDENCE : DETECT_SHORT_MIN_CONFIDENCE;
}
/** chardet reads at most this many leading bytes (its cost grows with them; a few thousand characters
 * are plenty to tell charsets apart); the whole payload is still decoded strictly. */
export const DETECT_SAMPLE_BYTES = 8 * 1024;

/** U+0080–U+009F: C1 controls, what a Latin-1 guess makes of bytes that were not Latin-1. */
const C1_CONTROL = /[\u0080-\u009f]/;
/** NUL, the binary controls (textEvidence.ts) and C1: one character of the text tested at a time. */
const CONTROL: CharacterTest = {
  test: (ch) => ch === "\u0000" || hasBinaryControls(ch) || C1_CONTROL.test(ch),
};

function holdsControls(text: string): boolean {
  return text.indexOf("\u0000") !== -1 || hasBinaryControls(text) || C1_CONTROL.test(text);
}

/**
 * What charset detection may still read for one message (`limits.charsetDetectionBytes`): each
 * guess takes the bytes chardet reads, and a guess that would take more than is left is not made.
 * Detection is the engine's costliest step per byte, and a result of thousands of small entries
 * would otherwise hold the proxy's one thread for as many guesses.
 */
export class DetectionBudget {
  constructor(
    readonly total: number,
    private left: number = total,
  ) {}

  /** Takes `bytes` from what is left; false (and nothing taken) when they do not fit. */
  take(bytes: number): boolean {
    if (bytes > this.left) return false;
    this.left -= bytes;
    return true;
  }
}

/** No budget: every guess is made (a single entry, or a caller that set none). */
export const UNLIMITED_DETECTION = new DetectionBudget(Number.POSITIVE_INFINITY);

export type Detection =
  | { readonly detected: true; readonly charset: string; readonly confidence: number; readonly text: string }
  | { readonly detected: false; readonly why: string; readonly budgetSpent?: true };

export function detectCharset(bytes: Uint8Array, budget: DetectionBudget = UNLIMITED_DETECTION): Detection {
  if (bytes.length < DETECT_MIN_BYTES)
    return { detected: false, why: `${bytes.length} bytes are too few to detect a charset (${DETECT_MIN_BYTES})` };
  const sample = bytes.length > DETECT_SAMPLE_BYTES ? bytes.subarray(0, DETECT_SAMPLE_BYTES) : bytes;
  if (!budget.take(sample.length))
    return {
      detected: false,
      why: `charset not guessed: limits.charsetDetectionBytes (${budget.total}) has no room left in this message`,
      budgetSpent: true,
    };
  let best: { name: string; confidence: number } | undefined;
  try {
    best = chardet().analyse(sample)[0];
  } catch {
    // The detector is third-party code; the engine is total whatever it does.
    best = undefined;
  }
  if (best === undefined) return { detected: false, why: "no charset detected" };
  const guess = `${best.name} at confidence ${best.confidence}`;
  const charset = canonicalCharset(best.name);
  const needed = requiredConfidence(charset, bytes.length);
  if (best.confidence < needed)
    return { detected: false, why: `charset not detected confidently (${guess} < ${needed})` };
  if (isUtf8Family(charset)) return { detected: false, why: `detected ${guess}, but the bytes are not UTF-8` };
  // A single-byte charset is decided from the byte values present, found in one pass: its text
  // is what each of them reads as, so no check needs to scan the (possibly huge) text.
  const table = singleByteCharsetTable(charset);
  const present = table === null ? undefined : bytesPresent(bytes);
  const text = decodeStrict(bytes, charset, present);
  if (text === null) return { detected: false, why: `detected ${guess}, but the bytes do not decode in it exactly` };
  if (table !== null && present !== undefined ? tableReadsAnyAs(table, present, CONTROL) : holdsControls(text))
    return { detected: false, why: `detected ${guess}, but the text would hold control characters` };
  const ambiguity = siblingAmbiguity(bytes, charset, present);
  if (ambiguity !== null) return { detected: false, why: `detected ${guess}, but ${ambiguity}: left as they are` };
  return { detected: true, charset, confidence: best.confidence, text };
}
