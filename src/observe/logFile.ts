/**
 * Checks, at start-up, that the normalization log file can be written: its missing folders
 * are created, it is opened for append and a zero-length write is made. A path that fails
 * (a folder that cannot be made, a directory, a read-only or special file such as
 * /proc/version, which opens but refuses every write) throws here, once, with the OS error —
 * instead of the asynchronous writer failing later, retrying without end or crashing at exit.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { osReason } from "../errors/osReason.js";

export class LogFileError extends Error {
  constructor(
    readonly file: string,
    /** The OS error, e.g. `EISDIR: illegal operation on a directory`. */
    readonly reason: string,
  ) {
    super(`cannot write the log file ${file}: ${reason}`);
    this.name = "LogFileError";
  }
}

/** Makes `file` ready for appending, or throws a `LogFileError` naming the path and the OS error. */
export function prepareLogFile(file: string): void {
  try {
    ensureWritable(file);
  } catch (error) {
    throw new LogFileError(file, osReason(error));
  }
}

/**
 * Ends the file's last line when a failed write left it torn (no newline at its end), so the
 * next line written is whole: throws the OS error of a file that cannot take it.
 */
export function endLastLine(file: string): void {
  const fd = openSync(file, "a+");
  try {
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    if (size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a) writeSync(fd, "\n");
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes `file`'s missing folders, opens it for appending and writes nothing to it: throws the OS
 * error of a path that cannot be written (a report's `-o` is checked the same way).
 */
export function ensureWritable(file: string): void {
  let fd: number | undefined;
  try {
    makeFolders(dirname(file));
    fd = openSync(file, "a");
    writeSync(fd, Buffer.alloc(0));
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * `mkdir -p`, one folder at a time from the deepest one that exists. Not Node's recursive
 * mkdir: on a pseudo file system such as /proc it loops forever instead of failing.
 */
export function makeFolders(dir: string): string[] {
  const missing: string[] = [];
  let current = dir;
  while (statSync(current, { throwIfNoEntry: false }) === undefined) {
    missing.push(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  const made: string[] = [];
  for (const folder of missing.reverse()) {
    mkdirSync(folder);
    made.push(folder);
  }
  return made;
}
