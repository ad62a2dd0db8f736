/**
 * Which line of a stdio upstream's stderr tells why it ended. Usually its last line — but a Node
 * server that crashes ends with its stack trace, the error's own properties and `Node.js v20…`,
 * so the last line says nothing and the error line above them is the one a host should see.
 * The error line is kept when only such trailing lines came after it; any other line since
 * (the server went on logging) makes the last line the telling one again.
 */

/** `Error: …`, `TypeError [ERR_X]: …`, `ValueError: …` (Python's last traceback line, too). */
const ERROR_LINE = /^(?:Uncaught )?(?:[A-Za-z_$][\w$.]*)?(?:Error|Exception)(?: \[[\w.-]+\])?: /;

/** The line Node prints last when it dies of an uncaught error. */
const NODE_BANNER = /^Node\.js v\d+\.\d+\.\d+$/;

/** What a crash prints after its error line: stack frames, the caret, object fields, the Node.js banner. */
const TRAILER = [
  /^\s+at /, // a stack frame
  /^\s*\^+\s*$/, // the caret under the source line
  /^\s*[}\]],?\s*$/, // the end of the error's own fields
  /^\s+[\w$]+: .*$/, // one of its fields (code: 'MODULE_NOT_FOUND',)
  /^Require stack:$/, // a missing module's require stack, and its entries
  /^- \S/,
  NODE_BANNER,
];

/** How far above Node's banner an error line is still taken for the crash's (a long message, a deep stack). */
const BANNER_REACH = 60;

export class StderrTail {
  private lastLine: string | undefined;
  /** The last error line, while only a crash's trailer followed it. */
  private errorLine: string | undefined;
  /** The last error line at all, and the lines written since. */
  private recentError: string | undefined;
  private sinceRecent = 0;

  /** A non-blank line the child wrote to stderr. */
  push(line: string): void {
    this.lastLine = line;
    this.sinceRecent++;
    if (ERROR_LINE.test(line)) {
      this.errorLine = line;
      this.recentError = line;
      this.sinceRecent = 0;
    } else if (this.errorLine !== undefined && !TRAILER.some((pattern) => pattern.test(line)))
      this.errorLine = undefined;
  }

  get last(): string | undefined {
    return this.lastLine;
  }

  /** The line that tells why the child ended, and whether it is the last one it wrote. */
  get telling(): { line: string; isLast: boolean } | undefined {
    if (this.errorLine !== undefined) return { line: this.errorLine, isLast: this.errorLine === this.lastLine };
    // Node died of it: the error line above the banner, past lines of a long message or a require stack.
    if (this.lastLine !== undefined && NODE_BANNER.test(this.lastLine) && this.recentError !== undefined)
      if (this.sinceRecent <= BANNER_REACH) return { line: this.recentError, isLast: false };
    return this.lastLine === undefined ? undefined : { line: this.lastLine, isLast: true };
  }
}
