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
