/**
 * The benchmark's options: the full run repeats each burst (its p99 over 1000 sessions moves by more
 * than the targets' margins from one run to the next) and reports the median; short runs do not.
 */
import { describe, expect, it } from "vitest";
// @ts-expect-error plain JavaScript module of the benchmark
import { parseOptions } from "../../bench/suite/options.mjs";

describe("bench options: burst repetitions", () => {
  it("the full run repeats each burst three times; short and quick runs once", () => {
    expect(parseOptions([], {}).counts.burstReps).toBe(3);
    expect(parseOptions(["--short"], {}).counts.burstReps).toBe(1);
    expect(parseOptions(["--quick"], {}).counts.burstReps).toBe(1);
  });

  it("--burst-reps and BENCH_BURST_REPS set it, the flag first; a bad value is named", () => {
    expect(parseOptions(["--burst-reps", "5"], { BENCH_BURST_REPS: "2" }).counts.burstReps).toBe(5);
    expect(parseOptions([], { BENCH_BURST_REPS: "2" }).counts.burstReps).toBe(2);
    expect(() => parseOptions(["--burst-reps", "two"], {})).toThrow(/--burst-reps must be a whole number/);
  });
});
