/**
 * A message serialized for the wire. Nearly always one string (`JSON.stringify`); when the
 * message carries raw strings (src/wire/rawJson.ts) it is a list of byte pieces — the JSON
 * around them and their literals — so a big read is never joined into one string. Every host
 * transport writes what `encodeWire` gives it: one serializer for all of them.
 */
import { RAW_MARK, type RawJsonPieces, RawJsonValue, stringifyWithRaw } from "../wire/rawJson.js";
import { withOriginText } from "./wireOrigin.js";
import { wireSkeletonOf, wireTextOf } from "./wireText.js";

export class WirePieces {
  constructor(
    readonly parts: readonly Buffer[],
    readonly byteLength: number,
  ) {}

  /** The non-empty ones of `pieces`, in order, counted once. */
  static of(pieces: readonly Buffer[]): WirePieces {
    const parts = pieces.filter((piece) => piece.length > 0);
    return new WirePieces(
      parts,
      parts.reduce((sum, part) => sum + part.length, 0),
    );
  }

  /** One buffer (a copy): for the writers that need a single chunk. */
  join(): Buffer {
    return Buffer.concat(this.parts as Buffer[], this.byteLength);
  }
}

export type WireJson = string | WirePieces;

/** A character past Latin-1: V8 then holds the whole string at two bytes per character. */
const TWO_BYTE = /[\u0100-\uffff]/;

/**
 * What `wire` holds in memory: its bytes, or a string's characters at one or two bytes each.
 * A string whose characters alone are past `limit` is not scanned: its length, already past it,
 * is all a bound needs (and a long string is not read twice).
 */
export function heldBytes(wire: WireJson, limit = Number.POSITIVE_INFINITY): number {
  if (typeof wire !== "string") return wire.byteLength;
  if (wire.length > limit) return wire.length;
  return TWO_BYTE.test(wire) ? wire.length * 2 : wire.length;
}

/**
 * Throws what `JSON.stringify` throws (a BigInt, a text past the longest string) — but not for
 * depth, which `stringifyWithRaw` writes with a stack of its own.
 */
export function encodeWire(message: unknown): WireJson {
  // Forwarded as it arrived: the text it came in (see wireText.ts).
  const arrived = wireTextOf(message);
  if (arrived !== undefined) return arrived;
  // Read with its long literals as bytes: the text around them as it came, the literals spliced in.
  const skeleton = wireSkeletonOf(message);
  if (skeleton !== undefined) return splicePieces(skeleton.text, skeleton.raws);
  // A batch made anew (what was left of one once refused items were taken out): each item as it came.
  if (Array.isArray(message)) return encodeBatch(message);
  // Rebuilt from a message that came as text: what it did not change goes out as that text.
  const { text, raws } = stringifyWithRaw(withOriginText(message) ?? message);
  if (raws.length === 0) return text;
  if (raws.every((raw) => raw instanceof RawJsonValue)) return spliceText(text, raws as RawJsonValue[]);
  return splicePieces(text, raws);
}

/** A JSON array of each item's own wire form; one string unless an item is in pieces. */
function encodeBatch(items: readonly unknown[]): WireJson {
  const wires = items.map((item) => encodeWire(item === undefined ? null : item));
  if (wires.every((wire) => typeof wire === "string")) return `[${wires.join(",")}]`;
  const pieces: Buffer[] = [];
  wires.forEach((wire, i) => {
    pieces.push(Buffer.from(i === 0 ? "[" : ",", "latin1"));
    if (typeof wire === "string") pieces.push(Buffer.from(wire, "utf8"));
    else for (const part of wire.parts) pieces.push(part);
  });
  pieces.push(Buffer.from("]", "latin1"));
  return WirePieces.of(pieces);
}

/** `text` with each stand-in replaced by its raw value's bytes, as pieces (never joined into one string). */
function splicePieces(text: string, raws: readonly RawJsonPieces[]): WirePieces {
  const pieces: Buffer[] = [];
  let from = 0;
  raws.forEach((raw, i) => {
    const standIn = `"${RAW_MARK}${i}"`;
    const at = text.indexOf(standIn, from);
    pieces.push(Buffer.from(text.slice(from, at), "utf8"));
    // A loop, not a spread: a literal read in many small chunks has many parts.
    for (const part of raw.parts) pieces.push(part);
    from = at + standIn.length;
  });
  pieces.push(Buffer.from(text.slice(from), "utf8"));
  return WirePieces.of(pieces);
}

/**
 * The message as one JSON string (what the upstream transports send): the text it arrived in,
 * its untouched parts' text around what the proxy rebuilt, or `JSON.stringify`.
 */
export function messageText(message: unknown): string {
  const wire = encodeWire(message);
  return typeof wire === "string" ? wire : wire.join().toString("utf8");
}

/** `text` with each raw value's stand-in replaced by its text: a small message stays one string. */
function spliceText(text: string, raws: readonly RawJsonValue[]): string {
  let out = "";
  let from = 0;
  raws.forEach((raw, i) => {
    const standIn = `"${RAW_MARK}${i}"`;
    const at = text.indexOf(standIn, from);
    out += text.slice(from, at) + raw.text;
    from = at + standIn.length;
  });
  return out + text.slice(from);
}

/** Writes every piece to a writable stream; returns the last `write`'s backpressure answer. */
export function writeWire(out: { write(chunk: string | Buffer): boolean }, wire: WireJson): boolean {
  if (typeof wire === "string") return out.write(wire);
  let ready = true;
  for (const part of wire.parts) ready = out.write(part);
  return ready;
}
