/**
 * The config of a proxy started with its one upstream on the command line (no `--config`): that
 * server, and every other key at its default. The flags are checked where they are read
 * (cli/upstreamSelector.ts), so nothing here needs the zod schema, which a desktop host starting
 * `stdio` would otherwise wait for. A test holds it equal to what the schema makes of the same
 * server.
 */
import { DEFAULT_HOST, DEFAULT_LIMITS, DEFAULT_LOG_LEVEL, DEFAULT_PORT } from "./defaults.js";
import type { ProxyConfig, ServerConfig } from "./schema.js";

export function configForOneServer(name: string, server: ServerConfig): ProxyConfig {
  return {
    listen: { host: DEFAULT_HOST, port: DEFAULT_PORT },
    mcpServers: { [name]: server },
    log: { level: DEFAULT_LOG_LEVEL },
    limits: { ...DEFAULT_LIMITS },
  };
}
