/**
 * `audit`'s progress on stderr — only when stderr is a terminal: in a pipe or a CI log
 * a bar is just noise, and stdout may carry the report itself.
 */
import type { Writable } from "node:stream";
import { visible } from "../../errors/visible.js";

export interface Progress {
  update(done: number, total: number, label?: string): void;
  finish(): void;
}

/** Width of the bar in characters. */
const BAR_CHARS = 30;

export function createProgress(stream: Writable & { isTTY?: boolean; columns?: number }): Progress {
  if (stream.isTTY !== true) return { update: () => {}, finish: () => {} };
  let drawn = false;
  return {
    update(done, total, label = "") {
      const filled = total === 0 ? BAR_CHARS : Math.round((done / total) * BAR_CHARS);
      // The label is a URI the server listed: its escape sequences must not reach the terminal.
      const line = `[${"#".repeat(filled)}${".".repeat(BAR_CHARS - filled)}] ${done}/${total} ${visible(label)}`;
      const width = Math.max(20, (stream.columns ?? 80) - 1);
      stream.write(`\r${line.slice(0, width).padEnd(width)}`);
      drawn = true;
    },
    finish() {
      if (drawn) stream.write("\r\x1b[2K");
    },
  };
}
