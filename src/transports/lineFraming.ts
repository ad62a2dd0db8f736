/**
 * Linear line framing for byte streams: newline-delimited JSON (the MCP stdio transport,
 * spec "Transports › stdio": one JSON-RPC message per line, no embedded newlines), and the
 * line layer under the SSE parser.
 *
 * Why not the SDK's `ReadBuffer` (src/shared/stdio.ts): it `Buffer.concat`s the whole buffer on
 * every chunk and rescans it from the start, so a 50 MiB message in 64 KiB chunks costs ~800
 * full copies (issue 3 measured 23 s), and it gives up on anything over 10 MB. Here each byte is
 * scanned once, a line's chunks are joined once, and a line over the limit is skipped up to its
 * newline while only its first and last bytes are kept (to name its JSON-RPC id).
 *
 * Pure: bytes in, values out. No IO, no clock.
 */
import { isUtf8 } from "node:buffer";
import { parseWithRawStrings } from "./rawStringParse.js";
import { messageText, rememberWireText } from "./wireText.js";
import { DEFAULT_MAX_MESSAGE_BYTES, type FramingProblem } from "./types.js";

const LF = 0x0a;
const CR = 0x0d;

/** Bytes kept from the start of an oversized line (for the excerpt and the id). */
export const OVERSIZED_HEAD_BYTES = 4096;
/** Bytes kept from the end of an oversized line (the SDK serialises a request's `id` last). */
export const OVERSIZED_TAIL_BYTES = 256;
/** Characters of an offending line shown in a `FramingProblem.excerpt`. */
export const EXCERPT_CHARS = 120;

/** What is left of a line that was longer than the limit: its size and its two ends. */
export interface OversizedLine {
  readonly bytes: number;
  readonly head: Buffer;
  readonly tail: Buffer;
}

export interface LineSink {
  line(bytes: Buffer): void;
  /**
   * A line at least `keepPiecesFrom` bytes long, in the pieces it arrived in (never joined: a
   * sink that can read pieces spares a copy of a big message). Without it, `line` gets them joined.
   */
  pieces?(pieces: Buffer[], bytes: number): void;
  oversized(line: OversizedLine): void;
}

/**
 * Splits a byte stream into lines in time linear in its length. `breakOnCR` selects the SSE
 * rule (a line ends at CRLF, LF or CR — WHATWG HTML §9.2.6); without it a line ends at LF and
 * one trailing CR is dropped (so CRLF works too).
 */
export class LineSplitter {
  /** Bytes examined by delimiter scans so far: equals the bytes pushed (each is scanned once). */
  bytesScanned = 0;
  /** Bytes copied while joining a line's pieces (at most one copy of each line). */
  bytesCopied = 0;

  private parts: Buffer[] = [];
  private partBytes = 0;
  private discarding = false;
  private discardBytes = 0;
  private head: Buffer = Buffer.alloc(0);
  private tail: Buffer = Buffer.alloc(0);
  private pendingCR = false;

  constructor(
    readonly maxLineBytes: number,
    readonly breakOnCR: boolean,
    readonly keepPiecesFrom = Infinity,
  ) {}

  push(chunk: Uint8Array, sink: LineSink): void {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    if (this.pendingCR) {
      // A CR ended the previous chunk: an LF starting this one belongs to the same line break.
      this.pendingCR = false;
      if (buf[0] === LF) start = 1;
    }
    // Next LF / CR positions are cached so short lines do not rescan the rest of the chunk.
    let nextLF = -2;
    let nextCR = this.breakOnCR ? -2 : -1;
    while (start < buf.length) {
      if (nextLF !== -1 && nextLF < start) nextLF = this.scan(buf, LF, start);
      if (nextCR !== -1 && nextCR < start) nextCR = this.scan(buf, CR, start);
      const end = nextCR === -1 ? nextLF : nextLF === -1 ? nextCR : Math.min(nextLF, nextCR);
      if (end === -1) {
        this.accumulate(buf.subarray(start));
        return;
      }
      this.accumulate(buf.subarray(start, end));
      this.finishLine(sink);
      start = end + 1;
      if (buf[end] === CR) {
        if (start === buf.length) this.pendingCR = true;
        else if (buf[start] === LF) start += 1;
      }
    }
  }

  /** The bytes after the last line break (an unterminated last line), or undefined. */
  takeRest(sink: LineSink): void {
    this.pendingCR = false;
    if (this.partBytes > 0 || this.discarding) this.finishLine(sink);
  }

  private scan(buf: Buffer, byte: number, from: number): number {
    const at = buf.indexOf(byte, from);
    this.bytesScanned += (at === -1 ? buf.length : at + 1) - from;
    return at;
  }

  private accumulate(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.discarding) {
      this.discardBytes += piece.length;
      this.keepTail(piece);
      return;
    }
    if (this.partBytes + piece.length <= this.maxLineBytes) {
      this.parts.push(piece);
      this.partBytes += piece.length;
      return;
    }
    // Over the limit: keep only the two ends, drop the rest now (never buffer the whole line).
    this.discarding = true;
    this.discardBytes = this.partBytes + piece.length;
    this.parts.push(piece);
    const head: Buffer[] = [];
    let headBytes = 0;
    for (const part of this.parts) {
      if (headBytes >= OVERSIZED_HEAD_BYTES) break;
      const take = part.subarray(0, OVERSIZED_HEAD_BYTES - headBytes);
      head.push(take);
      headBytes += take.length;
    }
    this.head = Buffer.concat(head, headBytes);
    this.tail = Buffer.alloc(0);
    for (const part of this.parts.slice(-2)) this.keepTail(part);
    this.parts = [];
    this.partBytes = 0;
  }

  private keepTail(piece: Buffer): void {
    const recent = piece.subarray(Math.max(0, piece.length - OVERSIZED_TAIL_BYTES));
    const joined = Buffer.concat([this.tail, recent]);
    this.tail = Buffer.from(joined.subarray(Math.max(0, joined.length - OVERSIZED_TAIL_BYTES)));
  }

  private finishLine(sink: LineSink): void {
    if (this.discarding) {
      const info: OversizedLine = { bytes: this.discardBytes, head: this.head, tail: stripCR(this.tail, this.breakOnCR) };
      this.discarding = false;
      this.discardBytes = 0;
      this.head = Buffer.alloc(0);
      this.tail = Buffer.alloc(0);
      sink.oversized(info);
      return;
    }
    if (this.parts.length > 1 && this.partBytes >= this.keepPiecesFrom && sink.pieces !== undefined) {
      const parts = this.parts;
      let bytes = this.partBytes;
      this.parts = [];
      this.partBytes = 0;
      const lastPart = parts[parts.length - 1]!;
      const stripped = stripCR(lastPart, this.breakOnCR);
      bytes -= lastPart.length - stripped.length;
      if (stripped.length > 0) parts[parts.length - 1] = stripped;
      else parts.pop();
      sink.pieces(parts, bytes);
      return;
    }
    let line: Buffer;
    if (this.parts.length === 0) line = Buffer.alloc(0);
    else if (this.parts.length === 1) line = this.parts[0] as Buffer;
    else {
      line = Buffer.concat(this.parts, this.partBytes);
      this.bytesCopied += line.length;
    }
    this.parts = [];
    this.partBytes = 0;
    sink.line(stripCR(line, this.breakOnCR));
  }
}

function stripCR(line: Buffer, breakOnCR: boolean): Buffer {
  return !breakOnCR && line.length > 0 && line[line.length - 1] === CR ? line.subarray(0, line.length - 1) : line;
}

const JSON_STRING = String.raw`"(?:[^"\\]|\\.)*"`;
const JSON_ID = String.raw`(-?\d+|${JSON_STRING})`;
/** `{"jsonrpc":"2.0","id":…` or `{"id":…` at the very start of a message. */
const HEAD_ID = new RegExp(String.raw`^\s*\{\s*(?:"(?:jsonrpc|method)"\s*:\s*${JSON_STRING}\s*,\s*)*"id"\s*:\s*${JSON_ID}`);
/** `…,"id":…}` at the very end: the last key of the outermost object (one closing brace). */
const TAIL_ID = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${JSON_ID}\s*\}\s*$`);

/**
 * The JSON-RPC `id` of a message we only have the two ends of (it was too large to read), so
 * the peer can still be answered. Undefined when neither end shows it unambiguously.
 */
export function jsonRpcIdHint(head: string, tail: string): string | number | undefined {
  const match = HEAD_ID.exec(head) ?? TAIL_ID.exec(tail);
  if (!match?.[1]) return undefined;
  try {
    const id: unknown = JSON.parse(match[1]);
    return typeof id === "string" || typeof id === "number" ? id : undefined;
  } catch {
    return undefined;
  }
}

export function excerptOf(bytes: Buffer): string {
  return bytes.subarray(0, EXCERPT_CHARS * 4).toString("utf8").slice(0, EXCERPT_CHARS);
}

/** One result of framing: a message exactly as `JSON.parse` gave it, or a problem. */
export type Framed = { readonly message: unknown; readonly problem?: undefined } | { readonly message?: undefined; readonly problem: FramingProblem };

export interface JsonLineReaderOptions {
  /** Largest line accepted, in bytes, without its line break. Default 256 MiB. */
  maxMessageBytes?: number;
  /**
   * Read `blob`/`text`/`data` string literals at least this many bytes long as raw strings
   * (src/transports/rawStringParse.ts) instead of JS strings. Off by default: only the proxy,
   * whose host transports splice raw strings back, turns it on.
   */
  rawStringMinBytes?: number;
}

/**
 * Newline-delimited JSON-RPC reader. Messages are objects (or arrays: JSON-RPC batches of
 * 2025-03-26) parsed with `JSON.parse` and nothing else; blank lines are skipped; anything else
 * — a banner or log line on stdout, invalid UTF-8 (never decoded lossily), a line over the limit
 * — becomes a `FramingProblem` and reading goes on.
 */
export class JsonLineReader {
  readonly maxMessageBytes: number;
  private readonly rawStringMinBytes: number | undefined;
  private readonly splitter: LineSplitter;
  private out: Framed[] = [];
  private readonly sink: LineSink = {
    line: (bytes) => this.onLine(bytes),
    pieces: (pieces, bytes) => this.onPieces(pieces, bytes),
    oversized: (line) => this.out.push({ problem: oversizedProblem(line) }),
  };

  constructor(options: JsonLineReaderOptions = {}) {
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.rawStringMinBytes = options.rawStringMinBytes;
    this.splitter = new LineSplitter(this.maxMessageBytes, false, this.rawStringMinBytes);
  }

  /** Work counters, for tests that prove framing is linear. */
  get stats(): { bytesScanned: number; bytesCopied: number } {
    return { bytesScanned: this.splitter.bytesScanned, bytesCopied: this.splitter.bytesCopied };
  }

  /** Feeds a chunk; returns every complete line's result, in order. */
  push(chunk: Uint8Array): Framed[] {
    this.splitter.push(chunk, this.sink);
    return this.drain();
  }

  /** End of stream: an unterminated last line is framed like any other. */
  end(): Framed[] {
    this.splitter.takeRest(this.sink);
    return this.drain();
  }

  private drain(): Framed[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  private onLine(bytes: Buffer): void {
    const framed = parseJsonMessage(bytes, this.rawStringMinBytes);
    if (framed) this.out.push(framed);
  }

  private onPieces(pieces: Buffer[], bytes: number): void {
    const framed = parseJsonPieces(pieces, bytes, this.rawStringMinBytes, () => (this.splitter.bytesCopied += bytes));
    if (framed) this.out.push(framed);
  }
}

/**
 * Parses one complete message's bytes (a line, an SSE `data` field, a WebSocket frame).
 * Undefined for a blank line.
 */
export function parseJsonMessage(bytes: Buffer, rawStringMinBytes?: number): Framed | undefined {
  if (bytes.length <= 64 && bytes.toString("latin1").trim() === "") return undefined;
  // JSON text is UTF-8 (RFC 8259 §8.1); decoding invalid bytes would introduce U+FFFD.
  if (!isUtf8(bytes)) return { problem: { kind: "invalid-json", bytes: bytes.length, excerpt: excerptOf(bytes) } };
  if (rawStringMinBytes !== undefined && bytes.length >= rawStringMinBytes) {
    const message = parseWithRawStrings([bytes], rawStringMinBytes, true);
    if (message !== undefined) return { message };
  }
  const text = bytes.toString("utf8");
  return parseJsonText(text, bytes.length);
}

/**
 * `parseJsonMessage` of the pieces joined (a big stdio line, an HTTP body, a fragmented WebSocket
 * message): payloads read raw from the pieces when `rawStringMinBytes` allows, else (nothing to
 * cut, or doubt) the pieces are joined — `onJoin` is told — and parsed the plain way.
 */
export function parseJsonPieces(pieces: Buffer[], bytes: number, rawStringMinBytes?: number, onJoin?: () => void): Framed | undefined {
  if (pieces.length === 1) return parseJsonMessage(pieces[0]!, rawStringMinBytes);
  if (rawStringMinBytes !== undefined && bytes >= rawStringMinBytes) {
    const message = parseWithRawStrings(pieces, rawStringMinBytes);
    if (message !== undefined) return { message };
  }
  onJoin?.();
  return parseJsonMessage(Buffer.concat(pieces, bytes));
}

/** As `parseJsonMessage`, for text already decoded (SSE data, WebSocket text frames). */
export function parseJsonText(text: string, bytes: number): Framed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: { kind: "invalid-json", bytes, excerpt: text.slice(0, EXCERPT_CHARS) } };
  }
  if (typeof value !== "object" || value === null) {
    return { problem: { kind: "not-jsonrpc", bytes, excerpt: text.slice(0, EXCERPT_CHARS) } };
  }
  rememberWireText(value, text);
  return { message: value };
}

export function oversizedProblem(line: OversizedLine): FramingProblem {
  const head = line.head.toString("utf8");
  const id = jsonRpcIdHint(head, line.tail.toString("utf8"));
  return { kind: "too-large", bytes: line.bytes, ...(id === undefined ? {} : { id }), excerpt: head.slice(0, EXCERPT_CHARS) };
}

/** The stdio wire form of a message: its JSON and one LF (MCP spec, Transports › stdio). */
export function serializeMessage(message: unknown): string {
  return `${messageText(message)}\n`;
}
