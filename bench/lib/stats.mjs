/** Small timing helpers for the benchmarks: medians of interleaved runs, GC between runs. */
import { performance } from "node:perf_hooks";

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const collect = typeof globalThis.gc === "function" ? () => globalThis.gc() : () => {};

/** Milliseconds of one call to fn, after a full GC so one run's garbage is not billed to the next. */
export function timeOnce(fn) {
  collect();
  const start = performance.now();
  const out = fn();
  const ms = performance.now() - start;
  return { ms, out };
}

/**
 * Runs each named function `rounds` times, interleaved (A B A B …) so drift in machine load hits
 * every contender alike; returns the median milliseconds of each. One warm-up round is dropped.
 */
export function interleaved(fns, rounds) {
  const names = Object.keys(fns);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r <= rounds; r++) {
    for (const name of names) {
      const { ms } = timeOnce(fns[name]);
      if (r > 0) times[name].push(ms);
    }
  }
  return Object.fromEntries(names.map((n) => [n, median(times[n])]));
}
