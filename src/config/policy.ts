import type { PolicyOptions, PolicyRule } from "../normalize/policy.js";
import type { NormalizeConfig, ProxyConfig, ServerConfig } from "./schema.js";

/**
 * The policy for one server: `limits.maxNormalizeBytes`, then the global `normalize`, then the
 * server's own (DESIGN.md §5: per-server `normalize` overrides the global one). Rules of both
 * apply, the server's last (later rules win).
 */
export function policyOptionsFor(config: Pick<ProxyConfig, "normalize" | "limits">, server: Pick<ServerConfig, "normalize"> | undefined): PolicyOptions {
  const global: NormalizeConfig = config.normalize ?? {};
  const own: NormalizeConfig = server?.normalize ?? {};
  const { rules: globalRules = [], ...globalSettings } = global;
  const { rules: ownRules = [], ...ownSettings } = own;
  const rules: PolicyRule[] = [...globalRules, ...ownRules];
  return { maxNormalizeBytes: config.limits.maxNormalizeBytes, ...globalSettings, ...ownSettings, rules };
}
