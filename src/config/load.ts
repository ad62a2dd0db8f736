/**
 * Loading a config: read, parse, expand `${VAR}`, validate once at the edge (STYLE habit 6).
 * Every failure is a NormalizerError whose message names the file and the JSON path at fault.
 */
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import type { z } from "zod";
import { NormalizerError } from "../errors/NormalizerError.js";
import { expandEnv } from "./env.js";
import { ConfigSchema, type ProxyConfig } from "./schema.js";

export interface LoadedConfig {
  readonly config: ProxyConfig;
  /** Absolute path of the file, or "<inline>". */
  readonly file: string;
  /** Folder relative paths in the config (log.file) are resolved against. */
  readonly baseDir: string;
}

export function loadConfigFile(file: string, env: Readonly<Record<string, string | undefined>> = process.env): LoadedConfig {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new NormalizerError("CONFIG_NOT_FOUND", `cannot read config file ${file}: ${code === "ENOENT" ? "no such file" : String((error as Error).message)}`, { file });
  }
  return { config: parseConfig(text, file, env), file: path, baseDir: dirname(path) };
}

export function parseConfig(text: string, file: string, env: Readonly<Record<string, string | undefined>> = process.env): ProxyConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new NormalizerError("CONFIG_INVALID_JSON", `${file} is not valid JSON: ${(error as Error).message}`, { file });
  }
  return validateConfig(expandEnv(raw, env, file), file);
}

export function validateConfig(raw: unknown, file: string): ProxyConfig {
  const result = ConfigSchema.safeParse(raw);
  if (!result.success) {
    const lines = result.error.issues.flatMap((issue) => explain(issue, [])).map(({ path, text }) => `  ${formatPath(path)}: ${text}`);
    throw new NormalizerError("CONFIG_INVALID", `${file} is not a valid mcp-normalizer config:\n${lines.join("\n")}`, { file, issues: result.error.issues });
  }
  return result.data;
}

function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "$";
  for (const key of path) out += typeof key === "number" ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(String(key)) ? `.${String(key)}` : `[${JSON.stringify(String(key))}]`;
  return out;
}

const AUTH_SHAPES = 'expects "oauth", {clientId, clientSecret?, scopes?, callbackPort?} or {grant: "client_credentials", clientId, clientSecret, scopes?}';

/**
 * One line per problem. A union that failed every option (a server entry, a server's `auth`) is
 * explained by the option the input came closest to, so a bad field inside a remote server is
 * named instead of "needs command or url".
 */
function explain(issue: z.core.$ZodIssue, base: ReadonlyArray<PropertyKey>): Array<{ path: PropertyKey[]; text: string }> {
  const path = [...base, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const isServer = path.length === 2 && path[0] === "mcpServers";
    const neither = isServer && issue.errors.every((branch) => branch.some((e) => e.code === "invalid_type" && e.path.length === 1 && (e.path[0] === "command" || e.path[0] === "url")));
    if (neither) return [{ path, text: 'a server needs either "command" (stdio) or "url" (http(s):// or ws(s)://)' }];
    const best = [...issue.errors].sort((a, b) => mismatch(a) - mismatch(b) || a.length - b.length)[0]!;
    if (path[path.length - 1] === "auth" && best.some((e) => e.path.length === 0)) return [{ path, text: AUTH_SHAPES }];
    return best.flatMap((inner) => explain(inner, path));
  }
  return [{ path, text: describeIssue(issue) }];
}

/** How far an input is from a union option: wrong type or literal at its top counts most. */
function mismatch(issues: readonly z.core.$ZodIssue[]): number {
  let score = 0;
  for (const e of issues) {
    if (e.path.length === 0 && (e.code === "invalid_type" || e.code === "invalid_value")) score += 4;
    else if (e.path.length === 1 && e.code === "invalid_value") score += 2;
    else if (e.path.length === 1 && e.code === "invalid_type") score += 1;
  }
  return score;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") return `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}`;
  return issue.message;
}

export function resolveFrom(baseDir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path);
}
