/** A problem that repeats per message: the first report at once, then one per interval, counted. */
import { describe, expect, it } from "vitest";
import { REPEAT_REPORT_MS, RepeatedProblem } from "../../src/observe/repeatedProblem.js";

describe("RepeatedProblem", () => {
  it("reports the first, counts the rest until the interval has passed or it is flushed", () => {
    let now = 0;
    const reports: Array<[number, boolean]> = [];
    const problem = new RepeatedProblem(
      (count, first) => reports.push([count, first]),
      () => now,
    );
    for (let i = 0; i < 500; i++) problem.happened();
    expect(reports).toEqual([[1, true]]);
    now += REPEAT_REPORT_MS;
    problem.happened();
    expect(reports).toEqual([
      [1, true],
      [500, false],
    ]);
    problem.happened();
    problem.happened();
    problem.flush();
    problem.flush();
    expect(reports.at(-1)).toEqual([2, false]);
    expect(reports).toHaveLength(3);
  });
});

describe("RepeatedProblem with a burst", () => {
  it("reports the first `burst` of each interval at once and counts the rest into the next report", () => {
    let now = 0;
    const reports: Array<[number, boolean]> = [];
    const problem = new RepeatedProblem(
      (count, first) => reports.push([count, first]),
      () => now,
      3,
    );
    for (let i = 0; i < 100; i++) problem.happened();
    expect(reports).toEqual([
      [1, true],
      [1, false],
      [1, false],
    ]);
    now += REPEAT_REPORT_MS - 1;
    problem.happened();
    expect(reports).toHaveLength(3);
    now += 1;
    problem.happened();
    problem.happened();
    // The 97 counted plus the two of the new interval, each told at once (the first carries the count).
    expect(reports.slice(3)).toEqual([
      [99, false],
      [1, false],
    ]);
    problem.happened();
    problem.happened();
    problem.flush();
    expect(reports.slice(5)).toEqual([
      [1, false],
      [1, false],
    ]);
  });
});

describe("RepeatedProblem.settle (a timer's call)", () => {
  it("tells what was counted once its interval is over, though nothing more happens; the next interval starts with it", () => {
    let now = 0;
    const reports: number[] = [];
    const problem = new RepeatedProblem(
      (count) => reports.push(count),
      () => now,
      2,
    );
    const atOnce = Array.from({ length: 5 }, () => problem.happened());
    expect(atOnce).toEqual([true, true, false, false, false]);
    now = REPEAT_REPORT_MS / 2;
    expect(problem.settle()).toBe(REPEAT_REPORT_MS / 2); // still counted: the ms its interval has left
    expect(reports).toEqual([1, 1]);
    now = REPEAT_REPORT_MS;
    expect(problem.settle()).toBeUndefined();
    expect(reports).toEqual([1, 1, 3]);
    expect(problem.settle()).toBeUndefined(); // nothing left
    // The interval the report began has room for one more at once (burst 2), then counts.
    expect([problem.happened(), problem.happened()]).toEqual([true, false]);
    expect(reports).toEqual([1, 1, 3, 1]);
  });
});
