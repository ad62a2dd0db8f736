/**
 * `${VAR}` (and `${VAR:-default}`) in any string of the config reads the environment
 * (DESIGN.md §5). A missing variable is an error naming the variable and the JSON path.
 */
import { NormalizerError } from "../errors/NormalizerError.js";

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export function expandEnv(value: unknown, env: Readonly<Record<string, string | undefined>>, file: string, path = "$"): unknown {
  if (typeof value === "string") {
    return value.replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== "") return found;
      if (fallback !== undefined) return fallback;
      throw new NormalizerError("CONFIG_ENV_MISSING", `${file}: ${path} uses \${${name}}, but the environment variable ${name} is not set`, { file, path, variable: name });
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => expandEnv(item, env, file, `${path}[${i}]`));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, key, { value: expandEnv(item, env, file, `${path}.${key}`), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}
