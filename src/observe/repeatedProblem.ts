/**
 * A problem that can happen once per message or connection — an upstream flooding a host that has
 * no stream open, a client sending what cannot be read, connections over the limit — reported the
 * first time, then at most once per `REPEAT_REPORT_MS` with how many happened since, and what is
 * left uncounted on `flush()` (the stream opened, the session ended). A flood is then a few log
 * lines, not one per message.
 */
import type { Logger } from "./logger.js";

/** How often a repeating problem is reported at most. */
export const REPEAT_REPORT_MS = 10_000;

export class RepeatedProblem {
  private last = Number.NEGATIVE_INFINITY;
  private since = 0;

  constructor(
    /** `count`: how many times it happened since the last report (1 the first time). */
    private readonly report: (count: number, first: boolean) => void,
    // A monotonic clock: a wall clock stepped back would hold reports back until it caught up.
    private readonly now: () => number = () => performance.now(),
  ) {}

  happened(): void {
    this.since++;
    const now = this.now();
    if (now - this.last < REPEAT_REPORT_MS) return;
    this.report(this.since, this.last === Number.NEGATIVE_INFINITY);
    this.last = now;
    this.since = 0;
  }

  /** Reports what happened since the last report, if anything. */
  flush(): void {
    if (this.since === 0) return;
    this.report(this.since, false);
    this.last = this.now();
    this.since = 0;
  }
}

/** A problem's warn line, throttled as a `RepeatedProblem`: the latest call's fields and `count`. */
export interface ThrottledWarning {
  (fields?: Record<string, unknown>): void;
  /** Logs what happened since the last line, if anything (the latest fields). */
  flush(): void;
}

export function throttled(logger: Logger, message: string, base: Record<string, unknown>): ThrottledWarning {
  let latest: Record<string, unknown> = {};
  const problem = new RepeatedProblem((count) => logger.warn(message, { ...base, ...latest, count }));
  const warn = (fields: Record<string, unknown> = {}): void => {
    latest = fields;
    problem.happened();
  };
  return Object.assign(warn, { flush: () => problem.flush() });
}
