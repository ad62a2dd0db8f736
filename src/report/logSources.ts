/**
 * Reading normalization logs back for `report`: many files, globs, `-` for stdin,
 * gzip-compressed input (found by its magic bytes, so `.gz` names and piped gzip both work).
 * Streamed line by line: memory is bounded by the longest line (`maxLineBytes`), never by the
 * log's size. A line that cannot be a record is counted and skipped, never fatal; a log that cannot
 * be opened (a folder, no permission) is an error naming it. Pipes count as logs: `<(zcat a.gz)`.
 */
import { createReadStream, fstatSync, openSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { inWrittenOrder } from "./writtenOrder.js";
import { glob, isDynamicPattern } from "tinyglobby";
import { NormalizerError } from "../errors/NormalizerError.js";
import { osReason } from "../errors/osReason.js";
import { startsWithBom } from "../wire/jsonNodes.js";
import { LineSplitter } from "../wire/lineSplitter.js";
import { parseLogLine } from "./parseLogLine.js";
import type { ReportAggregator } from "./aggregate.js";

/** Default longest log line read, in bytes (a normalization record is a few hundred); longer ones are malformed. */
export const DEFAULT_MAX_LOG_LINE_BYTES = 1024 * 1024;

/**
 * `-` (stdin), file paths and glob patterns → the sources to read, each once (stdin and pipes
 * where given, the files around them in the order they were written: `writtenOrder.ts`): a file
 * named twice, or reached again through a link (`current.jsonl` → today's log), is read under its
 * first name only.
 */
export async function expandLogSources(args: readonly string[], cwd: string): Promise<string[]> {
  if (args.length === 0)
    throw new NormalizerError("USAGE", "report: name at least one log (LOG.jsonl…, a glob, or - for stdin)");
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (source: string): void => {
    const key = identity(source);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(source);
    }
  };
  for (const arg of args) {
    if (arg === "-") {
      add("-");
      continue;
    }
    const path = resolve(cwd, arg);
    const kind = kindOf(path, arg);
    if (kind === "folder")
      throw new NormalizerError(
        "INPUT_READ_FAILED",
        `report: ${arg} is a folder: name the logs in it, or a glob such as ${JSON.stringify(`${arg}/*.jsonl`)}`,
      );
    if (kind === "log") {
      add(path);
      continue;
    }
    if (!isDynamicPattern(arg))
      throw new NormalizerError("INPUT_READ_FAILED", `report: cannot read ${arg}: no such file`);
    // Quoted globs reach us unexpanded (and Windows shells never expand them).
    const matches = (await glob(arg, { cwd, absolute: true, onlyFiles: true })).sort();
    if (matches.length === 0) throw new NormalizerError("INPUT_READ_FAILED", `report: ${arg} matches no file`);
    for (const match of matches) add(match);
  }
  // However they were named or matched, the files in the order they were written. Stdin and pipes
  // (`<(zcat archive.gz)`, `kubectl logs … |`) tell no time: each stays where it was given, the
  // files in the places around them.
  const regular = out.map(isRegularFile);
  const files = inWrittenOrder(out.filter((_, i) => regular[i]));
  return out.map((source, i) => (regular[i] ? files.shift()! : source));
}

/**
 * The source among `sources` that is the existing regular file or named pipe `file` (by device
 * and inode, so through a link or another name too), or undefined: a report written there would
 * replace a log it reads (or wait forever for a reader of the pipe it emptied). Terminals and
 * other devices are not compared (`- -o /dev/stdout` on one terminal is fine); a path that cannot
 * be looked at is left to the `-o` check, which says why.
 */
export function sourceAt(sources: readonly string[], file: string): string | undefined {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (stats === undefined || !(stats.isFile() || stats.isFIFO())) return undefined;
  const key = `${stats.dev}:${stats.ino}`;
  return sources.find((source) => identity(source) === key);
}

/**
 * What a source reads, by device and inode: a file, a named pipe or `/dev/stdin` reached by two
 * names is one source (opening a pipe a second time would wait for a writer that never comes).
 * `-` is what standard input is.
 */
function identity(source: string): string {
  try {
    const stats = source === "-" ? fstatSync(0) : statSync(source);
    return `${stats.dev}:${stats.ino}`;
  } catch {
    return `path:${source}`;
  }
}

/** What a path names: a log (a file, a pipe, a device), a folder, or nothing. */
function kindOf(path: string, arg: string): "log" | "folder" | "none" {
  try {
    return statSync(path).isDirectory() ? "folder" : "log";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return "none";
    throw new NormalizerError("INPUT_READ_FAILED", `report: cannot read ${arg}: ${osReason(error)}`);
  }
}

export interface ReadLogOptions {
  stdin: Readable;
  maxLineBytes?: number;
}

/** Reads every source into the aggregator; returns how many lines were read in all. */
export async function aggregateLogSources(
  sources: readonly string[],
  aggregator: ReportAggregator,
  options: ReadLogOptions,
): Promise<number> {
  let total = 0;
  for (const source of sources) {
    if (source === "-") {
      total += await aggregateLogSource(source, options.stdin, aggregator, options.maxLineBytes);
      continue;
    }
    const file = createReadStream(source, { fd: openLog(source) });
    try {
      total += await aggregateLogSource(source, file, aggregator, options.maxLineBytes);
    } finally {
      // A log cut short (a gzip error) is not read to its end: its descriptor goes now, not with
      // the process (a glob of hundreds would run out of them).
      file.destroy();
    }
  }
  return total;
}

/** Opened before it is read: a log that cannot be opened is an error, not an empty report. */
function openLog(path: string): number {
  try {
    return openSync(path, "r");
  } catch (error) {
    throw new NormalizerError("INPUT_READ_FAILED", `report: cannot read ${path}: ${osReason(error)}`);
  }
}

/** Why a record that would take the byte totals past what a double holds exactly is skipped. */
const TOTALS_FULL = "fields bytesBefore + bytesAfter would take the report's byte totals past 2^53 − 1; not counted";

/** One source: lines into the aggregator. A read or gzip error ends this source, reported as malformed. */
export async function aggregateLogSource(
  name: string,
  input: Readable,
  aggregator: ReportAggregator,
  maxLineBytes = DEFAULT_MAX_LOG_LINE_BYTES,
): Promise<number> {
  let lineNo = 0;
  const splitter = new LineSplitter(maxLineBytes, false);
  const sink = {
    line(bytes: Buffer): void {
      lineNo++;
      // A byte order mark before a file's first line (a log saved by an editor) is not part of it.
      const bom = lineNo === 1 && startsWithBom(bytes);
      const parsed = parseLogLine(bytes.toString("utf8", bom ? 3 : 0));
      const broken = parsed.kind === "record" ? aggregator.chainBreak(parsed.fact) : undefined;
      if (parsed.kind === "record" && !aggregator.fits(parsed.fact))
        aggregator.addMalformed({ source: name, line: lineNo, error: TOTALS_FULL });
      else if (broken !== undefined) aggregator.addMalformed({ source: name, line: lineNo, error: broken });
      else if (parsed.kind === "record") aggregator.add(parsed.fact);
      else if (parsed.kind === "ignored") aggregator.addIgnored();
      else if (parsed.kind === "malformed")
        aggregator.addMalformed({ source: name, line: lineNo, error: parsed.error });
    },
    oversized(line: { bytes: number }): void {
      lineNo++;
      aggregator.addMalformed({
        source: name,
        line: lineNo,
        error: `line of ${line.bytes} bytes is longer than the ${maxLineBytes}-byte limit`,
      });
    },
  };
  try {
    for await (const chunk of decompressed(input)) splitter.push(chunk, sink);
    splitter.takeRest(sink);
  } catch (error) {
    splitter.takeRest(sink);
    aggregator.addMalformed({
      source: name,
      line: lineNo + 1,
      error: `could not read further: ${(error as Error).message}`,
    });
  }
  return lineNo;
}

/** The bytes of a stream, gunzipped when it starts with the gzip magic (RFC 1952 §2.3.1). */
async function* decompressed(input: Readable): AsyncGenerator<Buffer> {
  const iterator = input[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const head: Buffer[] = [];
  let headBytes = 0;
  while (headBytes < 2) {
    const next = await iterator.next();
    if (next.done) break;
    const chunk = typeof next.value === "string" ? Buffer.from(next.value) : next.value;
    head.push(chunk);
    headBytes += chunk.length;
  }
  const first = Buffer.concat(head);
  async function* all(): AsyncGenerator<Buffer> {
    if (first.length > 0) yield first;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield typeof next.value === "string" ? Buffer.from(next.value) : next.value;
    }
  }
  if (first[0] !== 0x1f || first[1] !== 0x8b) {
    yield* all();
    return;
  }
  const out = new PassThrough();
  const done = pipeline(Readable.from(all()), createGunzip(), out);
  done.catch(() => {});
  for await (const chunk of out) yield chunk as Buffer;
  await done;
}

function isRegularFile(source: string): boolean {
  try {
    return source !== "-" && statSync(source).isFile();
  } catch {
    return false;
  }
}
