/**
 * The fit layer's settings for one server, from the config: the global `normalize` fit keys,
 * the server's own over them (`images` merged field by field), and both lists of rules (the
 * server's last: later rules win), every key the config leaves out at its default
 * (./defaults.ts). `limits.*` gives the shared limits.
 */
import type { FitPolicyOptions, FitRule } from "../fit/fitPolicy.js";
import type { FitLimits, FitSettingsInput } from "../fit/settings.js";
import { DEFAULT_FIT } from "./defaults.js";
import type { NormalizeConfig, ProxyConfig, ServerConfig } from "./schema.js";

export function fitOptionsFor(
  config: Pick<ProxyConfig, "normalize">,
  server: Pick<ServerConfig, "normalize"> | undefined,
  dryRun?: boolean,
): FitPolicyOptions {
  const global: NormalizeConfig = config.normalize ?? {};
  const own: NormalizeConfig = server?.normalize ?? {};
  const rules: FitRule[] = [...(global.rules ?? []), ...(own.rules ?? [])].map((rule) => ({
    uri: rule.uri,
    mimeType: rule.mimeType,
    tool: rule.tool,
    set: rule.set,
  }));
  const base = pick(global);
  const mine = pick(own);
  const images =
    mine.images === undefined
      ? base.images
      : typeof mine.images === "boolean" || typeof base.images !== "object"
        ? mine.images
        : { ...base.images, ...mine.images };
  return {
    ...DEFAULT_FIT,
    ...base,
    ...mine,
    images: images ?? DEFAULT_FIT.images,
    rules,
    ...(dryRun === true ? { dryRun: true } : {}),
  };
}

function pick(settings: NormalizeConfig): FitSettingsInput {
  const out: FitSettingsInput = {};
  if (settings.images !== undefined) out.images = settings.images;
  if (settings.embeddedResources !== undefined) out.embeddedResources = settings.embeddedResources;
  if (settings.maxResultBytes !== undefined) out.maxResultBytes = settings.maxResultBytes;
  if (settings.dryRun !== undefined) out.dryRun = settings.dryRun;
  return out;
}

export function fitLimitsOf(config: Pick<ProxyConfig, "limits">): FitLimits {
  const { imageMaxPixels, fitTimeoutMs, fitHeldBytes, fitConcurrency, spillTtlMs, spillMaxBytes } = config.limits;
  return { imageMaxPixels, fitTimeoutMs, fitHeldBytes, fitConcurrency, spillTtlMs, spillMaxBytes };
}
