/** What a config that loaded still gets said about, at `warn`: keys of a server entry that look misspelt. */
import { misspeltServerKeys } from "../config/misspeltKeys.js";
import type { ProxyConfig } from "../config/schema.js";
import type { Logger } from "../observe/logger.js";

export function warnMisspeltKeys(config: Pick<ProxyConfig, "mcpServers">, logger: Logger): void {
  for (const { key, meant, note } of misspeltServerKeys(config))
    logger.warn(note === undefined ? `config key not read, did you mean "${meant}"?` : `config key not read: ${note}`, {
      key,
    });
}
