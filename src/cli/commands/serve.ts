/**
 * `mcp-normalizer serve`: one HTTP listener fronting every server in the config,
 * or — without a config file — one upstream named on the command line (the sidecar start line).
 */
import { resolve } from "node:path";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { isListenHost, NOT_A_LISTEN_HOST } from "../../config/listenHost.js";
import { DEFAULT_CONFIG_FILE, DEFAULT_HOST, DEFAULT_PORT } from "../../config/defaults.js";
import { loadConfigFile } from "../../config/load.js";
import { settingsNeedingRestart } from "../../config/restartSettings.js";
import { policyOptionsFor } from "../../config/policy.js";
import { fitLimitsOf } from "../../config/fitPolicy.js";
import { serverEntry } from "../serverEntry.js";
import { createFitRuntime } from "../../fit/runtime.js";
import { ConfigSchema, type ProxyConfig } from "../../config/schema.js";
import { SessionManager } from "../../proxy/sessionManager.js";
import { createUpstreamFactory } from "../../proxy/upstreamFactory.js";
import { normalizeOrigin } from "../../server/frontendOptions.js";
import { createHttpFrontend } from "../../server/httpFrontend.js";
import { parseCommandArgs, parsePortFlag } from "../args.js";
import { EXIT, type ExitCode } from "../exitCodes.js";
import { writeFully, type CliIo } from "../io.js";
import { createObservers, OBSERVE_HELP, OBSERVE_OPTIONS } from "../observers.js";
import { holdReloadSignal, onReloadSignal, shutdownSignals, type ShutdownSignals } from "../signals.js";
import type { Observers } from "../observers.js";
import type { ServerEntry } from "../../proxy/sessionManager.js";
import { IN_A_CONFIG, SELECTOR_OPTIONS, selectUpstream, urlOnlyFlagOf } from "../upstreamSelector.js";
import { createUpstreamAuths } from "../oauthContext.js";
import { endpointLines } from "../endpointLines.js";
import { bindAddressOf, isLoopbackHost } from "../../config/loopback.js";
import { defaultAllowedHosts } from "../bindAddress.js";
import { warnMisspeltKeys } from "../configWarnings.js";

export const SERVE_HELP = `Usage: mcp-normalizer serve [--config ${DEFAULT_CONFIG_FILE}] [options]
       mcp-normalizer serve [--name NAME] [--host H] [--port P] (-- CMD ARGS… | --url URL)

Serves every server of the config over HTTP, each at
  /mcp/NAME                      streamable HTTP (POST/GET/DELETE, Mcp-Session-Id sessions)
  /sse/NAME, /messages/NAME      legacy HTTP+SSE
  /ws/NAME                       WebSocket (subprotocol "mcp")
NAME percent-encoded ("Brave Search" → /mcp/Brave%20Search; the URLs are printed at start-up).
With exactly one server, /mcp, /sse, /messages and /ws serve it too. And GET /healthz (status, JSON; \
per-upstream details with a valid token), /metrics
(Prometheus), /report (HTML size report).
Each host session gets its own upstream connection (a stdio upstream: its own child process,
started with HOME, LOGNAME, PATH, SHELL, TERM, USER and the server's "env" — never the variables
"auth" reads; "inheritEnv": true gives it the rest of the environment). Stateless requests
(no session) share a pool of limits.statelessPoolSize upstreams per server and bearer token.

Options:
  --config FILE          proxy config (default ./${DEFAULT_CONFIG_FILE} when no upstream is named)
  --name NAME            serve one upstream without a config file, under NAME (default: CMD's
                         base name, or the URL's host) …
  --url URL              … an HTTP(S)/WS(S) upstream (--transport, --header, --auth as for stdio)
  -- CMD ARGS…           … or a stdio upstream (also CMD ARGS… without "--", or
                         --command CMD --arg A…)
  --inherit-env          … give that stdio upstream the proxy's whole environment (default: only
                         HOME, LOGNAME, PATH, SHELL, TERM, USER; config: "inheritEnv": true)
  --allow-origin ORIGIN  a browser page allowed to use the proxy (CORS), added to the config's
                         allowedOrigins; repeatable (e.g. http://localhost:6274, the MCP
                         Inspector's direct mode)
  --host H               bind address (default: config listen.host, else ${DEFAULT_HOST})
  --port P               port (default: config listen.port, else ${DEFAULT_PORT}; 0 = any free port)
${OBSERVE_HELP}
  -h, --help             this help

Binding a non-loopback address needs auth.bearerTokens (or auth.allowUnauthenticated: true).
Remote servers with "auth" get "Authorization: Bearer" from the token "mcp-normalizer login
NAME" stored (refreshed as it expires), or a client-credentials token; without a usable one,
requests to that server get a JSON-RPC error naming the login command, and the rest is served.

Signals: SIGTERM/SIGINT stop accepting, let requests in flight finish (up to
limits.shutdownGraceMs; a second signal ends the wait), end every upstream, flush the log,
exit 0. SIGHUP re-reads --config for sessions opened from then on (servers' command, args,
env, url, headers, auth, normalize; other changes need a restart) and reopens the log file.
Exit codes: 0 stopped by SIGTERM/SIGINT; 1 could not listen; 2 bad command line, a log file
that cannot be written, or a non-loopback bind without auth; 3 invalid config.`;

const SERVE_OPTIONS = {
  ...SELECTOR_OPTIONS,
  ...OBSERVE_OPTIONS,
  name: { type: "string" },
  host: { type: "string" },
  port: { type: "string" },
  "inherit-env": { type: "boolean" },
  "allow-origin": { type: "string", multiple: true },
  help: { type: "boolean", short: "h" },
} as const;
const parseServeArgs = (argv: readonly string[]) =>
  parseCommandArgs(argv, SERVE_OPTIONS, "serve", { upstreamCommand: true });

export async function runServe(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, command } = parseServeArgs(argv);
  if (values.help) {
    await writeFully(io.stdout, `${SERVE_HELP}\n`);
    return EXIT.OK;
  }
  // Taken from here on: Node's default action on SIGHUP would end a proxy still starting. Once it
  // listens, the reload handler acts on it.
  const releaseReload = holdReloadSignal();
  try {
    return await serve(values, command, io);
  } finally {
    releaseReload();
  }
}

async function serve(
  values: ReturnType<typeof parseServeArgs>["values"],
  command: readonly string[],
  io: CliIo,
): Promise<ExitCode> {
  let config: ProxyConfig;
  let configFile: string | undefined;
  /** The file's settings as read at start (before flags override `listen`): what a SIGHUP is compared with. */
  let startedFrom: ProxyConfig | undefined;
  /** Variables never passed to stdio upstreams: those the config's `auth` sections read (kept across SIGHUP). */
  const withheld: string[] = [];
  // Flags are checked before the config is read: a mistyped flag is named, not a missing file.
  const portFlag = parsePortFlag(values.port, "serve");
  // An IPv6 address as URLs and the docs write it, in brackets, is listened on without them.
  if (values.host !== undefined && !isListenHost(values.host))
    throw new NormalizerError("USAGE", `serve: --host ${NOT_A_LISTEN_HOST}, got ${JSON.stringify(values.host)}`);
  if (values.server !== undefined)
    throw new NormalizerError(
      "USAGE",
      `serve: --server chooses a server for stdio and audit; serve serves every server of the config ` +
        `(set "disabled": true on those not to serve)`,
    );
  if (command.length > 0 || values.url !== undefined || values.command !== undefined) {
    if (values.config !== undefined)
      throw new NormalizerError("USAGE", "serve: give either --config or an upstream (-- CMD… / --url), not both");
    if (values["inherit-env"] === true && command.length === 0 && values.command === undefined)
      throw new NormalizerError("USAGE", "serve: --inherit-env goes with a stdio upstream (-- CMD ARGS…)");
    const selected = await selectUpstream(values, command, "serve", io.cwd, io.env, values.name);
    config = selected.config;
    if (values["inherit-env"] === true)
      config = ConfigSchema.parse({
        ...config,
        mcpServers: { [selected.name]: { ...selected.server, inheritEnv: true } },
      });
  } else {
    if (values.name !== undefined)
      throw new NormalizerError("USAGE", "serve: --name goes with an upstream (-- CMD ARGS… or --url URL)");
    if (values.arg !== undefined) throw new NormalizerError("USAGE", "serve: --arg goes with --command CMD");
    const urlFlag = urlOnlyFlagOf(values);
    if (urlFlag !== undefined)
      throw new NormalizerError("USAGE", `serve: ${urlFlag} goes with --url; ${IN_A_CONFIG[urlFlag]}`);
    if (values["inherit-env"] === true)
      throw new NormalizerError(
        "USAGE",
        'serve: --inherit-env goes with -- CMD ARGS…; in a config, set "inheritEnv": true on the server',
      );
    let loaded: ReturnType<typeof loadConfigFile>;
    try {
      loaded = loadConfigFile(resolve(io.cwd, values.config ?? DEFAULT_CONFIG_FILE), io.env);
    } catch (error) {
      // With no --config, say what else serve accepts rather than only that a file is missing.
      if (values.config === undefined && error instanceof NormalizerError && error.code === "CONFIG_NOT_FOUND") {
        throw new NormalizerError(
          "CONFIG_NOT_FOUND",
          `${error.message} (serve reads ./proxy.config.json by default: pass --config FILE, or serve one upstream ` +
            `with --name NAME -- CMD ARGS… / --url URL)`,
        );
      }
      throw error;
    }
    config = loaded.config;
    startedFrom = loaded.config;
    configFile = loaded.file;
    withheld.push(...loaded.secretVariables);
  }
  config = withAllowedOrigins(config, values["allow-origin"]);
  const port = portFlag ?? config.listen.port;
  const host = bindAddressOf(values.host ?? config.listen.host);
  if (
    !isLoopbackHost(host) &&
    (config.auth?.bearerTokens?.length ?? 0) === 0 &&
    config.auth?.allowUnauthenticated !== true
  ) {
    // Served from flags alone, there is no config to set it in: tokens are set in a file.
    const where = configFile === undefined ? "a config file (serve --config FILE)" : "the config";
    throw new NormalizerError(
      "INSECURE_BIND",
      `serve: refusing to listen on ${host} without auth: set auth.bearerTokens in ${where}, or ` +
        `auth.allowUnauthenticated: true to opt out explicitly`,
    );
  }
  config = ConfigSchema.parse({ ...config, listen: { host, port } });

  const observers = await createObservers(config, values, io, configFile, {
    live: true,
    servers: Object.keys(config.mcpServers),
  });
  warnMisspeltKeys(config, observers.logger);
  const auths = createUpstreamAuths(io, config, configFile, observers.logger);
  const sessions = new SessionManager({
    servers: serverEntries(config, observers),
    fitRuntime: createFitRuntime(fitLimitsOf(config)),
    createUpstream: createUpstreamFactory({
      maxMessageBytes: config.limits.maxMessageBytes,
      upstreamAckTimeoutMs: config.limits.upstreamAckTimeoutMs,
      upstreamStreamWaitMs: config.limits.upstreamStreamWaitMs,
      requestTimeoutMs: config.limits.requestTimeoutMs,
      upstreamIdleConnections: config.limits.upstreamIdleConnections,
      connectTimeoutMs: config.limits.connectTimeoutMs,
      killGraceMs: config.limits.killGraceMs,
      stderrLinesLogged: config.limits.stderrLinesLogged,
      rawStringBytes: config.limits.rawStringBytes,
      maxUpstreamMessageNodes: config.limits.maxUpstreamMessageNodes,
      maxSkippedMessageBytes: config.limits.maxSkippedMessageBytes,
      maxPendingPongs: config.limits.maxPendingPongs,
      stderrToHosts: false,
      childEnvironment: { withhold: withheld },
      auths,
    }),
    logger: observers.logger,
    requestTimeoutMs: config.limits.requestTimeoutMs,
    initializeTimeoutMs: config.limits.initializeTimeoutMs,
    maxBatch: config.limits.maxBatch,
    statelessPoolSize: config.limits.statelessPoolSize,
    statelessHoldMs: config.limits.statelessHoldMs,
    statelessIdleMs: config.limits.sessionIdleMs,
    hostBufferBytes: config.limits.hostBufferBytes,
    maxUpstreamRequests: config.limits.maxUpstreamRequests,
    maxHostRequests: config.limits.maxHostRequests,
    upstreamBufferBytes: config.limits.upstreamBufferBytes,
    maxTrackedTasks: config.limits.maxTrackedTasks,
    restartBackoffMs: config.limits.restartBackoffMs,
    maxRestartBackoffMs: config.limits.maxRestartBackoffMs,
    onUpstreamRestart: (server) => observers.upstreamRestarted(server),
    onNormalized: observers.onNormalized,
  });
  observers.watchHealth(() => sessions.healthReport());
  // An upstream whose requests fail for want of an OAuth login is up, but not serving: say so.
  const health = () => withLoginsNeeded(sessions.healthReport(), auths.needingLogin());
  const frontend = createHttpFrontend({
    serverNames: sessions.serverNames,
    onSession: async (transport, info) => {
      // Stateless POSTs share a small pool of upstreams (per server and bearer token).
      if (info.stateless) await sessions.openStateless(transport, info.server, info.owner?.toString("hex") ?? "");
      else await sessions.open(transport, info.server, info.kind);
    },
    onStatelessAnswerTooLarge: (problem, server, owner) =>
      sessions.statelessAnswerTooLarge(problem, server, owner?.toString("hex") ?? ""),
    ...(config.limits.maxBodyBytes === undefined ? {} : { maxBodyBytes: config.limits.maxBodyBytes }),
    maxSessionsPerClient: config.limits.maxSessionsPerClient,
    maxBatch: config.limits.maxBatch,
    maxMessageNodes: config.limits.maxMessageNodes,
    bodyBytesInFlight: config.limits.bodyBytesInFlight,
    sessionIdleTimeoutMs: config.limits.sessionIdleMs,
    pingIntervalMs: config.limits.pingIntervalMs,
    sseKeepAliveMs: config.limits.sseKeepAliveMs,
    maxQueuedMessages: config.limits.maxQueuedMessages,
    maxQueuedBytes: config.limits.maxQueuedBytes,
    sseReplayBytes: config.limits.sseReplayBytes,
    closeTimeoutMs: config.limits.closeTimeoutMs,
    headersTimeoutMs: config.limits.headersTimeoutMs,
    requestBodyTimeoutMs: config.limits.requestBodyTimeoutMs,
    keepAliveTimeoutMs: config.limits.keepAliveTimeoutMs,
    maxConnections: config.limits.maxConnections,
    ...(config.limits.maxConnectionsPerClient === undefined
      ? {}
      : { maxConnectionsPerClient: config.limits.maxConnectionsPerClient }),
    // hostSessions: the listener's count of live host sessions (what limits.maxSessions counts).
    // Without a valid token (when tokens are configured) only the status: errors and counts are
    // the operator's.
    health: (detailed) =>
      detailed ? { ...health(), hostSessions: frontend.sessionsInUse } : { status: health().status },
    ...(observers.metrics === undefined ? {} : { metrics: observers.metrics }),
    ...(observers.report === undefined ? {} : { report: observers.report }),
    logger: observers.logger,
    maxMessageBytes: config.limits.maxMessageBytes,
    maxSessions: config.limits.maxSessions,
    ...(config.allowedOrigins === undefined ? {} : { allowedOrigins: config.allowedOrigins }),
    allowedHosts: config.allowedHosts ?? defaultAllowedHosts(host, (config.auth?.bearerTokens?.length ?? 0) > 0),
    ...(config.auth?.bearerTokens === undefined ? {} : { bearerTokens: config.auth.bearerTokens }),
  });
  let address: { url: string; port: number };
  try {
    address = await frontend.listen(port, host);
  } catch (error) {
    await observers.close();
    throw new NormalizerError("LISTEN_FAILED", `serve: cannot listen on ${host}:${port}: ${(error as Error).message}`);
  }
  // Handlers before the "listening" line: whoever reads it may signal at once.
  const signals = shutdownSignals();
  let stopping = false;
  void signals.first.then(() => (stopping = true));
  const stopReload = onReloadSignal(() => {
    observers.reopenLog();
    if (configFile === undefined || startedFrom === undefined) {
      observers.logger.info("SIGHUP: log reopened (no config file to re-read)");
      return;
    }
    // No session opens any more: a config read now would serve nobody, and its line would say it does.
    if (stopping) {
      observers.logger.info("SIGHUP: log reopened; the config is not re-read while shutting down");
      return;
    }
    try {
      const { config: reloaded, secretVariables } = loadConfigFile(configFile, io.env, { regularFileOnly: true });
      // A secret a server's new `auth` reads is withheld from children started from now on.
      for (const variable of secretVariables) if (!withheld.includes(variable)) withheld.push(variable);
      warnMisspeltKeys(reloaded, observers.logger);
      // Built with the running limits: those a reload cannot apply (below) are not in force for new sessions either.
      const { updated, changed, ignored } = sessions.reconfigure(
        serverEntries({ ...reloaded, limits: config.limits }, observers),
      );
      // Paths all: a server added or removed is `mcpServers.NAME`, never read as a setting of that name.
      const needRestart = [
        ...ignored.map((name) => `mcpServers.${name}`),
        ...settingsNeedingRestart(startedFrom, reloaded),
      ];
      const fields = { file: configFile, updated, changed };
      if (needRestart.length === 0) observers.logger.info("SIGHUP: config re-read; new sessions use it", fields);
      else
        observers.logger.warn("SIGHUP: config re-read; new sessions use its servers, the rest needs a restart", {
          ...fields,
          ignoredNeedRestart: needRestart,
        });
    } catch (error) {
      observers.logger.error("SIGHUP: config not reloaded; the running config stays", {
        file: configFile,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  });

  await writeFully(io.stdout, `${endpointLines(address.url, [...sessions.serverNames]).join("\n")}\n`);
  observers.logger.info("listening", { url: address.url, servers: sessions.serverNames });

  await shutDown(signals, config.limits.shutdownGraceMs, frontend, sessions, observers);
  signals.dispose();
  stopReload();
  return EXIT.OK;
}

/**
 * Graceful shutdown: stop accepting, refuse new sessions and requests, let requests
 * in flight finish for up to `graceMs` (a second signal ends the wait), then end every session
 * and upstream child, and flush the log.
 */
async function shutDown(
  signals: ShutdownSignals,
  graceMs: number,
  frontend: ReturnType<typeof createHttpFrontend>,
  sessions: SessionManager,
  observers: Observers,
): Promise<void> {
  const signal = await signals.first;
  observers.logger.info("shutting down", { signal, inFlight: sessions.waitingRequests, graceMs });
  frontend.stopAccepting();
  sessions.refuseNew(`the proxy is shutting down (${signal})`);
  const finished = await Promise.race([sessions.drain(graceMs), signals.second.then(() => false)]);
  if (!finished) observers.logger.warn("ending requests still in flight", { count: sessions.waitingRequests });
  // Sessions first: each answers its waiting requests with an error before its host
  // transport closes; then the listener drops what is left.
  await sessions.closeAll();
  await frontend.close();
  observers.logger.info("stopped");
  await observers.close();
}

/** The `mcpServers` the proxy serves (disabled ones left out), each with its policy. */
function serverEntries(config: ProxyConfig, observers: Observers): Map<string, ServerEntry> {
  return new Map(
    Object.entries(config.mcpServers)
      .filter(([, server]) => server.disabled !== true)
      .map(
        ([name, server]) =>
          [name, serverEntry(config, server, observers.policyOverrides(policyOptionsFor(config, server)))] as const,
      ),
  );
}

/** The health report with `auth: "login needed"` on servers that need one, and then `degraded`. */
function withLoginsNeeded(
  report: ReturnType<SessionManager["healthReport"]>,
  needing: readonly string[],
): { status: "ok" | "degraded"; servers: Record<string, object> } {
  if (needing.length === 0) return report;
  const servers: Record<string, object> = { ...report.servers };
  for (const name of needing) servers[name] = { ...report.servers[name], auth: "login needed" };
  return { status: "degraded", servers };
}

/** The config with the `--allow-origin` pages added to its `allowedOrigins`. */
function withAllowedOrigins(config: ProxyConfig, origins: readonly string[] | undefined): ProxyConfig {
  if (origins === undefined || origins.length === 0) return config;
  for (const origin of origins)
    if (normalizeOrigin(origin) === null)
      throw new NormalizerError(
        "USAGE",
        `serve: --allow-origin expects an origin such as http://localhost:6274, got ${JSON.stringify(origin)}`,
      );
  return { ...config, allowedOrigins: [...(config.allowedOrigins ?? []), ...origins] };
}
