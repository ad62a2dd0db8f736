/**
 * `mcp-normalizer audit`: reads what one upstream serves — its listed resources when it declares
 * them, URIs given with --read, tools called with --call — and reports what normalization
 * changes and saves. The upstream is named as for `stdio`.
 */
import { resolve } from "node:path";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { prepareOutputUnderSignals, writeOutputFile } from "../outputFile.js";
import { policyOptionsFor } from "../../config/policy.js";
import { fitLimitsOf, fitOptionsFor } from "../../config/fitPolicy.js";
import { FitPolicy } from "../../fit/fitPolicy.js";
import { DEFAULT_AUDIT_LOG_LEVEL, DEFAULT_IMAGES } from "../../config/defaults.js";
import { createFitRuntime } from "../../fit/runtime.js";
import { MAX_TIMER_MS, type ServerConfig } from "../../config/schema.js";
import { isStdioServer } from "../../config/serverKind.js";
import { Policy } from "../../normalize/policy.js";
import { createStderrLogger, type LogLevel } from "../../observe/logger.js";
import { sinkFor } from "../../observe/logSink.js";
import { upstreamSpec } from "../../proxy/upstreamFactory.js";
import { parseReportFormat, renderReport } from "../../report/render.js";
import { createUpstreamTransport } from "../../transports/upstream/index.js";
import { describeUrl } from "../../transports/upstream/upstreamMessages.js";
import { parseCommandArgs, parseIntFlag } from "../args.js";
import { createProgress } from "../audit/progressBar.js";
import { DEFAULT_AUDIT_CONCURRENCY, runAudit } from "../audit/runAudit.js";
import { auditSummary } from "../audit/summary.js";
import { parseCalls, parseReads, uriFilter } from "../audit/targets.js";
import { loadTokenCounter, TOKEN_ENCODING } from "../audit/tokens.js";
import { EXIT, type ExitCode } from "../exitCodes.js";
import { onShutdownSignal, signalExitCode } from "../signals.js";
import { writeFully, type CliIo } from "../io.js";
import { childEnvironmentOf, SELECTOR_HELP, SELECTOR_OPTIONS, selectUpstream } from "../upstreamSelector.js";
import { createUpstreamAuths } from "../oauthContext.js";
import { warnMisspeltKeys } from "../configWarnings.js";

export const AUDIT_HELP =
  `Usage: mcp-normalizer audit [options] (-- CMD ARGS… | CMD ARGS… | --url URL | --config ` +
  `FILE --server NAME)

Initializes the upstream and reads what it declares: when it has the resources capability, pages
through resources/list (every nextCursor) and reads each resource; then every --read URI and
every --call tool. Reports what normalization would change: per entry (mimeType before → after,
action, bytes before/after), per resource and in total — entries unwrapped / transcoded /
re-encoded / mime fixed, bytes saved, share of the total, the top offenders — and the reads and
tool calls that failed, with the upstream's message. A server without the resources capability
is not asked for resources/list (the report says so).

${SELECTOR_HELP}

Options:
  --name NAME            the server's name in the report (default: the command's base name or the
                         URL's host)
  --format F             md (default) | json (stable, schemaVersion 1) | html (self-contained)
  -o, --output FILE      write the report to FILE (default: stdout)
  --call TOOL[=JSON]     also call TOOL with these arguments (a JSON object; default {}) and
                         audit its result; repeatable. --call TOOL --args JSON works for one
  --read URI             also read URI (resource templates, or just a few); repeatable
  --uri GLOB             read only listed resources whose URI matches (* within a segment,
                         ** across); repeatable
  --max-bytes N          entries larger than N bytes are skipped: listed as skipped, outside the
                         totals (a listed resource whose declared size is larger is not read);
                         reads stay bounded by limits.maxMessageBytes
  --concurrency N        resources read at the same time (default ${DEFAULT_AUDIT_CONCURRENCY})
  --timeout MS           how long to wait for each answer (default: limits.requestTimeoutMs,
                         5 minutes): a server that never answers fails the audit after this
  --tokens               also estimate LLM tokens before/after (${TOKEN_ENCODING}, GPT-4o's encoding)
  --charset MODE         transcode (default) | preserve
  --log-level L          upstream and audit log lines on stderr (default ${DEFAULT_AUDIT_LOG_LEVEL})
  -h, --help             this help

Examples:
  mcp-normalizer audit --call 'read_media_file={"path":"/data/a.md"}' -- \
npx @modelcontextprotocol/server-filesystem /data
  mcp-normalizer audit --read demo://resource/dynamic/blob/1 -- npx @modelcontextprotocol/server-everything

A progress bar of what will be read (listed, --read, --call) is drawn on stderr when it is a
terminal: 0/N from the start, then the item being read, normalized or counted.
Exit codes: 0 report written (failed reads and tool errors are in the report; so is a server
without resources); 1 the upstream could not be started, initialized or listed; 2 bad command
line; 3 invalid config; 130/143 stopped by SIGINT/SIGTERM (the upstream ended first).`;

export async function runAuditCommand(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, command } = parseCommandArgs(
    argv,
    {
      ...SELECTOR_OPTIONS,
      name: { type: "string" },
      format: { type: "string" },
      output: { type: "string", short: "o" },
      concurrency: { type: "string" },
      timeout: { type: "string" },
      tokens: { type: "boolean" },
      call: { type: "string", multiple: true },
      args: { type: "string" },
      read: { type: "string", multiple: true },
      uri: { type: "string", multiple: true },
      "max-bytes": { type: "string" },
      charset: { type: "string" },
      "log-level": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    "audit",
    { upstreamCommand: true },
  );
  if (values.help) {
    await writeFully(io.stdout, `${AUDIT_HELP}\n`);
    return EXIT.OK;
  }
  const format = parseReportFormat(values.format, "audit: --format");
  const concurrency = parseIntFlag(values.concurrency, "--concurrency", "audit") ?? DEFAULT_AUDIT_CONCURRENCY;
  if (concurrency < 1)
    throw new NormalizerError("USAGE", `audit: --concurrency expects a whole number ≥ 1, got ${concurrency}`);
  if (values.charset !== undefined && values.charset !== "transcode" && values.charset !== "preserve") {
    throw new NormalizerError(
      "USAGE",
      `audit: --charset expects transcode or preserve, got ${JSON.stringify(values.charset)}`,
    );
  }
  const level = values["log-level"] ?? DEFAULT_AUDIT_LOG_LEVEL;
  if (!["debug", "info", "warn", "error", "silent"].includes(level))
    throw new NormalizerError(
      "USAGE",
      `audit: --log-level expects debug, info, warn, error or silent, got ${JSON.stringify(level)}`,
    );
  if (values.args !== undefined && values.call === undefined)
    throw new NormalizerError("USAGE", "audit: --args goes with --call TOOL");
  const calls = parseCalls(values.call, values.args);
  const reads = parseReads(values.read);
  const maxBytes = parseIntFlag(values["max-bytes"], "--max-bytes", "audit");
  const timeoutMs = parseIntFlag(values.timeout, "--timeout", "audit");
  if (timeoutMs !== undefined && (timeoutMs < 1 || timeoutMs > MAX_TIMER_MS))
    throw new NormalizerError(
      "USAGE",
      `audit: --timeout expects a whole number of milliseconds from 1 to ${MAX_TIMER_MS} (about 24.8 days)`,
    );
  const selected = await selectUpstream(values, command, "audit", io.cwd, io.env, values.name);
  // Before the server is read: an audit must not end in a report it cannot write.
  const output = values.output === undefined ? undefined : resolve(io.cwd, values.output);
  // A signal while the folders for -o are made removes them, until the upstream's own handler takes over.
  const { unmake, stop: stopEarly } = prepareOutputUnderSignals(output, "audit: -o");
  const requestTimeoutMs = timeoutMs ?? selected.config.limits.requestTimeoutMs;

  // The audit shows what would change: a config's dryRun must not hide it.
  const policy = new Policy({
    ...policyOptionsFor(selected.config, selected.server),
    dryRun: false,
    ...(values.charset === undefined ? {} : { charset: values.charset as "transcode" | "preserve" }),
  });
  const stderr = sinkFor(io.stderr);
  const logger = createStderrLogger(level as LogLevel, {}, (line) => stderr.writeNow(line)).child({
    upstream: selected.name,
  });
  // As `stdio` does: the keys of the entry it runs (a misspelt `args` starts the server without them).
  if (selected.configFile !== undefined) warnMisspeltKeys({ mcpServers: { [selected.name]: selected.server } }, logger);
  const auth = createUpstreamAuths(io, selected.config, selected.configFile, logger).for(
    selected.name,
    selected.server,
  );
  const transport = createUpstreamTransport(upstreamSpec(selected.server, childEnvironmentOf(selected)), {
    logger,
    maxMessageBytes: selected.config.limits.maxMessageBytes,
    ackTimeoutMs: selected.config.limits.upstreamAckTimeoutMs,
    serverStreamWaitMs: selected.config.limits.upstreamStreamWaitMs,
    unacknowledgedTimeoutMs: requestTimeoutMs,
    idleConnections: selected.config.limits.upstreamIdleConnections,
    connectTimeoutMs: selected.config.limits.connectTimeoutMs,
    killGraceMs: selected.config.limits.killGraceMs,
    stderrLinesLogged: selected.config.limits.stderrLinesLogged,
    // Read as the proxy reads them: a long payload literal stays the bytes it came in.
    rawStringBytes: selected.config.limits.rawStringBytes || undefined,
    maxMessageNodes: selected.config.limits.maxUpstreamMessageNodes,
    maxSkippedMessageBytes: selected.config.limits.maxSkippedMessageBytes,
    maxPendingPongs: selected.config.limits.maxPendingPongs,
    // The tokens it obtains are secrets too: a server that quotes them back is redacted.
    ...(auth === undefined ? {} : { fetch: auth.fetch, secrets: () => auth.secrets() }),
  });
  const progress = createProgress(io.stderr as NodeJS.WriteStream);
  const stopOnSignal = endUpstreamOnSignal(transport, progress, unmake);
  stopEarly();
  const tokens = values.tokens ? await loadTokenCounter() : undefined;
  const { model } = await runAudit({
    transport,
    server: selected.name,
    upstream: describeUpstream(selected.server),
    policy,
    // Pages are not held: the audit only reports where results would be cut.
    fit: {
      policy: new FitPolicy({ ...fitOptionsFor(selected.config, selected.server), dryRun: false }, DEFAULT_IMAGES),
      runtime: createFitRuntime(fitLimitsOf(selected.config)),
      store: null,
    },
    concurrency,
    requestTimeoutMs,
    ...(timeoutMs === undefined ? {} : { timeoutSetting: "--timeout" }),
    ...(tokens === undefined ? {} : { tokens }),
    calls,
    reads,
    keepUri: uriFilter(values.uri),
    ...(maxBytes === undefined ? {} : { maxBytes }),
    onProgress: (done, total, uri) => progress.update(done, total, uri),
    onTransportError: (message) => logger.warn("upstream transport error", { error: message }),
    describeEnd: () => transport.describeEnd(),
    version: await packageVersion(),
  })
    .catch((error: unknown) => {
      // No report is written: the folders made for it go again.
      unmake();
      throw error;
    })
    .finally(() => {
      stopOnSignal();
      progress.finish();
    });

  const text = renderReport(model, format);
  if (output !== undefined) {
    writeOutputFile(output, text, "audit: -o");
    await writeFully(io.stderr, `${auditSummary(model)}; report in ${values.output}\n`);
  } else {
    await writeFully(io.stdout, text);
  }
  return EXIT.OK;
}

/**
 * Ctrl-C or SIGTERM mid-audit: the upstream (a process group of its own, out of the terminal's
 * reach) is ended before the audit exits as signalled (130, 143); a second signal exits at once,
 * the group SIGKILLed on the way out. No report is written: the folders made for it go again.
 * Returns the function that removes the handler.
 */
function endUpstreamOnSignal(
  transport: { close(): Promise<void> },
  progress: { finish(): void },
  unmake: () => void,
): () => void {
  let signalled = 0;
  return onShutdownSignal((signal) => {
    const code = signalExitCode(signal);
    unmake();
    if (++signalled > 1) process.exit(code);
    progress.finish();
    void transport.close().finally(() => process.exit(code));
  });
}

/**
 * The upstream as shown in the report: its command line, or its URL without credentials or
 * query (where API keys go); never headers or env values.
 */
function describeUpstream(server: ServerConfig): string {
  if (isStdioServer(server)) return [server.command, ...(server.args ?? [])].join(" ");
  return describeUrl(server.url);
}

async function packageVersion(): Promise<string> {
  const { readFile } = await import("node:fs/promises");
  try {
    return (
      JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }
    ).version;
  } catch {
    return "0";
  }
}
