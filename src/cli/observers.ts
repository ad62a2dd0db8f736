/**
 * What watches a running proxy: the operational logger, the normalization log (DESIGN.md §6)
 * and the flags that set them. Issue 4 grows this into metrics and reports.
 */
import { mkdirSync, createWriteStream, type WriteStream } from "node:fs";
import { dirname, resolve } from "node:path";
import type { ProxyConfig } from "../config/schema.js";
import type { PolicyOptions } from "../normalize/policy.js";
import { createStderrLogger, type Logger, type LogLevel } from "../observe/logger.js";
import { toLogRecords } from "../observe/logRecord.js";
import type { NormalizationEvent } from "../proxy/withNormalization.js";
import type { SessionInfo } from "../proxy/sessionManager.js";
import { NormalizerError } from "../errors/NormalizerError.js";
import type { CliIo } from "./io.js";

export const OBSERVE_OPTIONS = {
  "log-level": { type: "string" },
  "log-file": { type: "string" },
  "dry-run": { type: "boolean" },
  charset: { type: "string" },
} as const;

export const OBSERVE_HELP = `  --log-level L          debug | info | warn | error | silent (default: config log.level, else info)
  --log-file FILE        append normalization records (JSONL) to FILE (default: config log.file)
  --dry-run              log what would change, forward the original
  --charset MODE         transcode (default) | preserve`;

export interface ObserveValues {
  "log-level"?: string | undefined;
  "log-file"?: string | undefined;
  "dry-run"?: boolean | undefined;
  charset?: string | undefined;
}

export interface Observers {
  readonly logger: Logger;
  readonly onNormalized: (event: NormalizationEvent, session: SessionInfo) => void;
  policyOverrides(options: PolicyOptions): PolicyOptions;
  close(): Promise<void>;
}

const LEVELS = new Set(["debug", "info", "warn", "error", "silent"]);

export async function createObservers(config: ProxyConfig, values: ObserveValues, io: CliIo, configFile: string | undefined): Promise<Observers> {
  const level = values["log-level"] ?? config.log.level;
  if (!LEVELS.has(level)) throw new NormalizerError("USAGE", `--log-level expects debug, info, warn, error or silent, got ${JSON.stringify(level)}`);
  if (values.charset !== undefined && values.charset !== "transcode" && values.charset !== "preserve") {
    throw new NormalizerError("USAGE", `--charset expects transcode or preserve, got ${JSON.stringify(values.charset)}`);
  }
  const logger = createStderrLogger(level as LogLevel, {}, (line) => io.stderr.write(line));
  const logPath = values["log-file"] !== undefined ? resolve(io.cwd, values["log-file"]) : config.log.file !== undefined ? resolve(configFile === undefined ? io.cwd : dirname(configFile), config.log.file) : undefined;
  let stream: WriteStream | undefined;
  if (logPath !== undefined) {
    mkdirSync(dirname(logPath), { recursive: true });
    // Appended, never truncated: a restart must not lose what earlier runs recorded.
    stream = createWriteStream(logPath, { flags: "a" });
    stream.on("error", (error) => logger.error("normalization log write failed", { file: logPath, error: error.message }));
  }
  return {
    logger,
    onNormalized: (event, session) => {
      for (const record of toLogRecords(event, session)) {
        const line = `${JSON.stringify(record)}\n`;
        if (stream !== undefined) stream.write(line);
        else if (record.action !== "none") logger.info("normalized", record as unknown as Record<string, unknown>);
      }
    },
    policyOverrides: (options) => ({
      ...options,
      ...(values["dry-run"] ? { dryRun: true } : {}),
      ...(values.charset === undefined ? {} : { charset: values.charset as "transcode" | "preserve" }),
    }),
    close: () => new Promise<void>((resolveClose) => (stream === undefined ? resolveClose() : stream.end(() => resolveClose()))),
  };
}
