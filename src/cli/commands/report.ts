/**
 * `mcp-normalizer report LOG.jsonl…`: aggregates normalization logs — one proxy's or a fleet's —
 * into the size report. Streams its input; malformed lines are counted and shown,
 * never fatal.
 */
import { visible } from "../../errors/visible.js";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { resolve } from "node:path";
import {
  aggregateLogSources,
  DEFAULT_MAX_LOG_LINE_BYTES,
  expandLogSources,
  sourceAt,
} from "../../report/logSources.js";
import { DEFAULT_MAX_URIS, DEFAULT_TOP_OFFENDERS, ReportAggregator } from "../../report/aggregate.js";
import { parseReportFormat, renderReport } from "../../report/render.js";
import { parseCommandArgs, parseIntFlag } from "../args.js";
import { EXIT, type ExitCode } from "../exitCodes.js";
import { writeFully, type CliIo } from "../io.js";
import { prepareOutputUnderSignals, writeOutputFile } from "../outputFile.js";

export const REPORT_HELP = `Usage: mcp-normalizer report [options] LOG.jsonl… 

Aggregates normalization logs (JSON lines, from one proxy or many) into a size report:
by server, mime type, action, method and URI; the time range covered; bytes saved.
LOG may be a file, a glob ("logs/**/*.jsonl", quoted so the shell leaves it), - for stdin, and
gzip-compressed (detected by content). Lines that are not records are counted and skipped.

Options:
  --format F             md (default) | json (stable, schemaVersion 1) | html (self-contained)
  -o, --output FILE      write the report to FILE (default: stdout)
  --top N                rows in the top offenders table (default ${DEFAULT_TOP_OFFENDERS})
  --max-uris N           URIs tracked one by one (default ${DEFAULT_MAX_URIS}; totals are always exact)
  --max-line-bytes N     longer lines count as malformed (default ${DEFAULT_MAX_LOG_LINE_BYTES})
  -h, --help             this help

Exit codes: 0 report written (malformed lines are in the report); 2 bad command line, a log
that cannot be opened, or -o naming a log it reads; 130/143 stopped by SIGINT/SIGTERM.`;

export async function runReport(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      format: { type: "string" },
      output: { type: "string", short: "o" },
      top: { type: "string" },
      "max-uris": { type: "string" },
      "max-line-bytes": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    "report",
    { filesAfterDash: true },
  );
  if (values.help) {
    await writeFully(io.stdout, `${REPORT_HELP}\n`);
    return EXIT.OK;
  }
  const format = parseReportFormat(values.format, "report: --format");
  const topOffenders = parseIntFlag(values.top, "--top", "report") ?? DEFAULT_TOP_OFFENDERS;
  const maxUris =
    atLeastOne(parseIntFlag(values["max-uris"], "--max-uris", "report"), "--max-uris") ?? DEFAULT_MAX_URIS;
  const maxLineBytes =
    atLeastOne(parseIntFlag(values["max-line-bytes"], "--max-line-bytes", "report"), "--max-line-bytes") ??
    DEFAULT_MAX_LOG_LINE_BYTES;
  const output = values.output === undefined ? undefined : resolve(io.cwd, values.output);
  // `report -- -a.jsonl` is allowed (a log named like a flag): parseCommandArgs counts it in.
  const sources = await expandLogSources(positionals, io.cwd);
  const overwritten = output === undefined ? undefined : sourceAt(sources, output);
  if (overwritten !== undefined)
    throw new NormalizerError(
      "USAGE",
      `report: -o ${values.output} is ${overwritten === output ? "" : `${overwritten}, `}one of the logs it reads: ` +
        "the report would replace it (name another file)",
    );
  // Ctrl-C or SIGTERM over a long log: no report is written, so the folders made for it go again.
  const { unmake, stop: stopOnSignal } = prepareOutputUnderSignals(output, "report: -o");
  let model: ReturnType<ReportAggregator["toModel"]>;
  try {
    const aggregator = new ReportAggregator({ topOffenders, maxUris });
    await aggregateLogSources(sources, aggregator, { stdin: io.stdin, maxLineBytes });
    model = aggregator.toModel({ kind: "log", source: { files: sources }, generatedAt: new Date().toISOString() });
  } catch (error) {
    unmake();
    throw error;
  } finally {
    stopOnSignal();
  }
  const text = renderReport(model, format);
  if (output !== undefined) {
    writeOutputFile(output, text, "report: -o");
  } else {
    await writeFully(io.stdout, text);
  }
  if (model.malformed.lines > 0)
    await writeFully(
      io.stderr,
      `report: ${model.malformed.lines} malformed lines skipped (first: ` +
        `${describeFirst(model.malformed.examples[0])})\n`,
    );
  return EXIT.OK;
}

/** The first malformed line, as the terminal shows it: what the log held quoted in it is made visible. */
function describeFirst(example: { source: string; line: number; error: string } | undefined): string {
  return example === undefined ? "–" : visible(`${example.source}:${example.line}: ${example.error}`);
}

/** A limit of 0 would drop everything: refused, not turned into 1 without a word. */
function atLeastOne(value: number | undefined, flag: string): number | undefined {
  if (value === 0) throw new NormalizerError("USAGE", `report: ${flag} expects a whole number ≥ 1, got 0`);
  return value;
}
