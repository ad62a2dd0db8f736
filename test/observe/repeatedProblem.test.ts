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
