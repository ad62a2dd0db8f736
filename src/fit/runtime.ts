/**
 * What the fit layer shares over every session of a process: the image queue (bounded
 * concurrency, timeouts) and the memory budget of cut results' pages.
 */
import { ImageQueue } from "./imageQueue.js";
import { DEFAULT_FIT_LIMITS, type FitLimits } from "./settings.js";
import { SpillBudget } from "./spill/spillBudget.js";

export interface FitRuntime {
  readonly limits: FitLimits;
  readonly images: ImageQueue;
  readonly spill: SpillBudget;
}

export function createFitRuntime(limits: Partial<FitLimits> = {}): FitRuntime {
  const all: FitLimits = {
    ...DEFAULT_FIT_LIMITS,
    ...Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)),
  };
  return {
    limits: all,
    images: new ImageQueue({
      concurrency: all.fitConcurrency,
      timeoutMs: all.fitTimeoutMs,
      maxPixels: all.imageMaxPixels,
    }),
    spill: new SpillBudget(all.spillMaxBytes, all.spillTtlMs),
  };
}

let shared: FitRuntime | undefined;

/** One runtime with the default limits, for in-process use that does not make its own. */
export function defaultFitRuntime(): FitRuntime {
  shared ??= createFitRuntime();
  return shared;
}
