/**
 * Which line of a stdio upstream's stderr tells why it ended. Usually its last line — but a Node
 * server that crashes ends with its stack trace, the error's own properties and `Node.js v20…`,
 * so the last line says nothing and the error line above them is the one a host should see.
 * The error line is kept when only such trailing lines came after it; any other line since
 * (the server went on logging) makes the last line the telling one again.
 */

/** `Error: …`, `TypeError [ERR_X]: …`, `ValueError: …` (Python's last traceback line, too). */
const ERROR_LINE = /^(?:Uncaught )?(?:[A-Za-z_$][\w$.]*)?(?:Error|Exception)(?: \[[\w.-]+\])?: /;

/**
 * What a crash prints after its error line: stack frames, the caret, indented lines (the error's
 * fields, the rest of a message over several lines), the Node.js banner.
 */
const TRAILER = [
  /^\s+\S/, // a stack frame, a field (code: 'MODULE_NOT_FOUND',), a message's next line
  /^\s*\^+\s*$/, // the caret under the source line
  /^[}\]],?\s*$/, // the end of the error's own fields
  /^Emitted 'error' event on .+ at:$/, // an unhandled 'error' event: where it was emitted follows
  /^Node\.js v\d+\.\d+\.\d+$/,
];

export class StderrTail {
  private lastLine: string | undefined;
  /** The last error line, while only a crash's trailer followed it. */
  private errorLine: string | undefined;
  /** Inside a missing module's `Require stack:` list (its `- /path` lines). */
  private requireStack = false;

  /** A non-blank line the child wrote to stderr. */
  push(line: string): void {
    this.lastLine = line;
    if (ERROR_LINE.test(line)) {
      this.errorLine = line;
      this.requireStack = false;
      return;
    }
    if (this.errorLine === undefined) return;
    if (line === "Require stack:") this.requireStack = true;
    else if (!(this.requireStack && line.startsWith("- ")) && !TRAILER.some((pattern) => pattern.test(line)))
      this.errorLine = undefined;
  }

  get last(): string | undefined {
    return this.lastLine;
  }

  /** The line that tells why the child ended, and whether it is the last one it wrote. */
  get telling(): { line: string; isLast: boolean } | undefined {
    if (this.errorLine !== undefined) return { line: this.errorLine, isLast: this.errorLine === this.lastLine };
    return this.lastLine === undefined ? undefined : { line: this.lastLine, isLast: true };
  }
}
