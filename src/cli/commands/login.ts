/**
 * `mcp-normalizer login NAME --config FILE`: the browser login for one remote server whose
 * config entry has `"auth": "oauth"` (or a pre-registered `{clientId, …}`), storing its tokens
 * for serve, stdio and audit. `login --url URL` does the same for a server named on the command
 * line (`stdio --url URL --auth oauth`).
 */
import { shownUrl } from "../shownUrl.js";
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { DEFAULT_CONFIG_FILE } from "../../config/defaults.js";
import { loadConfigFile } from "../../config/load.js";
import { serverNamed } from "../../config/serverNamed.js";
import { isPlainHttpBeyondLoopback, PLAIN_HTTP_OAUTH_FLAG } from "../../config/loopback.js";
import { ConfigSchema, isStdioServer, type ProxyConfig } from "../../config/schema.js";
import { authSpecOf } from "../../proxy/upstreamAuths.js";
import { transportOfServer } from "../../proxy/upstreamFactory.js";
import { describeUrl } from "../../transports/upstream/upstreamMessages.js";
import { runLoginFlow } from "../../upstreamAuth/loginFlow.js";
import { timedFetch } from "../../upstreamAuth/oauthFetch.js";
import { withFileLock } from "../../upstreamAuth/fileLock.js";
import { AUTH_DIR_ENV, readLogin, tokenDirectory, tokenFilePath, writeLogin } from "../../upstreamAuth/tokenStore.js";
import type { ProbeTransport } from "../../upstreamAuth/challenge.js";
import type { AuthorizationCodeSpec } from "../../upstreamAuth/types.js";
import { parseCommandArgs } from "../args.js";
import { EXIT, type ExitCode } from "../exitCodes.js";
import { writeFully, type CliIo } from "../io.js";
import { stderrPrompt } from "../oauthContext.js";

export const LOGIN_HELP = `Usage: mcp-normalizer login NAME [--config FILE] [--no-browser]
       mcp-normalizer login --url URL [--transport sse] [--no-browser]

Logs in to a remote MCP server that requires OAuth and stores its tokens, for serve, stdio
and audit. NAME is a server of the config whose entry has "auth": "oauth" (or a pre-registered
client, scopes or a port: "auth": {"clientId"?, "clientSecret"?, "issuer"? (needed with a
clientSecret: the server that issued it), "scopes"?, "callbackPort"?, "allowHttp"?}); --url URL
is a server named on the command line ("stdio --url URL --auth oauth").

  1. asks the server as its transport opens a session (a POST; the GET of its stream for
     "transport": "sse"): its 401 names its authorization server; reads the metadata, and
     registers mcp-normalizer as a client when no clientId is configured; asks for the
     configured scopes, else the 401's, and for what a server's 403 insufficient_scope asked
     for since the last login;
  2. prints the authorization URL on stderr, on a line of its own, and opens a browser;
  3. listens on http://127.0.0.1:PORT/callback (the entry's callbackPort, else a free port)
     until the browser comes back with this login's state (a request without it is refused
     and it waits on), exchanges the code (PKCE S256), stores the tokens and says where, in
     one line on stdout.

Options:
  --config FILE          proxy config (default ./${DEFAULT_CONFIG_FILE})
  --url URL              an http(s) server not in a config
  --transport T          with --url: streamable-http (default) | sse (a legacy SSE server,
                         asked with the GET of its stream)
  --no-browser           only print the URL (open it yourself, on any machine that can reach
                         this one's 127.0.0.1 — e.g. through ssh -L)
  -h, --help             this help

Tokens: one file per server URL in $${AUTH_DIR_ENV}, else ~/.mcp-normalizer/auth (directory
0700, files 0600). Logging in again replaces the file; deleting it logs out. Servers with
"grant": "client_credentials" need no login: the proxy gets their tokens itself.

Exit codes: 0 logged in; 1 the login failed, was refused, or got no answer within
limits.loginTimeoutMs (5 minutes); 2 bad command line; 3 invalid config.`;

export async function runLogin(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals, command } = parseCommandArgs(
    argv,
    {
      config: { type: "string" },
      url: { type: "string" },
      transport: { type: "string" },
      "no-browser": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    "login",
  );
  if (values.help) {
    await writeFully(io.stdout, `${LOGIN_HELP}\n`);
    return EXIT.OK;
  }
  if (command.length > 0)
    throw new NormalizerError(
      "USAGE",
      `login: nothing goes after -- (got ${command.length} word${command.length === 1 ? "" : "s"}); ` +
        "see mcp-normalizer login --help",
    );
  const target =
    values.url !== undefined
      ? fromUrl(values.url, positionals, values.config, values.transport)
      : fromConfig(positionals, values.config, io, values.transport);
  const dir = tokenDirectory(io.env);
  const file = tokenFilePath(dir, target.url);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new NormalizerError(
      "LOGIN_FAILED",
      `login: cannot create the token directory ${dir}: ${(error as Error).message}`,
    );
  }
  const oauthFetch = timedFetch((url, init) => fetch(url, init), {
    timeoutMs: target.config.limits.oauthRequestTimeoutMs,
    allowHttp: target.spec.allowHttp,
  });
  const login = await runLoginFlow({
    server: target.name,
    serverUrl: target.url,
    spec: target.spec,
    prompt: stderrPrompt(
      io,
      target.config.limits.loginTimeoutMs,
      values["no-browser"] !== true,
      (server) => `Open this URL in a browser to log in to "${server}"`,
    ),
    oauthFetch,
    upstreamFetch: oauthFetch,
    headers: target.headers,
    transport: target.transport,
    warn: (message) => void io.stderr.write(`mcp-normalizer: warning: ${message}\n`),
    previous: (await readLogin(file)).login,
  });
  try {
    // In turn with a proxy refreshing from this file: its refresh then sees this login and keeps it.
    const timeoutMs = target.config.limits.oauthRequestTimeoutMs;
    await withFileLock(file, { staleMs: timeoutMs, waitMs: 3 * timeoutMs }, () => writeLogin(file, dir, login));
  } catch (error) {
    throw new NormalizerError(
      "LOGIN_FAILED",
      `login: logged in, but cannot write ${file}: ${(error as Error).message}`,
    );
  }
  await writeFully(io.stdout, `Logged in to "${target.name}" (${describeUrl(target.url)}); tokens stored in ${file}\n`);
  return EXIT.OK;
}

interface LoginTarget {
  readonly name: string;
  readonly url: string;
  readonly spec: AuthorizationCodeSpec;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Its transport: a legacy SSE server is asked with the GET of its stream. */
  readonly transport?: ProbeTransport | undefined;
  readonly config: ProxyConfig;
}

function fromUrl(
  url: string,
  positionals: readonly string[],
  config: string | undefined,
  transport: string | undefined,
): LoginTarget {
  if (positionals.length > 0 || config !== undefined)
    throw new NormalizerError("USAGE", "login: give either NAME (a server of --config) or --url URL, not both");
  if (!/^https?:\/\//i.test(url))
    throw new NormalizerError("USAGE", `login: --url expects an http(s):// URL, got ${shownUrl(url)}`);
  if (isPlainHttpBeyondLoopback(url)) throw new NormalizerError("USAGE", `login: --url ${PLAIN_HTTP_OAUTH_FLAG}`);
  if (url.endsWith("?…"))
    throw new NormalizerError(
      "USAGE",
      "login: --url ends with ?…: put the query of the server's URL (as the host was given it) in its place",
    );
  if (transport !== undefined && transport !== "sse" && transport !== "streamable-http")
    throw new NormalizerError(
      "USAGE",
      `login: --transport expects streamable-http or sse (OAuth is for http(s) servers), got ` +
        JSON.stringify(transport),
    );
  return {
    name: describeUrl(url),
    url,
    spec: { grant: "authorization_code" },
    ...(transport === undefined ? {} : { transport }),
    config: ConfigSchema.parse({ mcpServers: { upstream: { url, auth: "oauth" } } }),
  };
}

function fromConfig(
  positionals: readonly string[],
  configFlag: string | undefined,
  io: CliIo,
  transport: string | undefined,
): LoginTarget {
  if (transport !== undefined)
    throw new NormalizerError(
      "USAGE",
      'login: --transport goes with --url; a server of a config is asked by its entry\'s "transport"',
    );
  const name = positionals[0];
  if (name === undefined)
    throw new NormalizerError(
      "USAGE",
      "login: name the server to log in to: mcp-normalizer login NAME --config FILE (see mcp-normalizer login --help)",
    );
  if (positionals.length > 1)
    throw new NormalizerError(
      "USAGE",
      `login: one server at a time; got ${positionals.map((p) => JSON.stringify(p)).join(", ")}`,
    );
  const shown = configFlag ?? DEFAULT_CONFIG_FILE;
  // The server logged in to is the one whose variables must be set (as for stdio and audit).
  const { config } = loadConfigFile(resolve(io.cwd, shown), io.env, { onlyServer: name });
  const server = serverNamed(config, name);
  const names = Object.keys(config.mcpServers);
  if (server === undefined)
    throw new NormalizerError("USAGE", `login: ${shown} has no server "${name}" (servers: ${names.join(", ")})`);
  if (server.disabled === true)
    throw new NormalizerError(
      "USAGE",
      `login: "${name}" is disabled in ${shown} ("disabled": true); set it to false to log in to it`,
    );
  if (isStdioServer(server))
    throw new NormalizerError(
      "USAGE",
      `login: "${name}" in ${shown} is a stdio server; OAuth is for remote (url) servers`,
    );
  if (server.auth === undefined)
    throw new NormalizerError(
      "USAGE",
      `login: "${name}" in ${shown} has no "auth"; add "auth": "oauth" to its entry to log in with a browser`,
    );
  const spec = authSpecOf(server.auth);
  if (spec.grant === "client_credentials")
    throw new NormalizerError(
      "USAGE",
      `login: "${name}" in ${shown} uses client credentials: the proxy gets its tokens itself, no login is needed`,
    );
  return { name, url: server.url, spec, headers: server.headers, transport: transportOfServer(server), config };
}
