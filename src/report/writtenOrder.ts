/**
 * The order a report reads its log files in: each log's files in the order they were written,
 * one log after another. A record that continues the entry of the line before it (`chained`)
 * needs it when a rotation fell between the two lines — and no name tells it reliably (a shell
 * sorts `n.jsonl*` with the live file first, `olddir` moves rotations elsewhere, dates are written
 * many ways, a link names the live file), so each file's first record's `ts` does; the names
 * only group the files into logs (`n.jsonl.2.gz`, `n.jsonl.1` and `n.jsonl` in one folder are one)
 * and break ties.
 */
import { closeSync, constants as fsConstants, fstatSync, openSync, readSync, statSync } from "node:fs";
import { constants, gunzipSync } from "node:zlib";

/** How much of a file is read for its first record (a record is a few hundred bytes). */
const PEEK_BYTES = 64 * 1024;
/**
 * How much of a gzip file is inflated for it: a log compresses about tenfold, so this holds a
 * first record, and deflate's most (about 1032 to 1) stays within the output bound below.
 */
const GZIP_PEEK_BYTES = 2 * 1024;

export function inWrittenOrder(files: readonly string[]): string[] {
  const known = files.map((path, given) => ({ path, given, ...rotationOf(path), first: firstTs(path) }));
  // A log is placed by its earliest file, and keeps its files together (rotations moved to
  // another folder are another log, placed by their own earliest: before the live one).
  const placed = new Map<string, { first: number; given: number }>();
  for (const file of known) {
    const log = placed.get(file.log);
    placed.set(file.log, {
      first: Math.min(log?.first ?? Number.POSITIVE_INFINITY, file.first),
      given: Math.min(log?.given ?? file.given, file.given),
    });
  }
  return known
    .sort((a, b) => {
      const [x, y] = [placed.get(a.log)!, placed.get(b.log)!];
      return (
        compare(x.first, y.first) ||
        compare(x.given, y.given) ||
        compare(a.first, b.first) ||
        compare(a.written, b.written) ||
        compare(a.given, b.given)
      );
    })
    .map((file) => file.path);
}

function compare(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The log a file is a rotation of (its path without the rotation's suffix), and its place by name alone. */
function rotationOf(path: string): { log: string; written: number } {
  const bare = path.replace(/\.gz$/i, "");
  const numbered = /^(.*)\.(\d{1,6})$/.exec(bare);
  if (numbered !== null) return { log: numbered[1]!, written: -Number(numbered[2]) };
  // logrotate's dateext in its forms: -20261207, -2026-12-07, .20261207, -20261207-1765065600.
  const dated = /^(.*?)[.-](\d{4}-?\d{2}-?\d{2}(?:[-_T.:]?\d+)*)$/.exec(bare);
  if (dated !== null) return { log: dated[1]!, written: 0 };
  return { log: bare, written: Number.POSITIVE_INFINITY };
}

/** When a regular file's first record was written (gzip read as far as it goes); +∞ when unknown. */
function firstTs(path: string): number {
  let fd: number | undefined;
  try {
    // A pipe would block the open and lose what is read here, a device too: only a regular file
    // is looked into (checked again once open: it may have been swapped in between).
    if (!statSync(path).isFile()) return Number.POSITIVE_INFINITY;
    fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    if (!fstatSync(fd).isFile()) return Number.POSITIVE_INFINITY;
    const head = Buffer.alloc(PEEK_BYTES);
    let bytes = head.subarray(0, readSync(fd, head, 0, PEEK_BYTES, 0));
    // Compressed, only its start is inflated, and bounded: a first line needs little of it.
    if (bytes[0] === 0x1f && bytes[1] === 0x8b)
      bytes = gunzipSync(bytes.subarray(0, GZIP_PEEK_BYTES), {
        finishFlush: constants.Z_SYNC_FLUSH,
        maxOutputLength: 4 * 1024 * 1024,
      });
    const line = bytes.subarray(0, Math.max(0, bytes.indexOf(0x0a))).toString("utf8");
    const ts = (JSON.parse(line) as { ts?: unknown } | null)?.ts;
    const at = typeof ts === "string" ? Date.parse(ts) : Number.NaN;
    return Number.isFinite(at) ? at : Number.POSITIVE_INFINITY;
  } catch {
    return Number.POSITIVE_INFINITY;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
