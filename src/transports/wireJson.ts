/**
 * A message serialized for the wire. Nearly always one string (`JSON.stringify`); when the
 * message carries raw strings (src/wire/rawJson.ts) it is a list of byte pieces — the JSON
 * around them and their literals — so a big read is never joined into one string. Every host
 * transport writes what `encodeWire` gives it: one serializer for all of them.
 */
import { RAW_MARK, stringifyWithRaw } from "../wire/rawJson.js";
import { wireTextOf } from "./wireText.js";

export class WirePieces {
  constructor(
    readonly parts: readonly Buffer[],
    readonly byteLength: number,
  ) {}

  /** One buffer (a copy): for the writers that need a single chunk. */
  join(): Buffer {
    return Buffer.concat(this.parts as Buffer[], this.byteLength);
  }
}

export type WireJson = string | WirePieces;

/** Throws what `JSON.stringify` throws (a message nested too deeply, a BigInt). */
export function encodeWire(message: unknown): WireJson {
  // Forwarded as it arrived: the text it came in (see wireText.ts).
  const arrived = wireTextOf(message);
  if (arrived !== undefined) return arrived;
  const { text, raws } = stringifyWithRaw(message);
  if (raws.length === 0) return text;
  const parts: Buffer[] = [];
  let total = 0;
  let from = 0;
  const add = (piece: Buffer): void => {
    if (piece.length === 0) return;
    parts.push(piece);
    total += piece.length;
  };
  raws.forEach((raw, i) => {
    const standIn = `"${RAW_MARK}${i}"`;
    const at = text.indexOf(standIn, from);
    add(Buffer.from(text.slice(from, at), "utf8"));
    for (const part of raw.parts) add(part);
    from = at + standIn.length;
  });
  add(Buffer.from(text.slice(from), "utf8"));
  return new WirePieces(parts, total);
}

/** Writes every piece to a writable stream; returns the last `write`'s backpressure answer. */
export function writeWire(out: { write(chunk: string | Buffer): boolean }, wire: WireJson): boolean {
  if (typeof wire === "string") return out.write(wire);
  let ready = true;
  for (const part of wire.parts) ready = out.write(part);
  return ready;
}
