/**
 * The library's way in: `client.connect(withNormalization(transport, options))`. Its options
 * are checked as a config file is (a bad one is refused, naming it, before anything runs), and
 * `fit.limits` becomes the wrapper's own fit runtime. Apart from the decorator so the proxy's
 * own paths, which give it compiled policies, never load the schema to start a session.
 */
import { checkCodeOptions, fitLimitsFrom } from "../config/codeOptions.js";
import { NormalizerError } from "../errors/NormalizerError.js";
import { FitPolicy } from "../fit/fitPolicy.js";
import { createFitRuntime } from "../fit/runtime.js";
import { isJsonObject } from "../normalize/objects.js";
import { Policy } from "../normalize/policy.js";
import type { Transport } from "../transports/types.js";
import { NormalizingTransport, type NormalizationOptions } from "./withNormalization.js";

/** Wraps a transport that talks to an MCP server so its results arrive normalized. */
export function withNormalization<T extends Transport>(
  transport: T,
  options: NormalizationOptions = {},
): NormalizingTransport {
  // From JavaScript anything may come: what is not an object is refused before it is taken apart.
  const wrapped: unknown = transport;
  if (!isTransport(wrapped)) {
    const got = wrapped === null ? "null" : typeof wrapped;
    throw new NormalizerError(
      "CONFIG_INVALID",
      "withNormalization: transport not valid: expected an MCP transport (an object with start, send and close), " +
        `got ${got}`,
    );
  }
  const given: unknown = options;
  if (!isJsonObject(given)) {
    const got = given === null ? "null" : Array.isArray(given) ? "an array" : typeof given;
    throw new NormalizerError("CONFIG_INVALID", `withNormalization: options not valid: expected an object, got ${got}`);
  }
  const { policy, fit } = options;
  checkCodeOptions(
    {
      ...options,
      policy: policy instanceof Policy ? undefined : policy,
      fit:
        typeof fit !== "object" || fit === null
          ? fit
          : { ...fit, policy: fit.policy instanceof FitPolicy ? {} : fit.policy },
    },
    "withNormalization",
  );
  if (fit?.limits === undefined || fit.runtime !== undefined) return new NormalizingTransport(transport, options);
  return new NormalizingTransport(transport, {
    ...options,
    fit: { ...fit, runtime: createFitRuntime(fitLimitsFrom(fit.limits)) },
  });
}

function isTransport(value: unknown): value is Transport {
  if (typeof value !== "object" || value === null) return false;
  const { start, send, close } = value as Record<string, unknown>;
  return typeof start === "function" && typeof send === "function" && typeof close === "function";
}
