/**
 * `JSON.parse` for a big message that leaves its long payload strings as bytes.
 *
 * The literals of `blob`, `text` and `data` members at least `rawStringBytes` long are cut out of the
 * message and replaced by short stand-ins; the rest — the small skeleton — goes through
 * `JSON.parse`, and the stand-ins are then swapped for `RawJsonString`s that keep the literals'
 * bytes (src/wire/rawJson.ts). Only those three member names: they are where MCP carries
 * payloads, and everything else the proxy reads (ids, methods, error messages) stays a string.
 *
 * The message arrives as the pieces it was read in (a stdio line is never joined into one
 * buffer: joining means writing a second copy into fresh memory, which costs time as well as
 * room), so the scan is a byte-at-a-time state machine that carries its state from one piece
 * to the next.
 *
 * Validation is `JSON.parse`'s: a cut-out literal is checked here (no raw control character,
 * only the escapes JSON allows, valid UTF-8); anything doubtful returns undefined and the caller
 * takes the plain path, so invalid input is reported exactly as before.
 */
import { isUtf8 } from "node:buffer";
import { nextJsonSpecial } from "../wire/jsonSize.js";
import { RAW_MARK, RawJsonString } from "../wire/rawJson.js";
import { rememberWireSkeleton } from "./wireText.js";

const RAW_KEYS: ReadonlySet<string> = new Set(["blob", "text", "data"]);
/** Longest member name remembered (the three above fit). */
const KEY_MAX = 8;

const SIMPLE_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

function isHex(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x66);
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** A position in the pieces. */
interface At {
  readonly piece: number;
  readonly offset: number;
}

interface Cut {
  readonly start: At;
  /** Just past the closing quote. */
  readonly end: At;
  readonly escaped: boolean;
}

/**
 * The parsed message with its long payload literals raw, or undefined when the plain path must
 * decide (no literal long enough, or anything that is not plainly valid). `utf8Checked`: the
 * caller has already checked the bytes are UTF-8.
 */
export function parseWithRawStrings(pieces: readonly Buffer[], rawStringBytes: number, utf8Checked = false): unknown {
  if (!utf8Checked && !isUtf8Pieces(pieces)) return undefined;
  const cuts = findLongPayloads(pieces, rawStringBytes);
  if (cuts === undefined || cuts.length === 0) return undefined;
  const skeleton: Buffer[] = [];
  let from: At = { piece: 0, offset: 0 };
  cuts.forEach((cut, i) => {
    skeleton.push(...slice(pieces, from, cut.start), Buffer.from(`"${RAW_MARK}${i}"`, "latin1"));
    from = cut.end;
  });
  skeleton.push(...slice(pieces, from, { piece: pieces.length - 1, offset: pieces[pieces.length - 1]!.length }));
  let value: unknown;
  const text = Buffer.concat(skeleton).toString("utf8");
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const raws = cuts.map((cut) => RawJsonString.ofLiteral(slice(pieces, cut.start, cut.end), cut.escaped));
  if (swapStandIns(value, raws) !== raws.length) return undefined;
  // Forwarded untouched, it goes out as this text with the literals' bytes in it (wireJson.ts).
  rememberWireSkeleton(value, text, raws);
  return value;
}

/** The bytes from `a` up to (not including) `b`, as subarrays of the pieces. */
function slice(pieces: readonly Buffer[], a: At, b: At): Buffer[] {
  const out: Buffer[] = [];
  for (let p = a.piece; p <= b.piece; p++) {
    const piece = pieces[p]!;
    const part = piece.subarray(p === a.piece ? a.offset : 0, p === b.piece ? b.offset : piece.length);
    if (part.length > 0) out.push(part);
  }
  return out;
}

/** Every `"blob"|"text"|"data": "<long literal>"` member, in order; undefined on doubt. */
function findLongPayloads(pieces: readonly Buffer[], rawStringBytes: number): Cut[] | undefined {
  const cuts: Cut[] = [];
  // Outside strings: the last significant byte, and the name of the member being read.
  let lastSignificant = -1;
  let lastKey: string | null = null;
  // The string being scanned (or just ended, until the next significant byte says what it was).
  let inString = false;
  let escapePending = 0; // bytes of an escape still to come (1 after "\", 4 hex digits after "\u")
  let unicodeEscape = false;
  let start: At = { piece: 0, offset: 0 };
  let length = 0;
  let escaped = false;
  let memberName: string | null = null; // the member name this string is the value of
  let shortBytes: number[] | null = [];
  let ended: {
    start: At;
    end: At;
    length: number;
    escaped: boolean;
    memberName: string | null;
    name: string | null;
  } | null = null;

  for (let p = 0; p < pieces.length; p++) {
    const piece = pieces[p]!;
    const n = piece.length;
    let i = 0;
    while (i < n) {
      if (inString) {
        if (escapePending > 0) {
          const byte = piece[i]!;
          if (unicodeEscape) {
            if (!isHex(byte)) return undefined;
          } else if (byte === 0x75) {
            unicodeEscape = true;
            escapePending = 5;
          } else if (!SIMPLE_ESCAPES.has(byte)) {
            return undefined;
          }
          escapePending--;
          if (escapePending === 0) unicodeEscape = false;
          if (shortBytes !== null) shortBytes = null;
          i++;
          length++;
          continue;
        }
        const from = i;
        i = nextJsonSpecial(piece, i, n);
        if (shortBytes !== null) {
          // Only short strings can be the member names looked for: longer ones stop collecting.
          if (shortBytes.length + (i - from) > KEY_MAX) shortBytes = null;
          else for (let k = from; k < i; k++) shortBytes.push(piece[k]!);
        }
        length += i - from;
        if (i === n) break;
        const byte = piece[i]!;
        i++;
        length++;
        if (byte === 0x5c) {
          escaped = true;
          escapePending = 1;
        } else if (byte === 0x22) {
          inString = false;
          const name = shortBytes === null || escaped ? null : String.fromCharCode(...shortBytes);
          ended = { start, end: { piece: p, offset: i }, length, escaped, memberName, name };
        } else {
          return undefined; // a raw control character: invalid JSON, the plain path says so
        }
        continue;
      }
      const byte = piece[i]!;
      if (byte === 0x22) {
        settle(ended, false);
        ended = null;
        inString = true;
        start = { piece: p, offset: i };
        length = 1;
        escaped = false;
        shortBytes = [];
        memberName = lastSignificant === 0x3a ? lastKey : null;
        lastSignificant = 0x22;
        i++;
        continue;
      }
      if (!isSpace(byte)) {
        settle(ended, byte === 0x3a);
        ended = null;
        lastSignificant = byte;
      }
      i++;
    }
  }
  if (inString) return undefined;
  settle(ended, false);
  return cuts;

  /** A string just ended is a member name when a colon follows, else a value (maybe a long payload). */
  function settle(s: typeof ended, isName: boolean): void {
    if (s === null) return;
    if (isName) lastKey = s.name;
    else if (s.length >= rawStringBytes && s.memberName !== null && RAW_KEYS.has(s.memberName))
      cuts.push({ start: s.start, end: s.end, escaped: s.escaped });
  }
}

/** Bytes in a UTF-8 sequence that starts with `lead` (1 for anything that cannot start one). */
function sequenceLength(lead: number): number {
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  if (lead >= 0xe0) return lead <= 0xef ? 3 : 1;
  if (lead >= 0xc2) return 2;
  return 1;
}

/** `isUtf8` of the pieces joined, without joining them: sequences cut between pieces are checked whole. */
export function isUtf8Pieces(pieces: readonly Buffer[]): boolean {
  let carry: Buffer = Buffer.alloc(0);
  for (const piece of pieces) {
    let from = 0;
    if (carry.length > 0) {
      const need = sequenceLength(carry[0]!) - carry.length;
      if (need > piece.length) {
        carry = Buffer.concat([carry, piece]);
        continue;
      }
      if (!isUtf8(Buffer.concat([carry, piece.subarray(0, need)]))) return false;
      carry = Buffer.alloc(0);
      from = need;
    }
    // An incomplete sequence at the end goes to the next piece.
    let lead = piece.length - 1;
    while (lead > from && lead > piece.length - 4 && (piece[lead]! & 0xc0) === 0x80) lead--;
    const cut =
      lead >= from && piece[lead]! >= 0xc0 && lead + sequenceLength(piece[lead]!) > piece.length ? lead : piece.length;
    if (!isUtf8(piece.subarray(from, cut))) return false;
    carry = piece.subarray(cut);
  }
  return carry.length === 0;
}

/** Replaces each stand-in string with its raw string; returns how many were replaced. */
function swapStandIns(root: unknown, raws: readonly RawJsonString[]): number {
  let swapped = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    const container = node as Record<string, unknown>;
    for (const key of Object.keys(container)) {
      const child = container[key];
      if (typeof child === "string") {
        if (child.startsWith(RAW_MARK)) {
          const raw = raws[Number(child.slice(RAW_MARK.length))];
          if (raw === undefined) return -1;
          container[key] = raw;
          swapped++;
        }
      } else if (typeof child === "object" && child !== null) {
        stack.push(child);
      }
    }
  }
  return swapped;
}
