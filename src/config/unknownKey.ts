/**
 * What to tell someone whose config has a key the schema does not know: the closest known key
 * at that place, or where a key from another host's config format belongs here.
 */
import { didYouMean } from "../errors/didYouMean.js";
import type { z } from "zod";
import { knownKeysAt } from "./knownKeys.js";
import { ConfigSchema } from "./schema.js";

/** Top-level keys of other MCP hosts' config files, and what they are called here. */
const OTHER_FORMATS: Record<string, string> = {
  servers: ' (VS Code\'s "servers" is "mcpServers" here)',
  mcp: ' (put the servers under "mcpServers")',
  context_servers: ' (Zed\'s "context_servers" is "mcpServers" here)',
};

/**
 * A file of another host's format (its servers under "servers", "context_servers"…, none under
 * "mcpServers"): the key and where it goes here, told before anything in it is read — its
 * editor variables (`${workspaceFolder}`) would otherwise be the first thing said wrong.
 */
export function otherFormatKey(raw: unknown): { key: string; hint: string } | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw) || Object.hasOwn(raw, "mcpServers"))
    return undefined;
  const key = Object.keys(raw).find((name) => Object.hasOwn(OTHER_FORMATS, name));
  return key === undefined ? undefined : { key, hint: OTHER_FORMATS[key]! };
}

/**
 * `" (did you mean \"mcpServers\"?)"`, a note for another format's key, or "". `schema`: what
 * the path is in (the config's by default; options given in code have their own).
 */
export function unknownKeyHint(
  key: string,
  path: ReadonlyArray<PropertyKey>,
  schema: z.ZodType = ConfigSchema,
): string {
  if (schema === ConfigSchema && path.length === 0 && Object.hasOwn(OTHER_FORMATS, key)) return OTHER_FORMATS[key]!;
  return didYouMean(key, knownKeysAt(path, schema));
}
