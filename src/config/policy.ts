import type { PolicyInput, PolicyOptions, PolicyRule } from "../normalize/policy.js";
import { DEFAULT_LIMITS, DEFAULT_NORMALIZE } from "./defaults.js";
import type { NormalizeConfig, ProxyConfig, ServerConfig } from "./schema.js";

/**
 * The policy for one server: the default switches, `limits.maxNormalizeBytes`, then the global
 * `normalize`, then the server's own (per-server `normalize` overrides the global one). Rules of
 * both apply, the server's last (later rules win).
 */
export function policyOptionsFor(
  config: Pick<ProxyConfig, "normalize" | "limits">,
  server: Pick<ServerConfig, "normalize"> | undefined,
): PolicyOptions {
  const global: NormalizeConfig = config.normalize ?? {};
  const own: NormalizeConfig = server?.normalize ?? {};
  const { rules: globalRules = [], ...globalSettings } = global;
  const { rules: ownRules = [], ...ownSettings } = own;
  // The fit layer's keys and tool rules are not the engine's (src/config/fitPolicy.ts takes them).
  const rules: PolicyRule[] = [...globalRules, ...ownRules]
    .filter((rule) => rule.tool === undefined)
    .map(({ uri, mimeType, set }) => ({
      ...(uri === undefined ? {} : { uri }),
      ...(mimeType === undefined ? {} : { mimeType }),
      set: withoutFitKeys(set),
    }));
  return {
    ...DEFAULT_NORMALIZE,
    maxNormalizeBytes: config.limits.maxNormalizeBytes,
    charsetDetectionBytes: config.limits.charsetDetectionBytes,
    ...withoutFitKeys(globalSettings),
    ...withoutFitKeys(ownSettings),
    rules,
  };
}

function withoutFitKeys<T extends object>(settings: T): Omit<T, "images" | "embeddedResources" | "maxResultBytes"> {
  const {
    images: _images,
    embeddedResources: _inline,
    maxResultBytes: _max,
    ...rest
  } = settings as T & { images?: unknown; embeddedResources?: unknown; maxResultBytes?: unknown };
  return rest;
}

/**
 * Settings given in code (the library's decorator, the `normalize` command) made complete: what
 * they leave out takes the config's defaults, `maxNormalizeBytes` and `charsetDetectionBytes` the
 * defaults of their limits.
 */
export function completePolicyOptions(input: PolicyInput = {}): PolicyOptions {
  return {
    ...DEFAULT_NORMALIZE,
    maxNormalizeBytes: DEFAULT_LIMITS.maxNormalizeBytes,
    charsetDetectionBytes: DEFAULT_LIMITS.charsetDetectionBytes,
    ...withoutUndefined(input),
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
