/**
 * The three ways to name one upstream on the command line (stdio, audit, serve --name):
 * a command (`-- CMD ARGS…`, `CMD ARGS…`, `--command CMD --arg A…`), `--url URL [--transport T]
 * [--header "K: V"]`, `--config FILE --server NAME`.
 */
import { resolve } from "node:path";
import { NormalizerError } from "../errors/NormalizerError.js";
import { didYouMean } from "../errors/didYouMean.js";
import { shownUrl } from "./shownUrl.js";
import { configForOneServer } from "../config/flagConfig.js";
import { serverNamed } from "../config/serverNamed.js";
import type { ProxyConfig, ServerConfig } from "../config/schema.js";
import type { ChildEnvironment } from "../proxy/upstreamFactory.js";
import { parseHeaderFlags } from "./args.js";
import { defaultUpstreamName, upstreamCommandOf } from "./upstreamCommand.js";
import { serverNameProblem } from "../config/serverName.js";
import { hasUrlCredentials, URL_CREDENTIALS } from "../config/urlCredentials.js";
import { isPlainHttpBeyondLoopback, PLAIN_HTTP_OAUTH_FLAG } from "../config/loopback.js";

export const SELECTOR_OPTIONS = {
  url: { type: "string" },
  transport: { type: "string" },
  header: { type: "string", multiple: true },
  auth: { type: "string" },
  config: { type: "string" },
  server: { type: "string" },
  command: { type: "string" },
  arg: { type: "string", multiple: true },
} as const;

export const SELECTOR_HELP = `Upstream (exactly one of):
  -- CMD ARGS…           spawn CMD (no shell) and speak MCP over its stdin/stdout; the "--" may
                         be left out (CMD is the first word that is not an option, and the
                         words after it are CMD's), for launchers that drop it (MCP Inspector)
  --command CMD [--arg A]…   the same as flags (a value starting with '-': --arg=-y)
  --url URL              an HTTP(S) or WS(S) MCP endpoint
    --transport T        streamable-http (default for http URLs) | sse | websocket
    --header "K: V"      extra request header (repeatable)
    --auth oauth         the server requires OAuth: the token "mcp-normalizer login --url URL" stored
                         (stdio runs that browser login itself when it has none)
  --config FILE --server NAME   a server from a proxy config file`;

export interface SelectorValues {
  command?: string | undefined;
  arg?: string[] | undefined;
  url?: string | undefined;
  transport?: string | undefined;
  header?: string[] | undefined;
  auth?: string | undefined;
  config?: string | undefined;
  server?: string | undefined;
}

export interface SelectedUpstream {
  readonly name: string;
  readonly server: ServerConfig;
  /** The whole config: loaded from --config, or the defaults around the one server. */
  readonly config: ProxyConfig;
  readonly configFile: string | undefined;
  /** The variables the config reads where it holds credentials: never a stdio child's to read. */
  readonly secretVariables: readonly string[];
}

/**
 * A stdio child of `stdio` or `audit` gets the environment the host or shell gave the proxy; chosen
 * from a config, less the variables the config reads for credentials (another server's key).
 */
export function childEnvironmentOf(selected: SelectedUpstream): ChildEnvironment {
  return selected.configFile === undefined ? "inherit" : { withhold: selected.secretVariables, inheritAll: true };
}

const TRANSPORTS = new Set(["streamable-http", "sse", "websocket"]);

/** What a config sets instead of each flag that goes with `--url` only. */
export const IN_A_CONFIG = {
  "--transport": 'in a config, set the server\'s "transport"',
  "--header": 'in a config, set the server\'s "headers"',
  "--auth": 'in a config, set the server\'s "auth"',
} as const;

/** The first flag given that goes with `--url` only, if any. */
export function urlOnlyFlagOf(values: SelectorValues): keyof typeof IN_A_CONFIG | undefined {
  if (values.transport !== undefined) return "--transport";
  if (values.header !== undefined) return "--header";
  if (values.auth !== undefined) return "--auth";
  return undefined;
}

/**
 * `words`: the command split off the command line (after `--` or from its first operand). `name`:
 * what records and endpoints call the upstream (`--name`); by default its executable's base name
 * or its URL's host, and with `--config` the server's name there.
 */
export async function selectUpstream(
  values: SelectorValues,
  words: readonly string[],
  commandName: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
  name?: string,
): Promise<SelectedUpstream> {
  const command = upstreamCommandOf(values, words, commandName);
  const chosen = [command.length > 0, values.url !== undefined, values.config !== undefined].filter(Boolean).length;
  if (chosen !== 1) {
    // Words beside --url or --config are a command given as well, or a flag value with a space, unquoted.
    const stray =
      chosen > 1 && command.length > 0 && values.command === undefined
        ? ` (${command.length === 1 ? "a word" : `${command.length} words`} beside the flags read as a command, ` +
          "not shown: give the command or the flag, not both; a flag's value that has spaces is quoted, e.g. " +
          "--header 'X-Key: v')"
        : "";
    // serve reads a config file itself (every server of it): not one of its forms of one upstream.
    const forms =
      commandName === "serve"
        ? '"-- CMD ARGS…" or --url URL'
        : '"-- CMD ARGS…", --url URL, or --config FILE --server NAME';
    throw new NormalizerError(
      "USAGE",
      `${commandName}: name exactly one upstream: ${forms} (see mcp-normalizer ${commandName} --help)${stray}`,
    );
  }
  if (values.config !== undefined) {
    if (name !== undefined)
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --name goes with an upstream on the command line; with --config the server keeps its name ` +
          `there (choose it with --server)`,
      );
    const urlFlag = urlOnlyFlagOf(values);
    if (urlFlag !== undefined)
      throw new NormalizerError("USAGE", `${commandName}: ${urlFlag} goes with --url; ${IN_A_CONFIG[urlFlag]}`);
    // The schema (zod) is loaded only for a config file: flags alone are checked here.
    const { loadConfigFile } = await import("../config/load.js");
    // The one server chosen is run: the others' variables need not be set.
    const loaded = loadConfigFile(
      resolve(cwd, values.config),
      env,
      values.server === undefined ? {} : { onlyServer: values.server },
    );
    const all = Object.keys(loaded.config.mcpServers);
    // A disabled server is not run: chosen by name, it is named as disabled; never chosen by default.
    const names = loaded.enabledInFile ?? all.filter((name) => loaded.config.mcpServers[name]!.disabled !== true);
    if (values.server !== undefined && serverNamed(loaded.config, values.server)?.disabled === true)
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --server ${values.server} is disabled in ${values.config} ("disabled": true); ` +
          "set it to false to use it",
      );
    const serverName = values.server ?? (names.length === 1 ? names[0] : undefined);
    if (serverName === undefined)
      throw new NormalizerError(
        "USAGE",
        `${commandName}: ${values.config} has ${names.length} servers (${names.join(", ")}); choose one with ` +
          `--server NAME`,
      );
    const server = serverNamed(loaded.config, serverName);
    if (server === undefined)
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --server ${serverName} is not in ${values.config} (servers: ${names.join(", ")})` +
          didYouMean(serverName, names),
      );
    return {
      name: serverName,
      server,
      config: loaded.config,
      configFile: loaded.file,
      secretVariables: loaded.secretVariables,
    };
  }
  if (values.server !== undefined) throw new NormalizerError("USAGE", `${commandName}: --server needs --config`);
  let server: ServerConfig;
  if (values.url !== undefined) {
    if (values.transport !== undefined && !TRANSPORTS.has(values.transport)) {
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --transport expects streamable-http, sse or websocket, got ` +
          `${JSON.stringify(values.transport)}`,
      );
    }
    if (!/^(https?|wss?):\/\//i.test(values.url))
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --url expects an http(s):// or ws(s):// URL, got ${shownUrl(values.url)}`,
      );
    if (!URL.canParse(values.url))
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --url is not a valid URL (a space, a bad port or an unclosed [ in it?), got ` +
          shownUrl(values.url),
      );
    if (hasUrlCredentials(values.url))
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --url ` +
          URL_CREDENTIALS.replace("as a header", "with --header").replace('"auth"', "--auth oauth"),
      );
    const headers = parseHeaderFlags(values.header, commandName);
    if (values.auth !== undefined && values.auth !== "oauth")
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --auth expects oauth, got ${JSON.stringify(values.auth)} (client credentials and ` +
          `pre-registered clients go in a config's "auth")`,
      );
    if (values.auth !== undefined && (/^wss?:/i.test(values.url) || values.transport === "websocket"))
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --auth oauth works with http(s) upstreams (streamable-http, sse), not WebSocket`,
      );
    if (values.auth !== undefined && isPlainHttpBeyondLoopback(values.url))
      throw new NormalizerError("USAGE", `${commandName}: --url ${PLAIN_HTTP_OAUTH_FLAG} (--auth oauth)`);
    if (values.auth !== undefined && Object.keys(headers ?? {}).some((h) => h.toLowerCase() === "authorization"))
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --auth oauth and an Authorization --header together: the OAuth token is the Authorization ` +
          `header; remove one`,
      );
    server = {
      url: values.url,
      ...(values.transport === undefined
        ? {}
        : { transport: values.transport as "streamable-http" | "sse" | "websocket" }),
      ...(headers === undefined ? {} : { headers }),
      ...(values.auth === undefined ? {} : { auth: "oauth" as const }),
    };
  } else {
    if (urlOnlyFlagOf(values) !== undefined)
      throw new NormalizerError("USAGE", `${commandName}: --transport, --header and --auth go with --url`);
    if (command[0] === "")
      throw new NormalizerError("USAGE", `${commandName}: the upstream's executable is an empty string`);
    server = { command: command[0]!, args: command.slice(1) };
  }
  const serverName = name ?? defaultUpstreamName(command, values.url);
  const problem = serverNameProblem(serverName);
  if (problem !== undefined)
    throw new NormalizerError("USAGE", `${commandName}: --name ${JSON.stringify(serverName)}: ${problem}`);
  return {
    name: serverName,
    server,
    config: configForOneServer(serverName, server),
    configFile: undefined,
    secretVariables: [],
  };
}
