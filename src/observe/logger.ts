/**
 * The proxy's operational log (start, upstream spawn/exit, errors): the narrow interface the
 * rest of the code needs, with a default that writes JSON lines to stderr — never stdout, which
 * carries JSON-RPC in `stdio` mode. Lines are written through the shared log writer (logSink.ts)
 * at once, not batched: an error logged just before the process exits or crashes reaches stderr.
 */
import { sinkFor } from "./logSink.js";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export function createStderrLogger(
  level: LogLevel = "info",
  base: Record<string, unknown> = {},
  write: (line: string) => void = (line) => sinkFor(process.stderr).writeNow(line),
): Logger {
  const emit = (at: Exclude<LogLevel, "silent">, msg: string, fields?: Record<string, unknown>): void => {
    if (RANK[at] < RANK[level]) return;
    // The line format operators and tests parse: level, time, base fields, fields, msg.
    write(`${JSON.stringify({ level: at, time: new Date().toISOString(), ...base, ...fields, msg })}\n`);
  };
  return {
    debug: (msg, fields) => emit("debug", msg, fields),
    info: (msg, fields) => emit("info", msg, fields),
    warn: (msg, fields) => emit("warn", msg, fields),
    error: (msg, fields) => emit("error", msg, fields),
    child: (fields) => createStderrLogger(level, { ...base, ...fields }, write),
  };
}

export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};
