/**
 * Keys of a server entry the proxy does not read that look like misspellings of keys it does
 * (`"evn"` for `"env"`, `"argz"` for `"args"`). An entry may hold keys the proxy does not know —
 * desktop hosts add their own, so a pasted block loads — which makes these no error; they are
 * named when the config is read, so a typo that leaves a server without its `env` or `args` is
 * seen in the log rather than guessed at from the server's failure.
 */
import { closestName } from "../errors/didYouMean.js";
import { formatPath } from "./jsonLocation.js";
import { knownKeysAt } from "./knownKeys.js";
import type { ProxyConfig } from "./schema.js";

export interface MisspeltKey {
  /** Where it is (`$.mcpServers.NAME.evn`). */
  readonly key: string;
  /** The key it is closest to (`env`). */
  readonly meant?: string;
  /** For another host's key the proxy does not read (VS Code's `envFile`): what to do instead. */
  readonly note?: string;
}

/**
 * Keys other hosts read that change what their server gets, which the proxy does not: a pasted
 * entry with one would start its server without it, in silence.
 */
const UNREAD_HOST_KEYS: Readonly<Record<string, string>> = {
  envFile: 'VS Code\'s "envFile" is not read here: give its variables in "env" (or ${VAR} from the environment)',
};

/**
 * Keys hosts write in their entries that are a letter or two from one the proxy reads: theirs,
 * not typos (Gemini CLI's `oauth` block for a remote server).
 */
const HOSTS_KEYS = new Set(["oauth"]);

export function misspeltServerKeys(config: Pick<ProxyConfig, "mcpServers">): MisspeltKey[] {
  const found: MisspeltKey[] = [];
  for (const [name, entry] of Object.entries(config.mcpServers)) {
    const known = knownKeysAt(["mcpServers", name]);
    for (const key of Object.keys(entry)) {
      if (known.includes(key) || HOSTS_KEYS.has(key)) continue;
      if (Object.hasOwn(UNREAD_HOST_KEYS, key)) {
        found.push({ key: formatPath(["mcpServers", name, key]), note: UNREAD_HOST_KEYS[key]! });
        continue;
      }
      const meant = closestName(key, known);
      if (meant !== undefined) found.push({ key: formatPath(["mcpServers", name, key]), meant });
    }
  }
  return found;
}
