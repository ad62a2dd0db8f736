/**
 * Lossy text: a string that already holds U+FFFD REPLACEMENT CHARACTERs, the mark an upstream
 * leaves when it decoded bytes with the wrong charset and replaced what did not fit. The bytes
 * are gone, so nothing can be repaired: such text passes unchanged and is flagged
 * (`warn-lossy-text`) so an operator can fix the server. A stray U+FFFD or two in a long text
 * is legitimate (a document about Unicode): both a count and a share must be reached.
 */
import { entryJsonBytes, jsonStringBytes } from "../wire/jsonSize.js";
import { isRawJsonString, type RawJsonString } from "../wire/rawJson.js";

/** At least this many replacement characters… */
export const LOSSY_MIN_REPLACEMENTS = 3;
/** …making up at least this share of the text's characters (UTF-16 code units). */
export const LOSSY_MIN_SHARE = 0.01;

const REPLACEMENT = "\ufffd";
const REPLACEMENT_UTF8 = Buffer.from(REPLACEMENT, "utf8");

export interface LossyCount {
  readonly replacements: number;
  readonly characters: number;
}

/** U+FFFD count and length of a string, or null when the text is not lossy. */
export function lossyCount(text: string): LossyCount | null {
  let replacements = 0;
  for (let at = text.indexOf(REPLACEMENT); at !== -1; at = text.indexOf(REPLACEMENT, at + 1)) replacements++;
  return isLossy(replacements, text.length) ? { replacements, characters: text.length } : null;
}

/**
 * The same for a raw literal (a big `text` read as bytes): without escapes its body is the
 * string's UTF-8, searched natively; a count that could matter then measures the length.
 */
export function lossyCountOf(value: string | RawJsonString): LossyCount | null {
  if (typeof value === "string") return lossyCount(value);
  if (value.escaped) return lossyCount(value.value());
  const body = value.bodyParts();
  let replacements = 0;
  for (const part of body) replacements += replacementsIn(part);
  // A sequence cut between two pieces is missed by the search above; joining only the pieces'
  // edges finds it without copying the text.
  for (let i = 1; i < body.length; i++) {
    const tail = body[i - 1]!.subarray(-2);
    const at = Buffer.concat([tail, body[i]!.subarray(0, 2)]).indexOf(REPLACEMENT_UTF8);
    if (at !== -1 && at < tail.length && at + 3 > tail.length) replacements++;
  }
  if (replacements < LOSSY_MIN_REPLACEMENTS) return null;
  let characters = 0;
  for (const part of body) {
    for (let k = 0; k < part.length; k++) {
      const b = part[k]!;
      // UTF-16 code units: one per UTF-8 lead byte, two for a 4-byte sequence's lead.
      if ((b & 0xc0) !== 0x80) characters += b >= 0xf0 ? 2 : 1;
    }
  }
  return isLossy(replacements, characters) ? { replacements, characters } : null;
}

/** Searches natively while matches are few; past that, one pass counts the rest (a search per match costs more). */
const SEARCHES = 64;

/** U+FFFD sequences in `part`, left to right, none overlapping. */
function replacementsIn(part: Buffer): number {
  let count = 0;
  let at = part.indexOf(REPLACEMENT_UTF8);
  while (at !== -1 && count < SEARCHES) {
    count++;
    at = part.indexOf(REPLACEMENT_UTF8, at + 3);
  }
  if (at === -1) return count;
  const end = part.length - 2;
  for (let k = at; k < end; ) {
    if (part[k] === 0xef && part[k + 1] === 0xbf && part[k + 2] === 0xbd) {
      count++;
      k += 3;
    } else k++;
  }
  return count;
}

function isLossy(replacements: number, characters: number): boolean {
  return replacements >= LOSSY_MIN_REPLACEMENTS && replacements >= characters * LOSSY_MIN_SHARE;
}

export function lossyReason(count: LossyCount): string {
  return (
    `${count.replacements} U+FFFD replacement characters in ${count.characters}: the upstream decoded bytes ` +
    `with the wrong charset (not repairable)`
  );
}

/** JSON bytes of a `{type:"text", text}` block, for its record. */
export function textBlockJsonBytes(block: Record<string, unknown>): number {
  const text = block.text;
  const textBytes = isRawJsonString(text) ? text.jsonBytes() : jsonStringBytes(text as string);
  return entryJsonBytes(block, "text", textBytes);
}
