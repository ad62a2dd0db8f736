/**
 * The settings a running `serve` cannot take on SIGHUP — the listener's address, its bearer
 * tokens and origin checks, the limits it was built with, the log — and which of them a re-read
 * config changes. A reload that changes one must say so: an operator rotating a leaked token by
 * SIGHUP has to learn that the old token still works until the restart.
 */
import { isDeepStrictEqual } from "node:util";
import type { ProxyConfig } from "./schema.js";

const FIXED_AT_START = ["listen", "auth", "allowedOrigins", "allowedHosts", "limits", "log"] as const;

/**
 * The paths of the fixed settings `reloaded` changes from `running` ("auth.bearerTokens",
 * "limits.maxSessions", "allowedOrigins"), one level into objects. Paths only: never values.
 */
export function settingsNeedingRestart(running: ProxyConfig, reloaded: ProxyConfig): string[] {
  const paths: string[] = [];
  for (const key of FIXED_AT_START) {
    const before: unknown = running[key];
    const after: unknown = reloaded[key];
    if (isDeepStrictEqual(before, after)) continue;
    if (!isRecord(before) || !isRecord(after)) {
      paths.push(key);
      continue;
    }
    for (const field of new Set([...Object.keys(before), ...Object.keys(after)]))
      if (!isDeepStrictEqual(before[field], after[field])) paths.push(`${key}.${field}`);
  }
  return paths;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
