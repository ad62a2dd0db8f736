/**
 * `mcp-normalizer normalize [FILE|-]`: one JSON result or JSON-RPC message in, normalized JSON
 * out on stdout, a one-line summary on stderr.
 */
import { constants, isUtf8 } from "node:buffer";
import { createReadStream } from "node:fs";
import { resolve } from "node:path";
import { checkJsonText } from "../../config/jsonLocation.js";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { normalizeMessage } from "../../normalize/message.js";
import { RESULT_METHODS } from "../../normalize/result.js";
import { Policy, type PolicyOptions } from "../../normalize/policy.js";
import type { ChangeRecord } from "../../normalize/change.js";
import { DEFAULT_IMAGES } from "../../config/defaults.js";
import { fitLimitsOf, fitOptionsFor } from "../../config/fitPolicy.js";
import { serverNamed } from "../../config/serverNamed.js";
import { loadConfigFile } from "../../config/load.js";
import { completePolicyOptions, policyOptionsFor } from "../../config/policy.js";
import { FitPolicy } from "../../fit/fitPolicy.js";
import { FIT_METHODS, type FitSession, fitResult, mergeChanges } from "../../fit/fitResult.js";
import { createFitRuntime } from "../../fit/runtime.js";
import { isJsonObject, rebuild } from "../../normalize/objects.js";
import { messageText } from "../../transports/wireJson.js";
import { measuredOnWire } from "../../transports/wireSizes.js";
import { rememberOrigin } from "../../transports/wireOrigin.js";
import { startsWithBom } from "../../wire/jsonNodes.js";
import { rememberWireText } from "../../transports/wireText.js";
import { indentJsonText } from "../../wire/jsonText.js";
import { totalsOfChanges } from "../../report/aggregate.js";
import { parseCommandArgs } from "../args.js";
import { EXIT, type ExitCode } from "../exitCodes.js";
import { readAll, writeFully, type CliIo } from "../io.js";

/** The longest string Node makes: the input is read as one. */
const MAX_STRING_LENGTH = constants.MAX_STRING_LENGTH;

export const NORMALIZE_HELP = `Usage: mcp-normalizer normalize [FILE|-] [options]

Reads one JSON value — a ReadResourceResult, CallToolResult, GetPromptResult, a resources/list
result, or a whole JSON-RPC message — and writes it normalized to stdout. A one-line summary
(entries changed, bytes before → after, saved) goes to stderr. FILE defaults to stdin; one
whose name starts with "-" goes last, after --: mcp-normalizer normalize --pretty -- -msg.json.

Options:
  --method METHOD        treat the input as the result of METHOD: resources/read, tools/call,
                         prompts/get, resources/list or resources/templates/list
                         (default: inferred from its shape)
  --config FILE          take the normalization policy from a proxy config (its fit
                         keys too: images, embedded resources, maxResultBytes) …
  --server NAME          … and that server's overrides
  --charset MODE         transcode (default) | preserve
  --dry-run              report what would change; write the input unchanged
  --pretty               indent the output JSON
  --records              print every change record (JSON lines) to stderr
  -h, --help             this help

Exit codes: 0 done; 2 bad flags, unreadable file or invalid JSON; 3 invalid config; 130/143
stopped by SIGINT/SIGTERM (nothing written).`;

export async function runNormalize(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      method: { type: "string" },
      config: { type: "string" },
      server: { type: "string" },
      charset: { type: "string" },
      "dry-run": { type: "boolean" },
      pretty: { type: "boolean" },
      records: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    "normalize",
    { filesAfterDash: true },
  );
  if (values.help) {
    await writeFully(io.stdout, `${NORMALIZE_HELP}\n`);
    return EXIT.OK;
  }
  if (positionals.length > 1)
    throw new NormalizerError(
      "USAGE",
      `normalize: expected at most one FILE, got ${positionals.length} (${positionals.join(", ")})`,
    );
  if (values.charset !== undefined && values.charset !== "transcode" && values.charset !== "preserve") {
    throw new NormalizerError(
      "USAGE",
      `normalize: --charset expects transcode or preserve, got ${JSON.stringify(values.charset)}`,
    );
  }
  if (values.method !== undefined && !RESULT_METHODS.has(values.method))
    throw new NormalizerError(
      "USAGE",
      `normalize: --method expects one of ${[...RESULT_METHODS].join(", ")}, got ${JSON.stringify(values.method)}`,
    );
  if (values.server !== undefined && values.config === undefined)
    throw new NormalizerError("USAGE", "normalize: --server needs --config");

  let options: PolicyOptions = completePolicyOptions();
  let fit: FitSession | undefined;
  if (values.config !== undefined) {
    // No server is started here: their `${VAR}`s (tokens in headers, env) need not be set.
    const { config } = loadConfigFile(resolve(io.cwd, values.config), io.env, { onlyServer: null });
    const server = values.server === undefined ? undefined : serverNamed(config, values.server);
    if (values.server !== undefined && server === undefined) {
      throw new NormalizerError(
        "USAGE",
        `normalize: --server ${values.server} is not in ${values.config} (servers: ` +
          `${Object.keys(config.mcpServers).join(", ")})`,
      );
    }
    options = policyOptionsFor(config, server);
    // The config's fit keys too (images, embeddedResources, maxResultBytes): the result as the
    // proxy would send it. No pages are held: a cut result names pages no one can read here.
    fit = {
      policy: new FitPolicy(fitOptionsFor(config, server, values["dry-run"]), DEFAULT_IMAGES),
      runtime: createFitRuntime(fitLimitsOf(config)),
      store: null,
    };
  }
  if (values.charset !== undefined) options = { ...options, charset: values.charset as "transcode" | "preserve" };
  if (values["dry-run"]) options = { ...options, dryRun: true };

  const source = positionals[0] ?? "-";
  const name = source === "-" ? "<stdin>" : source;
  let input: Buffer | null;
  try {
    input = await readAll(source === "-" ? io.stdin : createReadStream(resolve(io.cwd, source)), MAX_STRING_LENGTH);
  } catch (error) {
    throw new NormalizerError(
      "INPUT_READ_FAILED",
      `normalize: cannot read ${name}: ` +
        `${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`,
    );
  }
  // The text is parsed as one string: more bytes than the longest one Node holds can never be.
  if (input === null)
    throw new NormalizerError(
      "INPUT_READ_FAILED",
      `normalize: ${name} is larger than ${MAX_STRING_LENGTH} bytes, the longest text Node can read as one ` +
        "string (normalize its messages one by one)",
    );
  // JSON is UTF-8 (RFC 8259): bytes that are not would come out as U+FFFD, changed without a word.
  if (!isUtf8(input))
    throw new NormalizerError(
      "INPUT_INVALID_JSON",
      `normalize: ${name} is not UTF-8, which JSON must be (convert it first, e.g. iconv -f latin1 -t utf-8)`,
    );
  // A byte order mark before the JSON (editors on Windows write one) is not part of it.
  const text = input.toString("utf8", startsWithBom(input) ? 3 : 0);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // Where, as a config's error says it (line, column, the field being read); Node's own words
    // (an offset) only when the checker stops first at something JSON allows (deep nesting).
    const at = checkJsonText(text);
    const where =
      at?.kind === "syntax"
        ? ` at line ${at.line}, column ${at.column} (in ${at.path}): expected ${at.expected}`
        : `: ${(error as Error).message}`;
    throw new NormalizerError("INPUT_INVALID_JSON", `normalize: ${name} is not valid JSON${where}`);
  }
  // What the engine leaves as it was is written as the input had it (integers past 2^53, `1.0`,
  // key order), as the proxy forwards it; a dry run writes the input itself.
  rememberWireText(value, text.trim());
  const result = await normalizeAndFit(value, text.trim(), new Policy(options), values.method, fit);
  rememberOrigin(result.value, value);
  const out = values["dry-run"] ? text.trim() : messageText(result.value);
  // Laid out anew, compact or indented (--pretty), every token as written; a dry run writes the input.
  await writeFully(
    io.stdout,
    `${values.pretty ? indentJsonText(out) : values["dry-run"] ? out : indentJsonText(out, 0)}\n`,
  );
  if (values.records) {
    for (const record of result.changes) await writeFully(io.stderr, `${JSON.stringify(record)}\n`);
  }
  await writeFully(io.stderr, `${summarize(result.changes, result.method, Boolean(values["dry-run"]))}\n`);
  return EXIT.OK;
}

/**
 * The engine's pass, then the fit layer's on a result it may change (a whole answer's result too).
 * The engine's records are measured in `text` (the input as written), as the proxy's log measures
 * what crossed the wire.
 */
async function normalizeAndFit(
  value: unknown,
  text: string,
  policy: Policy,
  method: string | undefined,
  fit: FitSession | undefined,
): Promise<{ value: unknown; changes: ChangeRecord[]; method: string | null }> {
  const normalized = normalizeMessage(value, policy, method);
  const engine = { ...normalized, changes: measuredAsWritten(normalized.changes, value, normalized.value, text) };
  if (fit === undefined || !fit.policy.active || engine.method === null || !FIT_METHODS.has(engine.method))
    return engine;
  const message = isJsonObject(engine.value) && engine.value.jsonrpc === "2.0" ? engine.value : undefined;
  // A request's params are no result to fit.
  if (message !== undefined && !("result" in message)) return engine;
  const fitted = await fitResult(engine.method, message === undefined ? engine.value : message.result, null, fit);
  return {
    value: message === undefined ? fitted.value : rebuild(message, { result: fitted.value }),
    changes: mergeChanges(engine.changes, fitted.changes),
    method: engine.method,
  };
}

/** `changes` of `input` (written as `text`) measured as it was written and as `output` would be. */
function measuredAsWritten(changes: ChangeRecord[], input: unknown, output: unknown, text: string): ChangeRecord[] {
  if (changes.length === 0) return changes;
  if (isJsonObject(input) && input.jsonrpc === "2.0")
    return [...measuredOnWire(changes, input, output, "result" in input ? "result" : "params")];
  // A bare result: measured as the result of a message around it.
  const original = { result: input };
  rememberWireText(original, `{"result":${text}}`);
  return [...measuredOnWire(changes, original, output === input ? original : { result: output }, "result")];
}

export function summarize(changes: readonly ChangeRecord[], method: string | null, dryRun: boolean): string {
  if (method === null)
    return (
      "normalize: no MCP result recognized (expected contents, content, messages, resources or " +
      "resourceTemplates); input written unchanged"
    );
  // Counted as audit and report count them: an entry changed twice is one entry.
  const totals = totalsOfChanges(changes, method);
  const counts = Object.entries(totals.actions).filter(([action]) => action !== "none");
  const { bytesBefore: before, bytesAfter: after, saved } = totals;
  const detail = counts.map(([action, n]) => `${action} ${n}`).join(", ");
  const share = before === 0 ? "0.0" : ((saved / before) * 100).toFixed(1);
  return (
    `normalize (${method}${dryRun ? ", dry run" : ""}): ${totals.changed} of ${totals.entries} entries ` +
    `changed${detail === "" ? "" : ` (${detail})`}; ${before} → ${after} bytes; saved ${saved} (${share}%)`
  );
}
