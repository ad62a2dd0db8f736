/**
 * What watches a running proxy: the operational logger (stderr), the normalization log
 * (`log.file` or stderr — never stdout; both through observe/logSink.ts), and for `serve` the
 * live views: Prometheus metrics (`/metrics`) and a bounded in-memory report (`/report`).
 */
import { dirname, resolve } from "node:path";
import type { ProxyConfig } from "../config/schema.js";
import type { PolicyOptions } from "../normalize/policy.js";
import { createStderrLogger, type Logger, type LogLevel } from "../observe/logger.js";
import { toLogRecords } from "../observe/logRecord.js";
import type { ProxyMetrics, MetricsDocument, UpstreamHealthSample } from "../observe/metrics.js";
import { createNormalizationLog, type NormalizationLog } from "../observe/normalizationLog.js";
import { sinkFor } from "../observe/logSink.js";
import type { NormalizationEvent } from "../normalize/change.js";
import type { SessionInfo } from "../proxy/sessionManager.js";
import { NormalizerError } from "../errors/NormalizerError.js";
import { LogFileError } from "../observe/logFile.js";
import type { CliIo } from "./io.js";

export const OBSERVE_OPTIONS = {
  "log-level": { type: "string" },
  "log-file": { type: "string" },
  "dry-run": { type: "boolean" },
  charset: { type: "string" },
} as const;

export const OBSERVE_HELP =
  `  --log-level L          debug | info | warn | error | silent (default: config ` +
  `log.level, else info)
  --log-file FILE        append normalization records (JSONL) to FILE (default: config log.file;
                         without one they go to stderr at log level info or debug)
  --dry-run              log what would change, forward the original
  --charset MODE         transcode (default) | preserve`;

export interface ObserveValues {
  "log-level"?: string | undefined;
  "log-file"?: string | undefined;
  "dry-run"?: boolean | undefined;
  charset?: string | undefined;
}

export interface ObserverOptions {
  /** Keep metrics and a live report (`serve`). Default false (`stdio` has nowhere to show them). */
  live?: boolean;
  /** Server names, so their metric series exist before their first session. */
  servers?: readonly string[];
  /** Process metrics in /metrics. Default true. */
  defaultMetrics?: boolean;
  /** Clock for log records' `ts` (tests). */
  now?: () => Date;
}

export interface HttpDocument {
  contentType: string;
  body: string;
}

export interface Observers {
  readonly logger: Logger;
  readonly onNormalized: (event: NormalizationEvent, session: SessionInfo) => void;
  policyOverrides(options: PolicyOptions): PolicyOptions;
  /** `GET /metrics` (present with `live`). */
  readonly metrics?: () => Promise<MetricsDocument>;
  /** `GET /report`: the live HTML report from this proxy's own records (present with `live`). */
  readonly report?: () => Promise<HttpDocument>;
  /** Up/down/sessions/failures gauges are sampled from this at each scrape (`() => sessions.healthReport()`). */
  watchHealth(source: () => UpstreamHealthSample): void;
  /** For whoever restarts upstream connections: counts `mcp_normalizer_upstream_restarts_total`. */
  upstreamRestarted(server: string): void;
  /** Reopens the log file (after logrotate moved it). */
  reopenLog(): void;
  close(): Promise<void>;
}

const LEVELS = new Set(["debug", "info", "warn", "error", "silent"]);

export async function createObservers(
  config: ProxyConfig,
  values: ObserveValues,
  io: CliIo,
  configFile: string | undefined,
  options: ObserverOptions = {},
): Promise<Observers> {
  const level = values["log-level"] ?? config.log.level;
  if (!LEVELS.has(level))
    throw new NormalizerError(
      "USAGE",
      `--log-level expects debug, info, warn, error or silent, got ${JSON.stringify(level)}`,
    );
  if (values.charset !== undefined && values.charset !== "transcode" && values.charset !== "preserve") {
    throw new NormalizerError(
      "USAGE",
      `--charset expects transcode or preserve, got ${JSON.stringify(values.charset)}`,
    );
  }
  const stderr = sinkFor(io.stderr);
  const logger = createStderrLogger(level as LogLevel, {}, (line) => stderr.writeNow(line));
  const logPath =
    values["log-file"] !== undefined
      ? resolve(io.cwd, values["log-file"])
      : config.log.file !== undefined
        ? resolve(configFile === undefined ? io.cwd : dirname(configFile), config.log.file)
        : undefined;
  // With a file, records are always written; without one they join the operational
  // lines on stderr unless the level asks for quiet.
  let log: NormalizationLog | undefined;
  if (logPath !== undefined)
    log = openLogFile(logPath, values["log-file"] !== undefined ? "--log-file" : "log.file", logger);
  else if (level === "debug" || level === "info")
    log = createNormalizationLog(io.stderr === process.stderr ? { fd: 2 } : { stream: io.stderr });

  const live = options.live ?? false;
  // Loaded only here: `stdio` never keeps metrics, and prom-client is a large load at start-up.
  const metrics: ProxyMetrics | undefined = live
    ? new (await import("../observe/metrics.js")).ProxyMetrics({
        ...(options.servers === undefined ? {} : { servers: options.servers }),
        defaultMetrics: options.defaultMetrics ?? true,
      })
    : undefined;
  // Bounded: totals exact, URI rows capped (DEFAULT_MAX_URIS), so a long-running proxy stays small.
  const aggregate = live ? new (await import("../report/aggregate.js")).ReportAggregator() : undefined;
  const started = new Date().toISOString();
  const now = options.now ?? (() => new Date());

  return {
    logger,
    onNormalized: (event, session) => {
      metrics?.observe(event, session.server);
      for (const record of toLogRecords(event, session, now)) {
        log?.write(record);
        aggregate?.add(record);
      }
    },
    policyOverrides: (policy) => ({
      ...policy,
      // Records of entries left as they were are read by the metrics only (the log drops them).
      ...(metrics === undefined ? { recordUnchanged: false } : {}),
      ...(values["dry-run"] ? { dryRun: true } : {}),
      ...(values.charset === undefined ? {} : { charset: values.charset as "transcode" | "preserve" }),
    }),
    ...(metrics === undefined ? {} : { metrics: () => metrics.render() }),
    ...(aggregate === undefined
      ? {}
      : {
          report: async () => ({
            contentType: "text/html; charset=utf-8",
            body: (await import("../report/renderHtml.js")).renderHtml(
              aggregate.toModel({
                kind: "log",
                source: {},
                generatedAt: now().toISOString(),
                timeRange: { from: started, to: now().toISOString() },
              }),
            ),
          }),
        }),
    watchHealth: (source) => metrics?.sampleHealthFrom(source),
    upstreamRestarted: (server) => metrics?.upstreamRestarted(server),
    reopenLog: () => log?.reopen(),
    close: async () => {
      await log?.close();
    },
  };
}

/** The log file, opened now: a path that cannot be written ends the command (exit 2) before anything starts. */
function openLogFile(path: string, setting: string, logger: Logger): NormalizationLog {
  try {
    return createNormalizationLog(
      { file: path },
      {
        onError: (error) =>
          logger.error("normalization log write failed; no records are written to it until a SIGHUP reopens it", {
            file: path,
            error: error.message,
          }),
        onResumed: () => logger.info("normalization log reopened after a failed write; records resume", { file: path }),
      },
    );
  } catch (error) {
    if (error instanceof LogFileError)
      throw new NormalizerError("LOG_FILE_UNWRITABLE", `${setting}: ${error.message}`, { file: path });
    throw error;
  }
}
