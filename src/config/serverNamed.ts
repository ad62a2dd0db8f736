import type { ProxyConfig, ServerConfig } from "./schema.js";

/** The server a config names `name`: an own key only — "toString" is no server, whatever objects inherit. */
export function serverNamed(config: Pick<ProxyConfig, "mcpServers">, name: string): ServerConfig | undefined {
  return Object.hasOwn(config.mcpServers, name) ? config.mcpServers[name] : undefined;
}
