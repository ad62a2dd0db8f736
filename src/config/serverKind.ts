/** Which kind of upstream a `mcpServers` entry names, without loading the schema. */
import type { ServerConfig, StdioServerConfig } from "./schema.js";

export function isStdioServer(server: ServerConfig): server is StdioServerConfig {
  return typeof (server as StdioServerConfig).command === "string";
}
