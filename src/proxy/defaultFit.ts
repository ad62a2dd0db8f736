/**
 * The fit layer with the config's defaults, for callers that bring none of their own (the
 * in-process decorator, a session manager built without a runtime): one runtime per process,
 * and what `images: true` means.
 */
import { DEFAULT_FIT, DEFAULT_IMAGES, DEFAULT_LIMITS } from "../config/defaults.js";
import { fitLimitsOf } from "../config/fitPolicy.js";
import { FitPolicy, type FitPolicyInput } from "../fit/fitPolicy.js";
import { createFitRuntime, type FitRuntime } from "../fit/runtime.js";

let shared: FitRuntime | undefined;

/** One runtime with the default limits, shared by every caller that does not make its own. */
export function defaultFitRuntime(): FitRuntime {
  shared ??= createFitRuntime(fitLimitsOf({ limits: DEFAULT_LIMITS }));
  return shared;
}

/**
 * A fit policy compiled from `options`: the keys left out at the config's defaults, `images: true`
 * meaning the config's default image settings.
 */
export function fitPolicyOf(options: FitPolicyInput): FitPolicy {
  return new FitPolicy({ ...DEFAULT_FIT, ...withoutUndefined(options) }, DEFAULT_IMAGES);
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
