/**
 * The audit itself: initialize, read what the server declares — page through `resources/list`
 * (every `nextCursor`) only when it has the `resources` capability — read each resource kept
 * by `--uri` with bounded concurrency, then each `--read` URI and each `--call` tool, run the
 * engine on every result and aggregate what it would change into the report model. The
 * engine's records are used as they are: the audit's totals are their sums, minus entries over
 * `--max-bytes`, which are listed as skipped.
 */
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { NormalizerError } from "../../errors/NormalizerError.js";
import { visible } from "../../errors/visible.js";
import { WARNING_ACTIONS, type ChangeAction, type ChangeRecord } from "../../normalize/change.js";
import type { Policy } from "../../normalize/policy.js";
import { normalizeResult } from "../../normalize/result.js";
import { recordedText } from "../../normalize/recordedText.js";
import { rebuild, type JsonObject } from "../../normalize/objects.js";
import { measuredOnWire } from "../../transports/wireSizes.js";
import { factOf, ReportAggregator } from "../../report/aggregate.js";
import {
  itemStatus,
  type AuditItem,
  type AuditScope,
  type SkippedEntry,
  type StructuredDuplicate,
} from "../../report/auditDetails.js";
import type { EntryFact, ReadFailure, ReportModel } from "../../report/model.js";
import type { ProxyTransport } from "../../transports/types.js";
import { RawRpcClient, RpcError } from "./rpcClient.js";
import { structuredDuplicates } from "./structuredDuplicates.js";
import type { ToolCall } from "./targets.js";
import { TOKEN_ENCODING, TOKEN_NOTE, type TokenCounter } from "./tokens.js";
import { valueAt } from "./valueAt.js";
import { isRawJsonString } from "../../wire/rawJson.js";
import { fitResult, mergeChanges, type FitSession } from "../../fit/fitResult.js";

/** Default resources read at the same time (`--concurrency`). */
export const DEFAULT_AUDIT_CONCURRENCY = 4;
/** Default most `resources/list` pages followed (a server whose cursors never end is stopped). */
export const DEFAULT_MAX_LIST_PAGES = 10_000;
/** Longest tool error message kept in the report, in characters. */
const MAX_ERROR_CHARS = 500;
/** Longest tool arguments shown in a call's label, in characters. */
const MAX_ARGS_CHARS = 100;
/** Most resource templates named in the report's note. */
const MAX_TEMPLATES_NAMED = 10;

export interface AuditOptions {
  /** A transport to the upstream, not started. Closed when the audit ends. */
  transport: ProxyTransport;
  /** The name the upstream goes by in the report (`--server`, or `upstream`). */
  server: string;
  /** How it was reached, for the report (command line or URL; never headers or env). */
  upstream: string;
  policy: Policy;
  /** Resources read at the same time. Default 4. */
  concurrency?: number;
  maxListPages?: number;
  /** Time to wait for each response, in ms (`limits.requestTimeoutMs`, or `--timeout`). */
  requestTimeoutMs: number;
  /** What set that time, named when a request is not answered in it. */
  timeoutSetting?: string;
  /** Count tokens before/after with this (audit `--tokens`). */
  tokens?: TokenCounter;
  /** The fit layer as configured (images, inlining, cuts): its records join the engine's. */
  fit?: FitSession;
  /** `--call`: tools to call and audit, in order. */
  calls?: readonly ToolCall[];
  /** `--read`: URIs read as they are (template instances, or a few resources only). */
  reads?: readonly string[];
  /** `--uri`: which listed resources are read. Default: all. */
  keepUri?: (uri: string) => boolean;
  /** `--max-bytes`: entries larger than this are skipped (outside the totals). */
  maxBytes?: number;
  /**
   * Progress: `0` done (label "") before the first item; then for each item, before each of its
   * slow steps, `reading` (a tool: `calling`), `normalizing` and (with tokens) `counting tokens`
   * and the item; once it is done, one more done and the item alone.
   */
  onProgress?: (done: number, total: number, label: string) => void;
  describeEnd?: () => string | undefined;
  /** What the transport reports failed outside an answer, redacted (for the log). */
  onTransportError?: (message: string) => void;
  now?: () => Date;
  version?: string;
}

export interface AuditResult {
  model: ReportModel;
  /** Every engine record, with the resource it came from (for tests and tools). */
  records: Array<{ uri: string; method: string; change: ChangeRecord }>;
}

interface Listed {
  uri: string;
  /** The size the listing declares, in bytes, when it does. */
  size?: number;
}

export async function runAudit(options: AuditOptions): Promise<AuditResult> {
  const now = options.now ?? (() => new Date());
  const started = now().toISOString();
  const concurrency = options.concurrency ?? DEFAULT_AUDIT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new NormalizerError("USAGE", `audit: --concurrency expects a whole number ≥ 1, got ${concurrency}`);
  const client = new RawRpcClient(options.transport, {
    requestTimeoutMs: options.requestTimeoutMs,
    ...(options.timeoutSetting === undefined ? {} : { timeoutSetting: options.timeoutSetting }),
    ...(options.describeEnd === undefined ? {} : { describeEnd: options.describeEnd }),
    ...(options.onTransportError === undefined ? {} : { onTransportError: options.onTransportError }),
  });
  const aggregator = new ReportAggregator({ maxUris: Infinity });
  const records: AuditResult["records"] = [];
  const items: AuditItem[] = [];
  const skipped: SkippedEntry[] = [];
  const duplicates: StructuredDuplicate[] = [];
  const calls = options.calls ?? [];
  const scope: AuditScope = {
    capabilities: { resources: false, tools: false, prompts: false },
    listed: 0,
    filteredOut: 0,
    read: 0,
    called: 0,
    readFailed: 0,
    callFailed: 0,
    notes: [],
  };
  const fail = (failure: ReadFailure): void => {
    if (failure.kind === "read") scope.readFailed++;
    else scope.callFailed++;
    // A tool's own error text too may quote what the server was given to keep secret.
    aggregator.addFailure({ ...failure, uri: recordedText(failure.uri), error: client.redact(failure.error) });
  };
  try {
    await client.start();
    const init = await step("initialize", () =>
      client.request("initialize", {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "mcp-normalizer-audit", version: options.version ?? "0" },
      }),
    );
    const version = (init as { protocolVersion?: unknown } | null)?.protocolVersion;
    if (typeof version === "string") options.transport.setProtocolVersion?.(version);
    await client.notify("notifications/initialized");
    const capabilities = (init as { capabilities?: Record<string, unknown> } | null)?.capabilities ?? {};
    scope.capabilities = {
      resources: isPresent(capabilities.resources),
      tools: isPresent(capabilities.tools),
      prompts: isPresent(capabilities.prompts),
    };

    // What will be read: listed resources (only a server that declares resources is asked), then --read.
    let listed: Listed[] = [];
    if (scope.capabilities.resources) {
      const { listed: all, stopped } = await listAll(client, options.maxListPages ?? DEFAULT_MAX_LIST_PAGES);
      if (stopped !== undefined) scope.notes.push(stopped);
      scope.listed = all.length;
      const keep = options.keepUri ?? (() => true);
      listed = all.filter((item) => keep(item.uri));
      scope.filteredOut = all.length - listed.length;
      if (all.length === 0) scope.notes.push(await templatesNote(client));
    } else {
      scope.notes.push(
        "The server declares no resources capability: resources/list was not called." +
          (calls.length === 0 && (options.reads ?? []).length === 0
            ? " Audit its tools with --call TOOL[=JSON], or read URIs with --read URI."
            : ""),
      );
    }
    if (options.maxBytes !== undefined) {
      const max = options.maxBytes;
      listed = listed.filter((item) => {
        if (item.size === undefined || item.size <= max) return true;
        skipped.push({
          target: recordedText(item.uri),
          path: null,
          bytes: item.size,
          reason: `listed size ${item.size} bytes > --max-bytes ${max}; not read`,
        });
        return false;
      });
    }
    // Each URI once: a server that lists one twice (or a --read of a listed one) must not count it twice.
    const toRead = [...new Set([...listed.map((item) => item.uri), ...(options.reads ?? [])])];
    const total = toRead.length + calls.length;
    let done = 0;
    const progress = (label: string): void => options.onProgress?.(++done, total, label);
    // What is being worked on, said before the step that may take long (a large resource read, its
    // tokens counted), so that a bar shows it then and not only once the item is done.
    const working = (what: string, label: string): void => options.onProgress?.(done, total, `${what} ${label}`);
    // A frame before anything is read: the terminal is not blank while the first item is worked on.
    if (total > 0) options.onProgress?.(0, total, "");

    const account = async (
      target: string,
      method: string,
      before: unknown,
      after: unknown,
      changes: readonly ChangeRecord[],
    ): Promise<void> => {
      const kept: Array<{ uri: string; change: ChangeRecord; fact: EntryFact }> = [];
      if (options.tokens !== undefined && changes.length > 0) working("counting tokens", target);
      for (const change of changes) {
        if (options.maxBytes !== undefined && change.bytesBefore > options.maxBytes) {
          skipped.push({
            target: recordedText(target),
            path: change.path,
            bytes: change.bytesBefore,
            reason: `${change.bytesBefore} bytes > --max-bytes ${options.maxBytes}`,
          });
          continue;
        }
        const uri = method === "resources/read" ? target : (change.uri ?? `${target} ${change.path}`);
        kept.push({
          uri,
          change,
          fact: await toFact(options.server, uri, method, change, before, after, options.tokens),
        });
      }
      // Added together once counted: another read's entries do not land between this one's.
      for (const { uri, change, fact } of kept) {
        records.push({ uri, method, change });
        aggregator.add(fact);
        items.push(toItem(target, method, change));
      }
    };

    await eachLimited(toRead, concurrency, async (uri) => {
      scope.read++;
      try {
        working("reading", uri);
        const result = await client.request("resources/read", { uri });
        const contents = (result as { contents?: unknown } | null)?.contents;
        if (!Array.isArray(contents)) fail({ uri, error: "the result has no contents array", kind: "read" });
        else {
          working("normalizing", uri);
          const normalized = await normalizeAndFit("resources/read", result, null, options, client.responseOf(result));
          await account(uri, "resources/read", result, normalized.value, normalized.changes);
        }
      } catch (error) {
        fail({ ...failureOf(uri, error), kind: "read" });
      }
      progress(uri);
    });

    for (const call of calls) {
      const label = callLabel(call);
      scope.called++;
      try {
        working("calling", label);
        const result = await client.request("tools/call", { name: call.tool, arguments: call.args });
        if ((result as { isError?: unknown } | null)?.isError === true) {
          fail({ uri: label, error: toolErrorText(result), kind: "call" });
        } else {
          working("normalizing", label);
          const normalized = await normalizeAndFit("tools/call", result, call.tool, options, client.responseOf(result));
          await account(label, "tools/call", result, normalized.value, normalized.changes);
          for (const finding of structuredDuplicates(result)) duplicates.push({ target: label, ...finding });
        }
      } catch (error) {
        fail({ ...failureOf(label, error), kind: "call" });
      }
      progress(label);
    }
  } finally {
    await client.close().catch(() => {});
  }
  const model = aggregator.toModel({
    kind: "audit",
    source: { server: options.server, upstream: options.upstream },
    generatedAt: now().toISOString(),
    timeRange: { from: started, to: now().toISOString() },
    resources: { listed: scope.listed, failed: scope.readFailed },
    ...(options.tokens === undefined ? {} : { tokens: { encoding: TOKEN_ENCODING, note: TOKEN_NOTE } }),
    scope,
    items,
    skipped,
    duplicates,
  });
  return { model, records };
}

/**
 * The engine's result and records, then the fit layer's when it is configured. The engine's
 * records are measured in the response's wire text, as the proxy's log measures them.
 */
async function normalizeAndFit(
  method: string,
  result: unknown,
  tool: string | null,
  options: AuditOptions,
  response: unknown,
): Promise<{ value: unknown; changes: ChangeRecord[] }> {
  const engine = normalizeResult(method, result, options.policy);
  const normalized =
    response === undefined || engine.changes.length === 0
      ? engine
      : {
          value: engine.value,
          changes: [
            ...measuredOnWire(
              engine.changes,
              response,
              engine.value === result ? response : rebuild(response as JsonObject, { result: engine.value }),
              "result",
            ),
          ],
        };
  if (options.fit === undefined || !options.fit.policy.active) return normalized;
  const fitted = await fitResult(method, normalized.value, tool, options.fit);
  return { value: fitted.value, changes: mergeChanges(normalized.changes, fitted.changes) };
}

/** How a call is named in the report: the tool, and its arguments when it has any (shortened). */
function callLabel(call: ToolCall): string {
  const args = Object.keys(call.args).length === 0 ? "" : JSON.stringify(call.args);
  return (
    `tools/call ` +
    `${call.tool}` +
    `${args === "" ? "" : ` ${args.length > MAX_ARGS_CHARS ? `${args.slice(0, MAX_ARGS_CHARS)}…` : args}`}`
  );
}

/** A capability is declared by its key being present with an object (even an empty one). */
function isPresent(value: unknown): boolean {
  return typeof value === "object" && value !== null;
}

/**
 * Every page of resources/list. A repeated cursor, or more than `maxPages` pages, stops the
 * listing — not a hang: what was listed is audited, and `stopped` says why it is not all.
 */
async function listAll(client: RawRpcClient, maxPages: number): Promise<{ listed: Listed[]; stopped?: string }> {
  const out: Listed[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page >= maxPages)
      return {
        listed: out,
        stopped:
          `resources/list gave more than ${maxPages.toLocaleString("en-US")} pages (a cursor that never ends?): ` +
          `the listing stopped there; the ${out.length.toLocaleString("en-US")} resources on them are audited`,
      };
    const result = await step(
      `resources/list${cursor === undefined ? "" : ` (cursor ${JSON.stringify(cursor)})`}`,
      () => client.request("resources/list", cursor === undefined ? {} : { cursor }),
    );
    const resources = (result as { resources?: unknown } | null)?.resources;
    if (!Array.isArray(resources))
      throw new NormalizerError("UPSTREAM_HTTP_ERROR", "resources/list: the result has no resources array");
    for (const item of resources) {
      const { uri, size } = (item ?? {}) as { uri?: unknown; size?: unknown };
      if (typeof uri === "string")
        out.push(typeof size === "number" && Number.isFinite(size) && size >= 0 ? { uri, size } : { uri });
    }
    const next = (result as { nextCursor?: unknown }).nextCursor;
    if (typeof next !== "string") return { listed: out };
    if (seen.has(next))
      return {
        listed: out,
        stopped:
          `resources/list gave cursor ${JSON.stringify(recordedText(next))} a second time (a loop): the listing ` +
          `stopped there; the ${out.length.toLocaleString("en-US")} resources listed before are audited`,
      };
    seen.add(next);
    cursor = next;
  }
}

/** A server that lists no resources may still serve them from templates: say which. */
async function templatesNote(client: RawRpcClient): Promise<string> {
  const none = "The server lists no resources.";
  try {
    const result = await client.request("resources/templates/list", {});
    const templates = ((result as { resourceTemplates?: unknown } | null)?.resourceTemplates ?? []) as Array<{
      uriTemplate?: unknown;
    }>;
    const names = Array.isArray(templates)
      ? templates.map((t) => t?.uriTemplate).filter((t): t is string => typeof t === "string")
      : [];
    if (names.length === 0) return none;
    const shown = names.slice(0, MAX_TEMPLATES_NAMED).join(", ");
    return (
      `${none} It has resource templates (${shown}${names.length > MAX_TEMPLATES_NAMED ? ", …" : ""}): read ` +
      `instances with --read URI.`
    );
  } catch {
    return none;
  }
}

/** One row of the report; what the server chose held as records hold it (a megabyte URI is not copied whole). */
function toItem(target: string, method: string, change: ChangeRecord): AuditItem {
  return {
    target: recordedText(target),
    method,
    path: change.path,
    uri: recordedText(change.uri),
    status: itemStatus(change.action, WARNING_ACTIONS.has(change.action as ChangeAction)),
    action: change.action,
    mimeBefore: recordedText(change.mimeBefore),
    mimeAfter: recordedText(change.mimeAfter),
    bytesBefore: change.bytesBefore,
    bytesAfter: change.bytesAfter,
    saved: change.saved,
    reason: recordedText(change.reason),
    ...(change.detected === undefined ? {} : { detected: change.detected }),
  };
}

async function toFact(
  server: string,
  uri: string,
  method: string,
  change: ChangeRecord,
  before: unknown,
  after: unknown,
  tokens: TokenCounter | undefined,
): Promise<EntryFact> {
  const fact = factOf(change, server, method, uri);
  // The entry's tokens, before and after everything, are the first fact's: not counted twice.
  if (tokens === undefined || change.chained === true) return fact;
  const entryBefore = valueAt(before, change.path);
  const entryAfter = valueAt(after, change.path);
  const tokensBefore = await tokens(JSON.stringify(entryBefore) ?? "");
  const tokensAfter = entryAfter === entryBefore ? tokensBefore : await tokens(JSON.stringify(entryAfter) ?? "");
  return { ...fact, tokensBefore, tokensAfter };
}

/** A tool's own error (`isError: true`): the text of its text blocks, as the upstream wrote it. */
function toolErrorText(result: unknown): string {
  const content = (result as { content?: unknown }).content;
  // A text past limits.rawStringBytes was read as bytes: decoded here.
  const textOf = (text: unknown): string | undefined =>
    typeof text === "string" ? text : isRawJsonString(text) ? text.value() : undefined;
  const texts = Array.isArray(content)
    ? content.flatMap((b) => {
        const text = (b as { type?: unknown })?.type === "text" ? textOf((b as { text?: unknown }).text) : undefined;
        return text === undefined ? [] : [text];
      })
    : [];
  const text = texts.join(" ").replace(/\s+/g, " ").trim();
  const message = text === "" ? "the tool answered isError with no text" : text;
  return `tool error: ${message.length > MAX_ERROR_CHARS ? `${message.slice(0, MAX_ERROR_CHARS)}…` : message}`;
}

function failureOf(uri: string, error: unknown): { uri: string; error: string; code?: number } {
  if (error instanceof RpcError)
    return { uri, error: `${error.message} (JSON-RPC ${error.rpcCode})`, code: error.rpcCode };
  return { uri, error: error instanceof Error ? error.message : String(error) };
}

/** Runs a step of the session; a failure names the step. */
async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const why =
      error instanceof RpcError
        ? `${error.message} (JSON-RPC ${error.rpcCode})`
        : error instanceof Error
          ? error.message
          : String(error);
    // What the server said, on one line: its line breaks and controls are not the CLI's to print.
    throw new NormalizerError("UPSTREAM_UNREACHABLE", `${name} failed: ${visible(why)}`, {}, { cause: error });
  }
}

/** `limit` workers take items in order until none are left. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
