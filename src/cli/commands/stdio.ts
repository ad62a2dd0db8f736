/**
 * `mcp-normalizer stdio`: MCP over the proxy's own stdin/stdout, one upstream — the form
 * desktop hosts run from their `mcpServers` config. Stdout carries JSON-RPC only; every log
 * line goes to stderr (or the log file).
 */
import { NormalizerError } from "../../errors/NormalizerError.js";
import { policyOptionsFor } from "../../config/policy.js";
import { fitLimitsOf } from "../../config/fitPolicy.js";
import { createFitRuntime } from "../../fit/runtime.js";
import { SessionManager } from "../../proxy/sessionManager.js";
import { createUpstreamFactory } from "../../proxy/upstreamFactory.js";
import { StdioHostTransport } from "../../transports/host/stdioHost.js";
import { parseCommandArgs } from "../args.js";
import { EXIT, type ExitCode } from "../exitCodes.js";
import { outputTaken, writeFully, type CliIo } from "../io.js";
import { createObservers, OBSERVE_HELP, OBSERVE_OPTIONS } from "../observers.js";
import { onReloadSignal, shutdownSignals, type ShutdownSignals } from "../signals.js";
import { childEnvironmentOf, SELECTOR_HELP, SELECTOR_OPTIONS, selectUpstream } from "../upstreamSelector.js";
import { createUpstreamAuths } from "../oauthContext.js";
import { takeEarlySignals } from "../earlyStart.js";
import { serverEntry } from "../serverEntry.js";
import { tierUpAfterFirstAnswer } from "../jitTiering.js";
import { answerUnheardHost } from "../answerUnheardHost.js";

export const STDIO_HELP =
  `Usage: mcp-normalizer stdio [options] (-- CMD ARGS… | CMD ARGS… | --url URL | --config ` +
  `FILE --server NAME)

Speaks MCP on its own stdin/stdout to one host, and forwards to one upstream, normalizing
resource contents on the way back. Stdout carries JSON-RPC only; logs go to stderr.

${SELECTOR_HELP}

Options:
  --name NAME            the upstream's name in log records (default: CMD's base name, or the
                         URL's host; with --config, the server's name there)
${OBSERVE_HELP}
  --no-browser           OAuth: only print the login URL, do not open a browser
  -h, --help             this help (on stderr: stdout is the host's)

Desktop host config ("mcpServers"):
  "files": { "command": "npx", "args": ["mcp-normalizer", "stdio", "--",
             "npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/docs"] }
Launchers that drop a bare "--" (the MCP Inspector does): leave it out, or use flags:
  mcp-normalizer stdio npx -y @modelcontextprotocol/server-filesystem /home/me/docs
  mcp-normalizer stdio --command npx --arg=-y --arg @modelcontextprotocol/server-filesystem

Input piped in (printf '…\\n' | mcp-normalizer stdio -- CMD): at EOF on stdin the requests
already read are answered (each within limits.requestTimeoutMs), then the upstream is ended
and the proxy exits 0.

A remote server that requires OAuth ("auth" in its config entry, or --url URL --auth oauth):
with no usable token stored, the proxy runs the browser login itself before it answers the
host — the authorization URL goes to stderr on a line of its own (and a browser opens) — and
stores the tokens where "mcp-normalizer login" does. Tokens are refreshed as they expire.

Signals: SIGTERM/SIGINT end the upstream at once (SIGTERM to its process group, SIGKILL
after limits.killGraceMs, at most 1000 ms here), answer requests in flight with an error,
flush the log, exit 0 — also while the upstream is still starting. (Hosts send SIGKILL soon
after SIGTERM: a proxy waiting for answers then would leave its upstream running.) SIGHUP
reopens the log file.
When the upstream dies, requests waiting get a JSON-RPC error naming its exit code/signal and
last stderr line, and the proxy exits 1 (the host restarts it, with a fresh upstream).

Exit codes: 0 the host closed the session (or SIGTERM/SIGINT); 1 the upstream could not start
(or answer initialize within limits.initializeTimeoutMs) or ended, or its OAuth login failed;
2 bad command line or a log file that cannot be written; 3 invalid config.`;

/**
 * The longest an upstream of `stdio` is given between SIGTERM and SIGKILL, whatever
 * `limits.killGraceMs` says: hosts SIGKILL the proxy two seconds after their SIGTERM (the SDK's
 * close), and a proxy killed before it sends its own SIGKILL leaves the upstream — a process
 * group of its own — running.
 */
const HOST_KILL_GRACE_MS = 1000;

export async function runStdio(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, command } = parseStdioArgs(argv);
  if (values.help) {
    // Stdout belongs to JSON-RPC in this mode, even for help.
    await writeFully(io.stderr, `${STDIO_HELP}\n`);
    return EXIT.OK;
  }
  // Installed before anything starts: until a handler exists a SIGTERM gets Node's
  // default action, which kills the proxy without ending the upstream being started (spawned
  // detached, in its own process group: it would be orphaned).
  const signals = takeEarlySignals() ?? shutdownSignals();
  try {
    return await runSession(values, command, io, signals);
  } finally {
    signals.dispose();
  }
}

const STDIO_OPTIONS = {
  ...SELECTOR_OPTIONS,
  ...OBSERVE_OPTIONS,
  name: { type: "string" },
  "no-browser": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;
const parseStdioArgs = (argv: readonly string[]) =>
  parseCommandArgs(argv, STDIO_OPTIONS, "stdio", { upstreamCommand: true });

async function runSession(
  values: ReturnType<typeof parseStdioArgs>["values"],
  command: readonly string[],
  io: CliIo,
  signals: ShutdownSignals,
): Promise<ExitCode> {
  let stopping: NodeJS.Signals | undefined;
  void signals.first.then((signal) => (stopping = signal));
  const selected = await selectUpstream(values, command, "stdio", io.cwd, io.env, values.name);
  const observers = await createObservers(selected.config, values, io, selected.configFile);
  // The keys of the entry it runs, from a config file (from flags there is nothing to misspell,
  // and the schema stays unloaded; other entries are other proxies' to tell).
  if (selected.configFile !== undefined)
    (await import("../configWarnings.js")).warnMisspeltKeys(
      { mcpServers: { [selected.name]: selected.server } },
      observers.logger,
    );
  const auths = createUpstreamAuths(io, selected.config, selected.configFile, observers.logger, {
    openBrowser: values["no-browser"] !== true,
  });
  const sessions = new SessionManager({
    servers: new Map([
      [
        selected.name,
        serverEntry(
          selected.config,
          selected.server,
          observers.policyOverrides(policyOptionsFor(selected.config, selected.server)),
        ),
      ],
    ]),
    fitRuntime: createFitRuntime(fitLimitsOf(selected.config)),
    createUpstream: createUpstreamFactory({
      maxMessageBytes: selected.config.limits.maxMessageBytes,
      upstreamAckTimeoutMs: selected.config.limits.upstreamAckTimeoutMs,
      upstreamStreamWaitMs: selected.config.limits.upstreamStreamWaitMs,
      requestTimeoutMs: selected.config.limits.requestTimeoutMs,
      upstreamIdleConnections: selected.config.limits.upstreamIdleConnections,
      connectTimeoutMs: selected.config.limits.connectTimeoutMs,
      killGraceMs: Math.min(selected.config.limits.killGraceMs, HOST_KILL_GRACE_MS),
      stderrLinesLogged: selected.config.limits.stderrLinesLogged,
      rawStringBytes: selected.config.limits.rawStringBytes,
      maxUpstreamMessageNodes: selected.config.limits.maxUpstreamMessageNodes,
      maxSkippedMessageBytes: selected.config.limits.maxSkippedMessageBytes,
      maxPendingPongs: selected.config.limits.maxPendingPongs,
      stderrToHosts: true,
      childEnvironment: childEnvironmentOf(selected),
      auths,
    }),
    logger: observers.logger,
    requestTimeoutMs: selected.config.limits.requestTimeoutMs,
    initializeTimeoutMs: selected.config.limits.initializeTimeoutMs,
    maxBatch: selected.config.limits.maxBatch,
    hostBufferBytes: selected.config.limits.hostBufferBytes,
    maxUpstreamRequests: selected.config.limits.maxUpstreamRequests,
    maxHostRequests: selected.config.limits.maxHostRequests,
    upstreamBufferBytes: selected.config.limits.upstreamBufferBytes,
    maxTrackedTasks: selected.config.limits.maxTrackedTasks,
    onNormalized: observers.onNormalized,
  });
  const stoppedDuringStartup = async (signal: NodeJS.Signals): Promise<ExitCode> => {
    observers.logger.info("shutting down during startup", { signal });
    sessions.refuseNew(`the proxy is shutting down (${signal})`);
    // Ends the upstream being started (its bridge is registered before it starts): the child
    // is killed, a remote connection attempt is dropped. Nothing has been asked of it yet.
    await sessions.closeAll();
    await observers.close();
    return EXIT.OK;
  };
  if (stopping !== undefined) return stoppedDuringStartup(stopping);
  // OAuth: with no usable token the browser login runs first; the host's initialize waits on stdin.
  // Where the host's requests are read from when its session never heard them (answerUnheardHost.ts).
  const unheardHost = (unread: Buffer) => ({
    input: io.stdin,
    output: io.stdout,
    maxMessageBytes: selected.config.limits.maxMessageBytes,
    unread,
    stop: signals.first,
  });
  const preparing = auths.for(selected.name, selected.server)?.prepare();
  if (preparing !== undefined) {
    const ready = await Promise.race([
      preparing.then(
        () => ({}),
        (error: unknown) => ({ error }),
      ),
      signals.first.then((signal) => ({ signal })),
    ]);
    if ("signal" in ready) {
      preparing.catch(() => {});
      return stoppedDuringStartup(ready.signal);
    }
    if ("error" in ready) {
      // The host's first requests get a reason; the login's own words stay in the proxy's log.
      const why = `the proxy could not log in to upstream "${selected.name}" (OAuth); its log says why`;
      await answerUnheardHost(unheardHost(Buffer.alloc(0)), why, selected.config.limits.closeTimeoutMs);
      await outputTaken(io.stdout, selected.config.limits.closeTimeoutMs);
      await observers.close();
      throw ready.error;
    }
  }
  const host = new StdioHostTransport({
    input: io.stdin,
    output: io.stdout,
    maxMessageBytes: selected.config.limits.maxMessageBytes,
  });
  tierUpAfterFirstAnswer(host);

  // EOF on stdin (input piped in) is not the end of the session: what was read is answered first.
  const inputEnded = new Promise<void>((resolve) => (host.oninputend = resolve));
  const opening = sessions.open(host, selected.name, "stdio");
  const first = await Promise.race([
    opening.then(
      (bridge) => ({ bridge }),
      (error: unknown) => ({ error }),
    ),
    signals.first.then((signal) => ({ signal })),
  ]);
  if ("signal" in first) {
    opening.catch(() => {}); // it fails once closed under it; the signal is what ends the run
    return stoppedDuringStartup(first.signal);
  }
  if ("error" in first) {
    const why = first.error instanceof Error ? first.error.message : String(first.error);
    // The host's first requests (its `initialize`) are answered with why, as when a child exits as it starts.
    await answerUnheardHost(unheardHost(host.unfinishedInput), why, selected.config.limits.closeTimeoutMs);
    await outputTaken(io.stdout, selected.config.limits.closeTimeoutMs);
    await observers.close();
    throw new NormalizerError(
      "UPSTREAM_UNREACHABLE",
      `stdio: could not start the upstream${selected.configFile === undefined ? "" : ` "${selected.name}"`}: ${why}`,
    );
  }
  const opened = first.bridge;
  const ended = new Promise<void>((resolve) => {
    // Closed already when its upstream ended as it started (a child that exited at once).
    if (opened.isClosed) resolve();
    const previous = opened.onclose;
    opened.onclose = () => {
      previous?.();
      resolve();
    };
  });
  const stopReload = onReloadSignal(() => observers.reopenLog());
  void inputEnded.then(async () => {
    // Every request waiting is answered by requestTimeoutMs at the latest (by the upstream, or
    // with a timeout error); then the upstream is ended and the proxy exits 0.
    observers.logger.debug("stdin ended; answering what is in flight", { inFlight: sessions.waitingRequests });
    opened.hostCannotAnswer("its input (the proxy's stdin) has ended");
    await sessions.drain(selected.config.limits.requestTimeoutMs + 1000);
    await opened.close("host closed");
  });
  void signals.first.then(async (signal) => {
    // The host (or whoever started it) wants it gone: as a server it started directly would be,
    // at once. Hosts send SIGKILL two seconds after SIGTERM, and a proxy killed while it waits
    // would leave its upstream (a process group of its own) running. Requests in flight are
    // answered with an error; the upstream is ended now.
    observers.logger.info("shutting down", { signal, inFlight: sessions.waitingRequests });
    sessions.refuseNew(`the proxy is shutting down (${signal})`);
    await opened.close("signal");
  });
  await ended;
  stopReload();
  const reason = opened.closeReason ?? "";
  if (reason === "upstream closed") {
    observers.logger.error("upstream ended; closing", { upstream: selected.name });
    if (!opened.heardFromHost) {
      const why = opened.endMessage ?? "upstream connection ended";
      await answerUnheardHost(unheardHost(host.unfinishedInput), why, selected.config.limits.closeTimeoutMs);
    }
  }
  await outputTaken(io.stdout, selected.config.limits.closeTimeoutMs);
  await observers.close();
  return reason === "host closed" || reason === "signal" ? EXIT.OK : EXIT.FAILURE;
}
