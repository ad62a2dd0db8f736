/**
 * A problem that can happen once per message or connection — an upstream flooding a host that has
 * no stream open, a client sending what cannot be read, connections over the limit — reported at
 * once up to `burst` times in an interval of `REPEAT_REPORT_MS`, then counted, the count reported
 * with the first report of a later interval, or on `flush()` (the stream opened, the session
 * ended). A flood is then a few log lines, not one per message; a few problems are each told.
 */
import type { Logger } from "./logger.js";

/** The interval over which a repeating problem's reports are limited. */
export const REPEAT_REPORT_MS = 10_000;

export class RepeatedProblem {
  private intervalStart = Number.NEGATIVE_INFINITY;
  private reportedInInterval = 0;
  private since = 0;
  private reportedEver = false;

  constructor(
    /** `count`: how many times it happened since the last report (1 the first time). */
    private readonly report: (count: number, first: boolean) => void,
    // A monotonic clock: a wall clock stepped back would hold reports back until it caught up.
    private readonly now: () => number = () => performance.now(),
    /** Reports made at once in one interval; past them the problem is counted. */
    private readonly burst = 1,
  ) {}

  /** Returns whether it was reported at once (false: counted, for a later report). */
  happened(): boolean {
    this.since++;
    const now = this.now();
    if (now - this.intervalStart >= REPEAT_REPORT_MS) {
      this.intervalStart = now;
      this.reportedInInterval = 0;
    }
    if (this.reportedInInterval >= this.burst) return false;
    this.reportedInInterval++;
    this.tell();
    return true;
  }

  /**
   * Reports what was counted once its interval is over, as the next `happened()` would (a timer
   * calls it, so a count is told though nothing more happens); returns, while some is still
   * counted, the ms until its interval is over (when to call again), else undefined.
   */
  settle(): number | undefined {
    if (this.since === 0) return undefined;
    const now = this.now();
    const left = this.intervalStart + REPEAT_REPORT_MS - now;
    if (left > 0) return left;
    this.intervalStart = now;
    this.reportedInInterval = 1;
    this.tell();
    return undefined;
  }

  /** Reports what happened since the last report, if anything; the next is counted for an interval. */
  flush(): void {
    if (this.since === 0) return;
    this.tell();
    this.intervalStart = this.now();
    this.reportedInInterval = this.burst;
  }

  private tell(): void {
    const first = !this.reportedEver;
    this.reportedEver = true;
    const count = this.since;
    this.since = 0;
    this.report(count, first);
  }
}

/** A problem's warn line, throttled as a `RepeatedProblem`: the latest call's fields and `count`. */
export interface ThrottledWarning {
  (fields?: Record<string, unknown>): void;
  /** Logs what happened since the last line, if anything (the latest fields). */
  flush(): void;
}

export function throttled(logger: Logger, message: string, base: Record<string, unknown>, burst = 1): ThrottledWarning {
  let latest: Record<string, unknown> = {};
  const problem = new RepeatedProblem((count) => logger.warn(message, { ...base, ...latest, count }), undefined, burst);
  const warn = (fields: Record<string, unknown> = {}): void => {
    latest = fields;
    problem.happened();
  };
  return Object.assign(warn, { flush: () => problem.flush() });
}

/** Problem lines of one message and kind written in full in one interval; past them, counted. */
export const PROBLEM_LINES_AT_ONCE = 10;

/**
 * Warn lines for what a peer sent that could not be taken, throttled per message and `kind`
 * (`PROBLEM_LINES_AT_ONCE` in full per interval, then counted): a client or server sending such
 * messages without end writes a few lines, not one per message. `flush()` tells what is still
 * counted (at a session's end). Messages are the code's own strings: the map stays small.
 */
export class ProblemLines {
  private readonly lines = new Map<string, ThrottledWarning>();

  constructor(private readonly logger: Logger) {}

  warn(message: string, fields?: Record<string, unknown>): void {
    const key = typeof fields?.kind === "string" ? `${message}\0${fields.kind}` : message;
    let line = this.lines.get(key);
    if (line === undefined) {
      line = throttled(this.logger, message, {}, PROBLEM_LINES_AT_ONCE);
      this.lines.set(key, line);
    }
    line(fields);
  }

  flush(): void {
    for (const line of this.lines.values()) line.flush();
  }
}
