/**
 * Newline-delimited JSON framing (the MCP stdio transport, spec "Transports › stdio": one
 * JSON-RPC message per line, no embedded newlines) on top of the bounded line splitter
 * (src/wire/lineSplitter.ts), plus the helpers that name an unreadable message (its id hint,
 * an excerpt).
 *
 * Why not the SDK's `ReadBuffer` (src/shared/stdio.ts in the SDK): it `Buffer.concat`s the whole
 * buffer on every chunk and rescans it from the start, so a 50 MiB message in 64 KiB chunks
 * costs ~800 full copies (quadratic), and it gives up on anything over 10 MB.
 *
 * Pure: bytes in, values out. No IO, no clock.
 */
import { isUtf8 } from "node:buffer";
import { holdsMoreNodes, startsWithBom, topLevelOf } from "../wire/jsonNodes.js";
import { LineSplitter, type LineSink, type OversizedLine } from "../wire/lineSplitter.js";
import { parseWithRawStrings } from "./rawStringParse.js";
import { messageText } from "./wireJson.js";
import { rememberWireText } from "./wireText.js";
import type { FramingProblem } from "./types.js";

/** Characters of an offending line shown in a `FramingProblem.excerpt`. */
export const EXCERPT_CHARS = 120;

const JSON_STRING = String.raw`"(?:[^"\\]|\\.)*"`;
/** A JSON number, whole (`1.5` and `1e3` are not `1`). */
const JSON_NUMBER = String.raw`-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?`;
/** A number or a string id. */
const JSON_ID = `(${JSON_NUMBER}|${JSON_STRING})`;
/**
 * `{"jsonrpc":"2.0","id":…` or `{"id":…` at the very start of a message: a number followed by `,`
 * or `}` (the start may end inside one), or a string whole.
 */
const HEAD_ID = new RegExp(
  String.raw`^\s*\{\s*(?:"(?:jsonrpc|method)"\s*:\s*${JSON_STRING}\s*,\s*)*"id"\s*:\s*` +
    String.raw`(${JSON_NUMBER}(?=\s*[,}])|${JSON_STRING})`,
);
/**
 * `…,"id":…}` at the very end: the last key of the outermost object (one closing brace), or the
 * last but `"jsonrpc":"2.0"` (keys written sorted, as Go's maps and Python's `sort_keys` do).
 */
const TAIL_ID = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${JSON_ID}\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`);

/**
 * The JSON-RPC `id` of a message we only have the two ends of (it was too large to read), so
 * the peer can still be answered. Undefined when neither end shows it unambiguously.
 */
export function jsonRpcIdHint(head: string, tail: string): IdHint | undefined {
  const match = HEAD_ID.exec(head) ?? TAIL_ID.exec(tail);
  return match?.[1] ? idHintOf(match[1]) : undefined;
}

/**
 * An id read from a message's text: `id` as it parses (what requests are matched by), `idText`
 * as written (what an answer built for it carries: `12345678901234567890` parses rounded).
 */
export interface IdHint {
  readonly id: string | number;
  readonly idText: string;
}

function idHintOf(text: string): IdHint | undefined {
  try {
    const id: unknown = JSON.parse(text);
    return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? { id, idText: text } : undefined;
  } catch {
    return undefined;
  }
}

function excerptOf(bytes: Buffer): string {
  return bytes
    .subarray(0, EXCERPT_CHARS * 4)
    .toString("utf8")
    .slice(0, EXCERPT_CHARS);
}

/** One result of framing: a message exactly as `JSON.parse` gave it, or a problem. */
export type Framed =
  | { readonly message: unknown; readonly problem?: undefined }
  | { readonly message?: undefined; readonly problem: FramingProblem };

export interface JsonLineReaderOptions {
  /** Largest line accepted, in bytes, without its line break (`limits.maxMessageBytes`). */
  maxMessageBytes: number;
  /**
   * Read `blob`/`text`/`data` string literals at least this many bytes long as raw strings
   * (src/transports/rawStringParse.ts) instead of JS strings. Off by default: only the proxy,
   * whose host transports splice raw strings back, turns it on.
   */
  rawStringBytes?: number;
  /**
   * A message of more nodes (`src/wire/jsonNodes.ts`) is not parsed: it becomes a `too-complex`
   * problem (`limits.maxUpstreamMessageNodes`). Unbounded when absent.
   */
  maxNodes?: number;
  /**
   * A line still running this many bytes past the limit without end is reported then, by its
   * start (`unended`), and nothing more is read: for an upstream, whose stream is then ended
   * (`limits.maxSkippedMessageBytes`). Absent: a line is dropped to its end (a host's).
   */
  cutPastBytes?: number | undefined;
}

/**
 * Newline-delimited JSON-RPC reader. Messages are objects (or arrays: JSON-RPC batches of
 * 2025-03-26) parsed with `JSON.parse` and nothing else; blank lines are skipped; anything else
 * — a banner or log line on stdout, invalid UTF-8 (never decoded lossily), a line over the limit
 * — becomes a `FramingProblem` and reading goes on.
 */
export class JsonLineReader {
  readonly maxMessageBytes: number;
  private readonly rawStringBytes: number | undefined;
  private readonly maxNodes: number | undefined;
  private readonly splitter: LineSplitter;
  /** Bytes past which a line without end cuts the stream; undefined when none does. */
  private readonly cutAtBytes: number | undefined;
  private cut = false;
  private out: Framed[] = [];
  private readonly sink: LineSink = {
    line: (bytes) => this.onLine(bytes),
    pieces: (pieces, bytes) => this.onPieces(pieces, bytes),
    oversized: (line) => this.out.push({ problem: oversizedProblem(line) }),
  };

  constructor(options: JsonLineReaderOptions) {
    this.maxMessageBytes = options.maxMessageBytes;
    this.rawStringBytes = options.rawStringBytes;
    this.maxNodes = options.maxNodes;
    this.splitter = new LineSplitter(this.maxMessageBytes, false, this.rawStringBytes);
    this.cutAtBytes = options.cutPastBytes === undefined ? undefined : this.maxMessageBytes + options.cutPastBytes;
  }

  /** Work counters, for tests that prove framing is linear. */
  get stats(): { bytesScanned: number; bytesCopied: number } {
    return { bytesScanned: this.splitter.bytesScanned, bytesCopied: this.splitter.bytesCopied };
  }

  /** Feeds a chunk; returns every complete line's result, in order. */
  /** The bytes of a message begun and not finished (see LineSplitter.unfinished). */
  get unfinished(): Buffer {
    return this.splitter.unfinished;
  }

  push(chunk: Uint8Array): Framed[] {
    if (this.cut) return [];
    this.splitter.push(chunk, this.sink);
    const dropping = this.splitter.dropping;
    if (this.cutAtBytes !== undefined && dropping !== undefined && dropping.bytes > this.cutAtBytes) {
      this.cut = true;
      // Known by its start alone: its end, where an id written last would be, never came.
      const ends = oversizedProblem({ bytes: dropping.bytes, head: dropping.head, tail: Buffer.alloc(0) });
      this.out.push({ problem: { ...ends, unended: true } });
    }
    return this.drain();
  }

  /** End of stream: an unterminated last line is framed like any other. */
  end(): Framed[] {
    if (this.cut) return [];
    this.splitter.takeRest(this.sink);
    return this.drain();
  }

  private drain(): Framed[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  private onLine(bytes: Buffer): void {
    const framed = parseJsonMessage(bytes, this.rawStringBytes, this.maxNodes);
    if (framed) this.out.push(framed);
  }

  private onPieces(pieces: Buffer[], bytes: number): void {
    const framed = parseJsonPieces(
      pieces,
      bytes,
      this.rawStringBytes,
      () => (this.splitter.bytesCopied += bytes),
      this.maxNodes,
    );
    if (framed) this.out.push(framed);
  }
}

/**
 * Parses one complete message's bytes (a line, an SSE `data` field, a WebSocket frame).
 * Undefined for a blank line. `maxNodes`: more nodes and it is not parsed (`too-complex`).
 */
export function parseJsonMessage(bytes: Buffer, rawStringBytes?: number, maxNodes?: number): Framed | undefined {
  // One byte order mark is skipped, not a run of them (a second is a parse error, as in JSON.parse).
  if (startsWithBom(bytes)) bytes = bytes.subarray(3);
  if (isBlank(bytes)) return undefined;
  // JSON text is UTF-8 (RFC 8259 §8.1); decoding invalid bytes would introduce U+FFFD.
  if (!isUtf8(bytes)) return { problem: notUtf8Problem(bytes) };
  if (maxNodes !== undefined && holdsMoreNodes(bytes, maxNodes)) return { problem: tooComplexProblem(bytes, maxNodes) };
  if (rawStringBytes !== undefined && bytes.length >= rawStringBytes) {
    const message = parseWithRawStrings([bytes], rawStringBytes, true);
    if (message !== undefined) return { message };
  }
  // Its mark, if any, is skipped above: a second one is not.
  return parseDecoded(bytes.toString("utf8"), bytes.length);
}

/** Only JSON's whitespace (space, tab, CR, LF), or nothing: read up to the first byte that is not. */
function isBlank(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return false;
  }
  return true;
}

/**
 * `parseJsonMessage` of the pieces joined (a big stdio line, an HTTP body, a fragmented WebSocket
 * message): payloads read raw from the pieces when `rawStringBytes` allows, else (nothing to
 * cut, or doubt) the pieces are joined — `onJoin` is told — and parsed the plain way.
 */
export function parseJsonPieces(
  pieces: Buffer[],
  bytes: number,
  rawStringBytes?: number,
  onJoin?: () => void,
  maxNodes?: number,
): Framed | undefined {
  if (pieces.length === 1) return parseJsonMessage(pieces[0]!, rawStringBytes, maxNodes);
  // Counted in its pieces; one refused is joined to read its top level (where its id and method
  // may stand anywhere), which costs far less than the parse it is spared.
  if (maxNodes !== undefined && holdsMoreNodes(pieces, maxNodes))
    return { problem: { ...tooComplexProblem(Buffer.concat(pieces, bytes), maxNodes), bytes } };
  if (rawStringBytes !== undefined && bytes >= rawStringBytes) {
    // Its one byte order mark skipped here; joined, parseJsonMessage skips it.
    const body = startsWithBom(pieces[0]!) ? [pieces[0]!.subarray(3), ...pieces.slice(1)] : pieces;
    const message = parseWithRawStrings(body, rawStringBytes);
    if (message !== undefined) return { message };
  }
  onJoin?.();
  return parseJsonMessage(Buffer.concat(pieces, bytes));
}

/**
 * As `parseJsonMessage`, for text already decoded (SSE data, WebSocket text frames): one leading
 * U+FEFF skipped. `maxNodes`: a text long enough to hold more is counted (as bytes) first.
 */
export function parseJsonText(text: string, bytes: number, maxNodes?: number): Framed {
  if (maxNodes !== undefined && text.length > maxNodes) {
    const encoded = Buffer.from(text, "utf8");
    if (holdsMoreNodes(encoded, maxNodes))
      return { problem: { ...tooComplexProblem(encoded, maxNodes), bytes: bytes || encoded.length } };
  }
  return parseDecoded(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, bytes);
}

function parseDecoded(text: string, bytes: number): Framed {
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

/**
 * A message that is not UTF-8, with its id when it is an answer whose id can be read: the request
 * it answers can be answered at once. Read with the bad bytes replaced, only to tell what it is
 * (a request of the peer's own may carry the same id as one of ours: it answers nothing).
 */
function notUtf8Problem(bytes: Buffer): FramingProblem {
  const id = answeredId(bytes.toString("utf8"));
  return { kind: "invalid-json", bytes: bytes.length, ...(id === undefined ? {} : { id }), excerpt: excerptOf(bytes) };
}

function answeredId(text: string): string | number | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const message = value as Record<string, unknown>;
  if ("method" in message || !("result" in message || "error" in message)) return undefined;
  return typeof message.id === "string" || typeof message.id === "number" ? message.id : undefined;
}

/**
 * Whether a message known only by its start (`head`; it was too large to read) is, or may be, a
 * request or notification of the peer's own: its start shows a top-level `method`, or no
 * top-level `result` or `error`. Its id, read from either end, then answers nothing of ours (a
 * peer's ids may equal ours): only a message whose start shows it to be an answer is taken for
 * one. (A response's members before its result are scalars: its start shows it.)
 */
function mayAskAtHead(head: string): boolean {
  const top = topLevelOf(Buffer.from(head));
  return top.method || !top.answers;
}

/**
 * A message too large to keep, known by its ends (a line over the limit, an HTTP body): its id when
 * an end shows it, and whether it may be a request of the peer's own (`mayAskAtHead`).
 */
export function oversizedProblem(line: OversizedLine): FramingProblem {
  const head = line.head.toString("utf8");
  const id = jsonRpcIdHint(head, line.tail.toString("utf8"));
  return {
    kind: "too-large",
    bytes: line.bytes,
    ...id,
    ...(mayAskAtHead(head) ? { asks: true } : { answers: true }),
    excerpt: head.slice(0, EXCERPT_CHARS),
  };
}

/**
 * A message refused unparsed for holding more than `limit` nodes: its top level read for its
 * `method` and `id`, so a request of the peer's (or the request an answer answers) can still be
 * answered under its id.
 */
export function tooComplexProblem(bytes: Buffer, limit: number): FramingProblem {
  const top = topLevelOf(bytes);
  const id = top.idText === undefined ? undefined : idHintOf(top.idText);
  return {
    kind: "too-complex",
    bytes: bytes.length,
    limit,
    ...id,
    ...(top.method ? { asks: true } : {}),
    excerpt: bytes.subarray(0, EXCERPT_CHARS).toString("utf8"),
  };
}

/** The stdio wire form of a message: its JSON and one LF (MCP spec, Transports › stdio). */
export function serializeMessage(message: unknown): string {
  return `${messageText(message)}\n`;
}
