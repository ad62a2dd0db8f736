/**
 * What the fit layer shares over every session of a process: the image queue (bounded
 * concurrency, timeouts) and the memory budget of cut results' pages.
 */
import { ImageQueue } from "./imageQueue.js";
import type { FitLimits } from "./settings.js";
import { SpillBudget } from "./spill/spillBudget.js";

export interface FitRuntime {
  readonly limits: FitLimits;
  readonly images: ImageQueue;
  readonly spill: SpillBudget;
}

/** `limits`: every one given (the config's `limits.*`, or its defaults). */
export function createFitRuntime(limits: FitLimits): FitRuntime {
  const all: FitLimits = { ...limits };
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
