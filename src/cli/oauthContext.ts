/**
 * What the commands give the OAuth layer: the token directory, the login command errors quote
 * (`mcp-normalizer login NAME --config FILE`, or `login --url URL` for a server named on the
 * command line), and — for stdio and login — how the authorization URL reaches the user.
 */
import type { ProxyConfig } from "../config/schema.js";
import type { Logger } from "../observe/logger.js";
import { hasAuth, UpstreamAuths } from "../proxy/upstreamAuths.js";
import { describeUrl } from "../transports/upstream/upstreamMessages.js";
import { describeDuration } from "../errors/describeDuration.js";
import { tokenDirectory } from "../upstreamAuth/tokenStore.js";
import type { LoginPrompt } from "../upstreamAuth/types.js";
import type { CliIo } from "./io.js";

/**
 * The command that logs in to `server`. Without a config file, by URL — never quoting its query
 * (it may hold a key): a URL with one is shown with `?…`, for the user to give the query they
 * configured (the token file is the URL's, query included) — and with `--transport sse` for a
 * legacy SSE server, which answers only the GET of its stream.
 */
export function loginCommandFor(
  configFile: string | undefined,
): (server: string, url: string, transport?: string) => string {
  return (server, url, transport) =>
    configFile === undefined
      ? `mcp-normalizer login --url ${shellWord(`${describeUrl(url)}${hasQuery(url) ? "?…" : ""}`)}` +
        (transport === "sse" ? " --transport sse" : "")
      : `mcp-normalizer login ${shellWord(server)} --config ${shellWord(configFile)}`;
}

function hasQuery(url: string): boolean {
  try {
    return new URL(url).search !== "";
  } catch {
    return false;
  }
}

/** The URL on a line of its own on stderr (stdout is the host's, or the command's result). */
export function stderrPrompt(
  io: CliIo,
  timeoutMs: number,
  openBrowser: boolean,
  lead: (server: string) => string,
): LoginPrompt {
  return {
    announce: (url, server) =>
      void io.stderr.write(`${lead(server)} (waiting up to ${describeDuration(timeoutMs)}):\n${url.href}\n`),
    openBrowser,
    timeoutMs,
  };
}

export function createUpstreamAuths(
  io: CliIo,
  config: ProxyConfig,
  configFile: string | undefined,
  logger: Logger,
  interactive?: { openBrowser: boolean },
): UpstreamAuths {
  // Only a server with `auth` needs the token folder: a config that has one learns now what is
  // wrong with it; one without is never stopped by it (a later reload asks when it adds one).
  if (Object.values(config.mcpServers).some((server) => server.disabled !== true && hasAuth(server)))
    tokenDirectory(io.env);
  return new UpstreamAuths({
    tokenDir: () => tokenDirectory(io.env),
    loginCommand: loginCommandFor(configFile),
    oauthRequestTimeoutMs: config.limits.oauthRequestTimeoutMs,
    logger,
    ...(interactive === undefined
      ? {}
      : {
          interactive: stderrPrompt(
            io,
            config.limits.loginTimeoutMs,
            interactive.openBrowser,
            (server) => `mcp-normalizer: upstream "${server}" needs an OAuth login; open this URL in a browser`,
          ),
        }),
  });
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
