import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CLI = join(ROOT, "dist", "cli.js");
export const FIXTURE_SERVER = join(ROOT, "test", "fixtures", "servers", "fixture-server.mjs");
export const EVERYTHING_SERVER = join(
  ROOT,
  "node_modules",
  "@modelcontextprotocol",
  "server-everything",
  "dist",
  "index.js",
);
export const FILESYSTEM_SERVER = join(
  ROOT,
  "node_modules",
  "@modelcontextprotocol",
  "server-filesystem",
  "dist",
  "index.js",
);
export const IMAGE_SERVER = join(ROOT, "test", "fixtures", "servers", "image-server.mjs");
export const MEMORY_SERVER = join(ROOT, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js");
export const TASKS_SERVER = join(ROOT, "test", "fixtures", "servers", "tasks-server.mjs");
/** The MCP Inspector's CLI mode (`inspector --cli`), a real MCP client. */
export const INSPECTOR_CLI = join(ROOT, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "cli.js");
