/**
 * Loading a config: read, parse, expand `${VAR}`, validate once at the edge.
 * Every failure is a NormalizerError whose message names the file and the JSON path at fault.
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { z } from "zod";
import { NormalizerError } from "../errors/NormalizerError.js";
import { closestName } from "../errors/didYouMean.js";
import { define, isJsonObject, type JsonObject } from "../normalize/objects.js";
import { expandEnv, memberPath } from "./env.js";
import { NOT_A_HEADER_NAME } from "./headerValue.js";
import { checkJsonText, formatPath, MAX_DEPTH } from "./jsonLocation.js";
import { ConfigSchema, type ProxyConfig } from "./schema.js";
import { otherFormatKey, unknownKeyHint } from "./unknownKey.js";

export interface LoadedConfig {
  readonly config: ProxyConfig;
  /** Absolute path of the file, or "<inline>". */
  readonly file: string;
  /** Folder relative paths in the config (log.file) are resolved against. */
  readonly baseDir: string;
  /**
   * Environment variables the config reads where it holds credentials (`${MCPN_TOKEN}` in
   * `bearerTokens`, a server's `auth`, `headers` or `url`): `serve` never passes them on to
   * upstream processes.
   */
  readonly secretVariables: readonly string[];
  /**
   * With `onlyServer`: the servers the file does not disable (the others are marked disabled in
   * `config`, not being run) — what a `--server` that names none of them is told to choose from.
   */
  readonly enabledInFile?: readonly string[];
}

export interface LoadOptions {
  /**
   * Refuse what is not a regular file. A reload sets it: reading a pipe whose writer is gone
   * (`--config <(…)` after the shell moved on) would block the whole process until one comes.
   */
  readonly regularFileOnly?: boolean;
  /**
   * The one server a command runs (`stdio`, `audit` with `--server`): the others are not started,
   * so their `${VAR}`s need not be set — as a disabled server's. `null`: the command runs none
   * (`normalize` reads only the normalize settings).
   */
  readonly onlyServer?: string | null;
}

export function loadConfigFile(
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: LoadOptions = {},
): LoadedConfig {
  const path = resolve(file);
  let text: string;
  try {
    const stat = options.regularFileOnly === true ? statSync(path) : undefined;
    if (stat !== undefined && !stat.isFile())
      throw new NormalizerError(
        "CONFIG_NOT_FOUND",
        `cannot read config file ${file} again: ${
          stat.isDirectory() ? "it is a folder now, not a file" : "it is not a regular file (a pipe or a device)"
        }`,
        { file },
      );
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof NormalizerError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new NormalizerError(
      "CONFIG_NOT_FOUND",
      `cannot read config file ${file}: ${
        code === "ENOENT"
          ? "no such file"
          : code === "EISDIR"
            ? "a folder, not a file"
            : String((error as Error).message)
      }`,
      { file },
    );
  }
  const { config, secretVariables, enabledInFile } = parseConfigText(text, file, env, options.onlyServer);
  const loaded = { config, file: path, baseDir: dirname(path), secretVariables };
  return options.onlyServer === undefined ? loaded : { ...loaded, enabledInFile };
}

export function parseConfig(
  text: string,
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ProxyConfig {
  return parseConfigText(text, file, env).config;
}

/**
 * Where the config holds credentials: the listener's `auth`, and each server's `auth` (OAuth client
 * secrets), `headers` (API keys, tokens), `url` (userinfo, query keys) and `env` (a stdio server's
 * keys). The variables read there are never passed on to stdio upstreams but through a server's own
 * `env`: one server's key is not another's to read.
 */
const SERVER_PATH = String.raw`\.mcpServers(\.[A-Za-z_$][\w$]*|\["(?:[^"\\]|\\.)*"\])`;
const SECRET_PATH = new RegExp(String.raw`^\$(\.auth|${SERVER_PATH}\.(auth|headers|url|env))(?=$|[.[])`);

/**
 * The config, the environment variables it reads where it holds credentials (`SECRET_PATH`), and
 * the servers the file itself does not disable.
 */
export function parseConfigText(
  text: string,
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  onlyServer?: string | null,
): { config: ProxyConfig; secretVariables: string[]; enabledInFile: string[] } {
  let raw: unknown;
  // Editors on Windows save UTF-8 with a byte order mark; JSON.parse refuses it.
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const problem = checkJsonText(json);
  if (problem !== undefined && problem.kind !== "syntax") {
    const what =
      problem.kind === "duplicate"
        ? `${problem.path} is given twice (again at line ${problem.line}, column ${problem.column}); JSON keeps ` +
          "only the last one, so the first would be ignored without a word: keep one"
        : `${problem.path} is nested more than ${MAX_DEPTH} levels deep ` +
          `(line ${problem.line}, column ${problem.column})`;
    throw new NormalizerError("CONFIG_INVALID", `${file} is not a valid mcp-normalizer config:\n  ${what}`, {
      file,
      line: problem.line,
      column: problem.column,
      path: problem.path,
    });
  }
  try {
    raw = JSON.parse(json);
  } catch (error) {
    const at = problem;
    // Node's own message quotes a stretch of the text (a token can be a secret): only our words.
    const where =
      at === undefined
        ? `: ${(error as Error).message}`
        : ` at line ${at.line}, column ${at.column} (in ${at.path}): expected ${at.expected}`;
    const hint = at === undefined ? "" : notJsonHint(json, file, at.line, at.column);
    throw new NormalizerError("CONFIG_INVALID_JSON", `${file} is not valid JSON${where}${hint}`, {
      file,
      ...(at === undefined ? {} : { line: at.line, column: at.column, path: at.path }),
    });
  }
  const other = otherFormatKey(raw);
  if (other !== undefined)
    throw new NormalizerError(
      "CONFIG_INVALID",
      `${file} is not a valid mcp-normalizer config:\n  $: unknown key ${JSON.stringify(other.key)}${other.hint}`,
      { file, path: "$" },
    );
  const secretVariables = new Set<string>();
  // The servers a command does not run are read as disabled ones: their variables need not be set.
  const run = othersDisabled(raw, onlyServer);
  const disabled = notRunPaths(raw, onlyServer);
  const expanded = expandEnv(
    run,
    env,
    file,
    "$",
    (variable, at) => {
      if (SECRET_PATH.test(at)) secretVariables.add(variable);
    },
    (at) => disabled.some((prefix) => at === prefix || at.startsWith(`${prefix}.`) || at.startsWith(`${prefix}[`)),
  );
  return {
    config: validateConfig(expanded, file),
    secretVariables: [...secretVariables],
    enabledInFile: serverEntries(raw)
      .filter(([, server]) => !isDisabled(server))
      .map(([name]) => name),
  };
}

/**
 * The config with every server but `onlyServer` disabled: not run, not checked as run (all of
 * them, when the one named is not in the file: the command then says so, not what another
 * server's variables lack).
 */
function othersDisabled(config: unknown, onlyServer: string | null | undefined): unknown {
  if (onlyServer === undefined || serverEntries(config).length === 0) return config;
  const out: JsonObject = {};
  // Defined, not assigned: a server named "__proto__" stays a key, for the check that refuses it.
  for (const [name, server] of serverEntries(config))
    define(out, name, name === onlyServer || !isJsonObject(server) ? server : { ...server, disabled: true });
  return { ...(config as Record<string, unknown>), mcpServers: out };
}

/**
 * What the text at a syntax error shows it to be, from another host's format: TOML (Codex's
 * config.toml), or JSON with comments or trailing commas (VS Code's and Zed's files allow them).
 */
function notJsonHint(text: string, file: string, line: number, column: number): string {
  if (/\.toml$/i.test(file) || /^\s*\[[\w.-]+\]\s*$/m.test(text.slice(0, 4096).split("\n").slice(0, 20).join("\n")))
    return ' — this reads as TOML (Codex\'s config.toml): the config is JSON, its servers under "mcpServers"';
  const lines = text.split("\n");
  const rest = lines[line - 1]?.slice(column - 1) ?? "";
  if (rest.startsWith("//") || rest.startsWith("/*"))
    return " — a comment: JSON has none (VS Code's and Zed's files allow them); remove it";
  const lead = lines[line - 1]?.slice(0, column - 1) ?? "";
  const before = `${lines.slice(Math.max(0, line - 4), line - 1).join("\n")}\n${lead}`;
  if (/^[}\]]/.test(rest) && /,\s*$/.test(before)) return " — a comma before it: JSON takes none after the last item";
  return "";
}

/**
 * The JSON paths of the servers whose variables need not be set: those not run (marked
 * `"disabled": true`, or not `onlyServer`), and entries that are no object — refused for what
 * they are, not for a variable they name.
 */
function notRunPaths(raw: unknown, onlyServer: string | null | undefined): string[] {
  return serverEntries(raw)
    .filter(
      ([name, server]) =>
        isDisabled(server) || !isJsonObject(server) || (onlyServer !== undefined && name !== onlyServer),
    )
    .map(([name]) => memberPath("$.mcpServers", name));
}

/** The entries of a config's `mcpServers` as read from the file (none when it is no object). */
function serverEntries(raw: unknown): Array<[string, unknown]> {
  const servers = (raw as { mcpServers?: unknown } | null)?.mcpServers;
  return isJsonObject(servers) ? Object.entries(servers) : [];
}

function isDisabled(server: unknown): boolean {
  return (server as { disabled?: unknown } | null)?.disabled === true;
}

export function validateConfig(raw: unknown, file: string): ProxyConfig {
  const reserved = findProtoKey(raw, []);
  if (reserved !== undefined) {
    // A key named __proto__ would be dropped without a word while the config is read.
    throw new NormalizerError(
      "CONFIG_INVALID",
      `${file} is not a valid mcp-normalizer config:\n  ${formatPath(reserved)}: "__proto__" cannot be used as a ` +
        `name here (JavaScript reserves it); choose another name`,
      { file, path: formatPath(reserved) },
    );
  }
  const result = ConfigSchema.safeParse(raw);
  if (!result.success) {
    const lines = issueLines(result.error.issues, raw);
    throw new NormalizerError("CONFIG_INVALID", `${file} is not a valid mcp-normalizer config:\n${lines.join("\n")}`, {
      file,
      issues: result.error.issues,
    });
  }
  return result.data;
}

/**
 * One indented line per problem `schema` found in `raw`, each naming its path from `root` (`$`
 * in a config file; the option's name for options given in code) and what was given there.
 */
export function issueLines(
  found: readonly z.core.$ZodIssue[],
  raw: unknown,
  schema: z.ZodType = ConfigSchema,
  root = "$",
): string[] {
  // Unknown keys first: a misspelt key is usually why a required one is missing.
  const issues = [...found].sort(
    (a, b) => Number(b.code === "unrecognized_keys") - Number(a.code === "unrecognized_keys"),
  );
  return issues
    .flatMap((issue) => explain(issue, [], schema))
    .map(
      ({ path, text }) =>
        `  ${root}${formatPath(path).slice(1)}: ${text}${givenAt(raw, path, text)}${misspeltKeyIn(raw, path, text)}`,
    );
}

/**
 * `, got 99999`: what the config holds where a value was refused. Strings are never quoted (a
 * value can be a secret): only their kind is named.
 */
function givenAt(raw: unknown, path: ReadonlyArray<PropertyKey>, text: string): string {
  if (!/^(Too (big|small)|Invalid input: expected)/.test(text)) return "";
  const value = valueAt(raw, path);
  if (value === undefined) return "";
  if (/received \w+$/.test(text)) return ""; // the type is already named
  if (typeof value === "number" || typeof value === "boolean" || value === null) return `, got ${String(value)}`;
  return typeof value === "string"
    ? ", got a string"
    : Array.isArray(value)
      ? ", got an array"
      : typeof value === "object"
        ? ", got an object"
        : "";
}

/**
 * For a server entry with neither `command` nor `url`: the key of it that is one misspelt
 * (`"comand"`), if any. Other keys in an entry are accepted (hosts add their own), so it is
 * found only here.
 */
function misspeltKeyIn(raw: unknown, path: ReadonlyArray<PropertyKey>, text: string): string {
  if (!text.startsWith(NEITHER_COMMAND_NOR_URL)) return "";
  const entry = valueAt(raw, path);
  if (typeof entry !== "object" || entry === null) return "";
  for (const key of Object.keys(entry)) {
    // Another host's name for it (Windsurf's "serverUrl", some hosts' "uri").
    if (Object.hasOwn(OTHER_HOSTS_URL_KEYS, key)) return `; ${JSON.stringify(key)} is ${OTHER_HOSTS_URL_KEYS[key]}`;
    const meant = closestName(key, ["command", "url"]);
    if (meant !== undefined) return `; ${JSON.stringify(key)} is no key here (did you mean ${JSON.stringify(meant)}?)`;
  }
  return "";
}

/**
 * What stands at `path` in a parsed JSON value, its own members only; undefined when nothing
 * does (no JSON value is undefined).
 */
function valueAt(raw: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let value = raw;
  for (const key of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** The path of the first own `__proto__` key in a parsed JSON value, if any. */
function findProtoKey(value: unknown, path: Array<string | number>): Array<string | number> | undefined {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findProtoKey(value[i], [...path, i]);
      if (found !== undefined) return found;
    }
  } else if (typeof value === "object" && value !== null) {
    for (const key of Object.keys(value)) {
      if (key === "__proto__") return [...path, key];
      const found = findProtoKey((value as Record<string, unknown>)[key], [...path, key]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

const AUTH_SHAPES =
  'expects "oauth", {clientId?, clientSecret?, issuer?, scopes?, callbackPort?} or {grant: "client_credentials", ' +
  "clientId, clientSecret, issuer, scopes?}";

/** Keys other hosts give a remote server's URL, and what they are here. */
const OTHER_HOSTS_URL_KEYS: Record<string, string> = {
  serverUrl: 'Windsurf\'s name for "url": call it "url" here',
  uri: 'not read here: call the server\'s address "url"',
};

const NEITHER_COMMAND_NOR_URL = 'a server needs either "command" (stdio) or "url" (http(s):// or ws(s)://)';

/**
 * One line per problem. A union that failed every option (a server entry, a server's `auth`) is
 * explained by the option the input came closest to, so a bad field inside a remote server is
 * named instead of "needs command or url".
 */
function explain(
  issue: z.core.$ZodIssue,
  base: ReadonlyArray<PropertyKey>,
  schema: z.ZodType,
): Array<{ path: PropertyKey[]; text: string }> {
  const path = [...base, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const isServer = path.length === 2 && path[0] === "mcpServers";
    const neither =
      isServer &&
      issue.errors.every((branch) =>
        branch.some((e) => isMissing(e) && e.path.length === 1 && (e.path[0] === "command" || e.path[0] === "url")),
      );
    if (neither) return [{ path, text: NEITHER_COMMAND_NOR_URL }];
    // A value of a type no option takes (`"images": "yes"`): every type it could be, not the first's.
    const types = issue.errors.map((branch) =>
      branch.length === 1 && branch[0]!.path.length === 0 && branch[0]!.code === "invalid_type"
        ? branch[0]!.expected
        : undefined,
    );
    const received = / received (\S+)$/.exec(issue.errors[0]![0]?.message ?? "")?.[1];
    if (received !== undefined && types.every((type) => type !== undefined))
      return [{ path, text: `Invalid input: expected ${[...new Set(types)].join(" or ")}, received ${received}` }];
    const best = [...issue.errors].sort((a, b) => mismatch(a) - mismatch(b) || a.length - b.length)[0]!;
    if (path[path.length - 1] === "auth" && best.some((e) => e.path.length === 0)) return [{ path, text: AUTH_SHAPES }];
    return best.flatMap((inner) => explain(inner, path, schema));
  }
  // A header name may be a credential pasted with its colon forgotten: the path does not show it.
  if (issue.code === "invalid_key" && issue.issues.some((inner) => inner.message === NOT_A_HEADER_NAME))
    return [{ path: path.slice(0, -1), text: `a header's name (not shown) ${NOT_A_HEADER_NAME}` }];
  return [{ path, text: describeIssue(issue, path, schema) }];
}

/**
 * How far an input is from a union option: wrong type or literal at its top counts most, and
 * most of all a server entry without the key that makes it that kind (`command`, `url`): a
 * `url` entry with a bad `transport` is a remote server with a bad field, not a stdio one
 * missing its command.
 */
function mismatch(issues: readonly z.core.$ZodIssue[]): number {
  let score = 0;
  for (const e of issues) {
    if (e.path.length === 1 && (e.path[0] === "command" || e.path[0] === "url") && isMissing(e)) score += 8;
    else if (e.path.length === 0 && (e.code === "invalid_type" || e.code === "invalid_value")) score += 4;
    else if (e.path.length === 1 && e.code === "invalid_value") score += 3;
    else if (e.path.length === 1 && e.code === "invalid_type") score += 1;
  }
  return score;
}

function isMissing(issue: z.core.$ZodIssue): issue is z.core.$ZodIssueInvalidType {
  return issue.code === "invalid_type" && / received undefined$/.test(issue.message);
}

function describeIssue(issue: z.core.$ZodIssue, path: ReadonlyArray<PropertyKey>, schema: z.ZodType): string {
  if (issue.code === "unrecognized_keys")
    return (
      `unknown key${issue.keys.length > 1 ? "s" : ""} ` +
      `${issue.keys.map((k) => `${JSON.stringify(k)}${unknownKeyHint(k, path, schema)}`).join(", ")}`
    );
  // A record key refused (a server name): the reason is in the inner issues.
  if (issue.code === "invalid_key") return issue.issues.map((inner) => inner.message).join("; ");
  if (isMissing(issue)) {
    return path.length === 1 && path[0] === "mcpServers"
      ? 'missing: the servers to front, {"NAME": {"command": …} or {"url": …}}'
      : `missing (expected ${issue.expected})`;
  }
  return issue.message;
}
