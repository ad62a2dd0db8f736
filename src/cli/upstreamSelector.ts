/**
 * The three ways to name one upstream on the command line (stdio, audit, serve --name):
 * `-- CMD ARGS…`, `--url URL [--transport T] [--header "K: V"]`, `--config FILE --server NAME`.
 */
import { resolve } from "node:path";
import { NormalizerError } from "../errors/NormalizerError.js";
import { loadConfigFile } from "../config/load.js";
import { ConfigSchema, type ProxyConfig, type ServerConfig } from "../config/schema.js";
import { parseHeaderFlags } from "./args.js";

export const SELECTOR_OPTIONS = {
  url: { type: "string" },
  transport: { type: "string" },
  header: { type: "string", multiple: true },
  auth: { type: "string" },
  config: { type: "string" },
  server: { type: "string" },
} as const;

export const SELECTOR_HELP = `Upstream (exactly one of):
  -- CMD ARGS…           spawn CMD (no shell) and speak MCP over its stdin/stdout
  --url URL              an HTTP(S) or WS(S) MCP endpoint
    --transport T        streamable-http (default for http URLs) | sse | websocket
    --header "K: V"      extra request header (repeatable)
    --auth oauth         the server requires OAuth: the token "mcp-normalizer login --url URL" stored
                         (stdio runs that browser login itself when it has none)
  --config FILE --server NAME   a server from a proxy config file`;

export interface SelectorValues {
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
}

const TRANSPORTS = new Set(["streamable-http", "sse", "websocket"]);

export function selectUpstream(
  values: SelectorValues,
  command: readonly string[],
  commandName: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
  name = "upstream",
): SelectedUpstream {
  const chosen = [command.length > 0, values.url !== undefined, values.config !== undefined].filter(Boolean).length;
  if (chosen !== 1) {
    throw new NormalizerError(
      "USAGE",
      `${commandName}: name exactly one upstream: "-- CMD ARGS…", --url URL, or --config FILE --server NAME (see mcp-normalizer ${commandName} --help)`,
    );
  }
  if (values.config !== undefined) {
    if (values.auth !== undefined)
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --auth goes with --url; in a config, set the server's "auth"`,
      );
    const loaded = loadConfigFile(resolve(cwd, values.config), env);
    const names = Object.keys(loaded.config.mcpServers);
    const serverName = values.server ?? (names.length === 1 ? names[0] : undefined);
    if (serverName === undefined)
      throw new NormalizerError(
        "USAGE",
        `${commandName}: ${values.config} has ${names.length} servers (${names.join(", ")}); choose one with --server NAME`,
      );
    const server = loaded.config.mcpServers[serverName];
    if (server === undefined)
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --server ${serverName} is not in ${values.config} (servers: ${names.join(", ")})`,
      );
    return { name: serverName, server, config: loaded.config, configFile: loaded.file };
  }
  if (values.server !== undefined) throw new NormalizerError("USAGE", `${commandName}: --server needs --config`);
  let server: ServerConfig;
  if (values.url !== undefined) {
    if (values.transport !== undefined && !TRANSPORTS.has(values.transport)) {
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --transport expects streamable-http, sse or websocket, got ${JSON.stringify(values.transport)}`,
      );
    }
    if (!/^(https?|wss?):\/\//i.test(values.url))
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --url expects an http(s):// or ws(s):// URL, got ${JSON.stringify(values.url)}`,
      );
    const headers = parseHeaderFlags(values.header, commandName);
    if (values.auth !== undefined && values.auth !== "oauth")
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --auth expects oauth, got ${JSON.stringify(values.auth)} (client credentials and pre-registered clients go in a config's "auth")`,
      );
    if (values.auth !== undefined && (/^wss?:/i.test(values.url) || values.transport === "websocket"))
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --auth oauth works with http(s) upstreams (streamable-http, sse), not WebSocket`,
      );
    if (values.auth !== undefined && Object.keys(headers ?? {}).some((h) => h.toLowerCase() === "authorization"))
      throw new NormalizerError(
        "USAGE",
        `${commandName}: --auth oauth and an Authorization --header together: the OAuth token is the Authorization header; remove one`,
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
    if (values.transport !== undefined || values.header !== undefined || values.auth !== undefined)
      throw new NormalizerError("USAGE", `${commandName}: --transport, --header and --auth go with --url`);
    server = { command: command[0]!, args: command.slice(1) };
  }
  const config = ConfigSchema.parse({ mcpServers: { [name]: server } });
  return { name, server, config, configFile: undefined };
}
