import { fitOptionsFor } from "../config/fitPolicy.js";
import type { ProxyConfig, ServerConfig } from "../config/schema.js";
import type { PolicyOptions } from "../normalize/policy.js";
import type { ServerEntry } from "../proxy/sessionManager.js";

/** A server's engine policy and fit settings (`--dry-run` applies to both). */
export function serverEntry(config: ProxyConfig, server: ServerConfig, policy: PolicyOptions): ServerEntry {
  return { config: server, policy, fit: fitOptionsFor(config, server, policy.dryRun) };
}
