/**
 * Options given in code — the in-process decorator's `policy`, `fit.policy`, `fit.limits` and
 * `maxTrackedTasks` — checked as a config file's are: the same keys and bounds from the one
 * schema, and an error naming each option at fault. A typo or a negative size must not turn a
 * feature off, or cut a result into one-byte pages, without a word.
 */
import { z } from "zod";
import { NormalizerError } from "../errors/NormalizerError.js";
import type { FitLimits } from "../fit/settings.js";
import { issueLines } from "./load.js";
import { ConfigSchema, engineSettings, fitSettings } from "./schema.js";

const limits = ConfigSchema.shape.limits.unwrap().shape;

/** The fit layer's `limits.*`, every one left out at its default. */
const FitLimitsSchema = z.strictObject({
  imageMaxPixels: limits.imageMaxPixels,
  fitTimeoutMs: limits.fitTimeoutMs,
  fitHeldBytes: limits.fitHeldBytes,
  fitConcurrency: limits.fitConcurrency,
  spillTtlMs: limits.spillTtlMs,
  spillMaxBytes: limits.spillMaxBytes,
});

const fitKeys = { ...fitSettings(), dryRun: engineSettings.dryRun };
const FIT_ONLY = Object.keys(fitSettings());
const uri = z.string().optional();
const mimeType = z.string().optional();

/** An object of the caller's own (a shared runtime): there or not, never looked into. */
const given = z.unknown().optional();

/**
 * A callback: called on the path of every message, so anything else is refused here, not there
 * (`null` is taken as none, as JavaScript callers write it).
 */
const callback = z
  .custom<(...args: never[]) => unknown>((value) => typeof value === "function", "expected a function")
  .nullable()
  .optional();

/** Every option, those that are data checked; callbacks, compiled policies and runtimes are the caller's own. */
const CodeOptionsSchema = z.strictObject({
  policy: z
    .strictObject({
      ...engineSettings,
      rules: z.array(z.strictObject({ uri, mimeType, set: z.strictObject(engineSettings) })).optional(),
      recordUnchanged: z.boolean().optional(),
      charsetDetectionBytes: limits.charsetDetectionBytes.optional(),
    })
    .optional(),
  fit: z
    .strictObject({
      policy: z.strictObject({
        ...fitKeys,
        rules: z
          .array(z.strictObject({ uri, mimeType, tool: z.string().min(1).optional(), set: z.strictObject(fitKeys) }))
          .optional(),
      }),
      limits: FitLimitsSchema.optional(),
      runtime: given,
      store: given,
      upstreamPages: given,
    })
    .refine((fit) => fit.limits === undefined || fit.runtime === undefined, {
      message: "give limits or a runtime, not both (a runtime has its limits)",
      path: ["limits"],
    })
    .optional(),
  maxTrackedTasks: limits.maxTrackedTasks.optional(),
  onNormalized: callback,
  onEngineError: callback,
  now: callback,
});

/**
 * Throws a NormalizerError (`CONFIG_INVALID`) naming every option at fault, one line each, as
 * `options.policy.maxNormalizeBytes: …`. `raw` holds only what is data: a compiled policy or a
 * shared runtime is left out by the caller.
 */
export function checkCodeOptions(raw: unknown, caller: string): void {
  const result = CodeOptionsSchema.safeParse(raw);
  if (result.success) return;
  const lines = issueLines(result.error.issues, raw, CodeOptionsSchema, "options").map((line) =>
    // The fit keys have a layer of their own: say where they go.
    /^ {2}options\.(policy|fit): unknown key/.test(line) && FIT_ONLY.some((key) => line.includes(`"${key}"`))
      ? `${line} (${FIT_ONLY.join(", ")} go under fit.policy)`
      : line,
  );
  throw new NormalizerError("CONFIG_INVALID", `${caller}: options not valid:\n${lines.join("\n")}`, {
    issues: result.error.issues,
  });
}

/** `fit.limits` as given in code (checked by checkCodeOptions first), the rest at their defaults. */
export function fitLimitsFrom(given: Partial<FitLimits>): FitLimits {
  return FitLimitsSchema.parse(given);
}
