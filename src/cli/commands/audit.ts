/**
 * `mcp-normalizer audit`: reads every resource of one upstream and reports what normalization
 * changes and saves (issue 4, DESIGN.md §3). The upstream is named as for `stdio`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { policyOptionsFor } from "../../config/policy.js";
import { isStdioServer, type ServerConfig } from "../../config/schema.js";
import { Policy } from "../../normalize/policy.js";
import { createStderrLogger, type LogLevel } from "../../observe/logger.js";
import { upstreamSpec } from "../../proxy/upstreamFactory.js";
import { parseReportFormat, renderReport } from "../../report/render.js";
import { createUpstreamTransport } from "../../transports/upstream/index.js";
import { parseCommandArgs, parseIntFlag } from "../args.js";
import { createProgress } from "../audit/progressBar.js";
import { DEFAULT_AUDIT_CONCURRENCY, runAudit } from "../audit/runAudit.js";
import { loadTokenCounter, TOKEN_ENCODING } from "../audit/tokens.js";
import { EXIT, type ExitCode } from "../exitCodes.js";
import { writeFully, type CliIo } from "../io.js";
import { SELECTOR_HELP, SELECTOR_OPTIONS, selectUpstream } from "../upstreamSelector.js";
import { createUpstreamAuths } from "../oauthContext.js";

export const AUDIT_HELP = `Usage: mcp-normalizer audit [options] (-- CMD ARGS… | CMD ARGS… | --url URL | --config FILE --server NAME)

Initializes the upstream, pages through resources/list (every nextCursor), reads each resource
and reports what normalization would change: per resource and in total, entries unwrapped /
transcoded / re-encoded / mime fixed, bytes before and after, saved, share of the total, the top
offenders, and the resources that failed to read (with the error).

${SELECTOR_HELP}

Options:
  --format F             md (default) | json (stable, schemaVersion 1) | html (self-contained)
  -o, --output FILE      write the report to FILE (default: stdout)
  --concurrency N        resources read at the same time (default ${DEFAULT_AUDIT_CONCURRENCY})
  --tokens               also estimate LLM tokens before/after (${TOKEN_ENCODING}, GPT-4o's encoding)
  --call TOOL            also call TOOL and audit its result …
  --args JSON            … with these arguments (a JSON object; default {}; not --arg, which
                         is an argument of the upstream command)
  --charset MODE         transcode (default) | preserve
  --log-level L          upstream and audit log lines on stderr (default warn)
  -h, --help             this help

A progress bar is drawn on stderr when it is a terminal.
Exit codes: 0 report written (failed reads are in the report); 1 the upstream could not be
started, initialized or listed; 2 bad command line; 3 invalid config.`;

export async function runAuditCommand(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, command } = parseCommandArgs(
    argv,
    {
      ...SELECTOR_OPTIONS,
      format: { type: "string" },
      output: { type: "string", short: "o" },
      concurrency: { type: "string" },
      tokens: { type: "boolean" },
      call: { type: "string" },
      args: { type: "string" },
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
  if (concurrency < 1) throw new NormalizerError("USAGE", "audit: --concurrency expects a whole number ≥ 1");
  if (values.charset !== undefined && values.charset !== "transcode" && values.charset !== "preserve") {
    throw new NormalizerError("USAGE", `audit: --charset expects transcode or preserve, got ${JSON.stringify(values.charset)}`);
  }
  const level = values["log-level"] ?? "warn";
  if (!["debug", "info", "warn", "error", "silent"].includes(level)) throw new NormalizerError("USAGE", `audit: --log-level expects debug, info, warn, error or silent, got ${JSON.stringify(level)}`);
  const call = parseCall(values.call, values.args);
  const selected = selectUpstream(values, command, "audit", io.cwd, io.env);

  // The audit shows what would change: a config's dryRun must not hide it.
  const policy = new Policy({ ...policyOptionsFor(selected.config, selected.server), dryRun: false, ...(values.charset === undefined ? {} : { charset: values.charset as "transcode" | "preserve" }) });
  const logger = createStderrLogger(level as LogLevel, {}, (line) => io.stderr.write(line)).child({ upstream: selected.name });
  const fetch = createUpstreamAuths(io, selected.config, selected.configFile, logger).for(selected.name, selected.server)?.fetch;
  const transport = createUpstreamTransport(upstreamSpec(selected.server), { logger, maxMessageBytes: selected.config.limits.maxMessageBytes, ...(fetch === undefined ? {} : { fetch }) });
  const progress = createProgress(io.stderr as NodeJS.WriteStream);
  const tokens = values.tokens ? await loadTokenCounter() : undefined;
  const { model } = await runAudit({
    transport,
    server: selected.name,
    upstream: describeUpstream(selected.server),
    policy,
    concurrency,
    requestTimeoutMs: selected.config.limits.requestTimeoutMs,
    ...(tokens === undefined ? {} : { tokens }),
    ...(call === undefined ? {} : { call }),
    onProgress: (done, total, uri) => progress.update(done, total, uri),
    describeEnd: () => (transport as { describeEnd?: () => string | undefined }).describeEnd?.(),
    version: await packageVersion(),
  }).finally(() => progress.finish());

  const text = renderReport(model, format);
  if (values.output !== undefined) {
    const file = resolve(io.cwd, values.output);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    const t = model.totals;
    await writeFully(io.stderr, `audit: ${model.resources?.listed ?? 0} resources listed, ${model.resources?.failed ?? 0} failed to read; ${t.bytesBefore} → ${t.bytesAfter} bytes, saved ${t.saved}; report in ${values.output}\n`);
  } else {
    await writeFully(io.stdout, text);
  }
  return EXIT.OK;
}

function parseCall(tool: string | undefined, args: string | undefined): { tool: string; args: Record<string, unknown> } | undefined {
  if (tool === undefined) {
    if (args !== undefined) throw new NormalizerError("USAGE", "audit: --args goes with --call TOOL");
    return undefined;
  }
  if (args === undefined) return { tool, args: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch (error) {
    throw new NormalizerError("USAGE", `audit: --args is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new NormalizerError("USAGE", "audit: --args expects a JSON object");
  return { tool, args: parsed as Record<string, unknown> };
}

/** The upstream as shown in the report: its command line or URL, never headers or env values. */
function describeUpstream(server: ServerConfig): string {
  if (isStdioServer(server)) return [server.command, ...(server.args ?? [])].join(" ");
  return server.url;
}

async function packageVersion(): Promise<string> {
  const { readFile } = await import("node:fs/promises");
  try {
    return (JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version;
  } catch {
    return "0";
  }
}
