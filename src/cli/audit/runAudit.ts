/**
 * The audit itself (issue 4): initialize, page through `resources/list` following every
 * `nextCursor`, read each resource with bounded concurrency, run the engine on each result, and
 * aggregate what it would change into the report model. `--call` audits one tool result too.
 * The engine's records are used as they are: the audit's totals are their sums.
 */
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { NormalizerError } from "../../errors/NormalizerError.js";
import type { ChangeRecord } from "../../normalize/change.js";
import type { Policy } from "../../normalize/policy.js";
import { normalizeResult } from "../../normalize/result.js";
import { ReportAggregator } from "../../report/aggregate.js";
import type { EntryFact, ReportModel } from "../../report/model.js";
import type { ProxyTransport } from "../../transports/types.js";
import { RawRpcClient, RpcError } from "./rpcClient.js";
import { TOKEN_ENCODING, TOKEN_NOTE, type TokenCounter } from "./tokens.js";
import { valueAt } from "./valueAt.js";
import { fitResult, mergeChanges, type FitSession } from "../../fit/fitResult.js";

/** Default resources read at the same time (`--concurrency`). */
export const DEFAULT_AUDIT_CONCURRENCY = 4;
/** Default most `resources/list` pages followed (a server whose cursors never end is stopped). */
export const DEFAULT_MAX_LIST_PAGES = 10_000;

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
  requestTimeoutMs?: number;
  /** Count tokens before/after with this (audit `--tokens`). */
  tokens?: TokenCounter;
  /** `--call TOOL --args JSON`: audit this tool's result as well (issue 7). */
  call?: { tool: string; args: Record<string, unknown> };
  /** The fit layer as configured (images, inlining, cuts): its records join the engine's. */
  fit?: FitSession;
  onProgress?: (done: number, total: number, uri: string) => void;
  describeEnd?: () => string | undefined;
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
}

export async function runAudit(options: AuditOptions): Promise<AuditResult> {
  const now = options.now ?? (() => new Date());
  const started = now().toISOString();
  const concurrency = options.concurrency ?? DEFAULT_AUDIT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new NormalizerError("USAGE", `audit: --concurrency expects a whole number ≥ 1, got ${concurrency}`);
  const client = new RawRpcClient(options.transport, {
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
    ...(options.describeEnd === undefined ? {} : { describeEnd: options.describeEnd }),
  });
  const aggregator = new ReportAggregator({ maxUris: Infinity });
  const records: AuditResult["records"] = [];
  let listedCount = 0;
  let failedReads = 0;
  try {
    await client.start();
    const init = await step("initialize", () =>
      client.request("initialize", { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "mcp-normalizer-audit", version: options.version ?? "0" } }),
    );
    const version = (init as { protocolVersion?: unknown } | null)?.protocolVersion;
    if (typeof version === "string") options.transport.setProtocolVersion?.(version);
    await client.notify("notifications/initialized");

    const listed = await listAll(client, options.maxListPages ?? DEFAULT_MAX_LIST_PAGES);
    listedCount = listed.length;
    let done = 0;
    const account = (uri: string, method: string, before: unknown, after: unknown, changes: readonly ChangeRecord[]): void => {
      for (const change of changes) {
        records.push({ uri, method, change });
        aggregator.add(toFact(options.server, uri, method, change, before, after, options.tokens));
      }
    };
    await eachLimited(listed, concurrency, async ({ uri }) => {
      try {
        const result = await client.request("resources/read", { uri });
        const contents = (result as { contents?: unknown } | null)?.contents;
        if (!Array.isArray(contents)) {
          failedReads++;
          aggregator.addFailure({ uri, error: "the result has no contents array" });
        } else {
          const normalized = await normalizeAndFit("resources/read", result, null, options);
          account(uri, "resources/read", result, normalized.value, normalized.changes);
        }
      } catch (error) {
        failedReads++;
        aggregator.addFailure(failureOf(uri, error));
      }
      options.onProgress?.(++done, listed.length, uri);
    });

    if (options.call !== undefined) {
      const label = `tools/call ${options.call.tool}`;
      try {
        const result = await client.request("tools/call", { name: options.call.tool, arguments: options.call.args });
        const normalized = await normalizeAndFit("tools/call", result, options.call.tool, options);
        for (const change of normalized.changes) {
          const uri = change.uri ?? `${label} ${change.path}`;
          records.push({ uri, method: "tools/call", change });
          aggregator.add(toFact(options.server, uri, "tools/call", change, result, normalized.value, options.tokens));
        }
      } catch (error) {
        aggregator.addFailure(failureOf(label, error));
      }
    }
  } finally {
    await client.close().catch(() => {});
  }
  const model = aggregator.toModel({
    kind: "audit",
    source: { server: options.server, upstream: options.upstream },
    generatedAt: now().toISOString(),
    timeRange: { from: started, to: now().toISOString() },
    resources: { listed: listedCount, failed: failedReads },
    ...(options.tokens === undefined ? {} : { tokens: { encoding: TOKEN_ENCODING, note: TOKEN_NOTE } }),
  });
  return { model, records };
}

/** The engine's result and records, then the fit layer's when it is configured. */
async function normalizeAndFit(method: string, result: unknown, tool: string | null, options: AuditOptions): Promise<{ value: unknown; changes: ChangeRecord[] }> {
  const normalized = normalizeResult(method, result, options.policy);
  if (options.fit === undefined || !options.fit.policy.active) return normalized;
  const fitted = await fitResult(method, normalized.value, tool, options.fit);
  return { value: fitted.value, changes: mergeChanges(normalized.changes, fitted.changes) };
}

/** Every page of resources/list; a repeated cursor or too many pages is an error, not a hang. */
async function listAll(client: RawRpcClient, maxPages: number): Promise<Listed[]> {
  const out: Listed[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page >= maxPages) throw new NormalizerError("UPSTREAM_HTTP_ERROR", `resources/list: more than ${maxPages} pages; stopped (a cursor loop?)`);
    const result = await step(`resources/list${cursor === undefined ? "" : ` (cursor ${JSON.stringify(cursor)})`}`, () => client.request("resources/list", cursor === undefined ? {} : { cursor }));
    const resources = (result as { resources?: unknown } | null)?.resources;
    if (!Array.isArray(resources)) throw new NormalizerError("UPSTREAM_HTTP_ERROR", "resources/list: the result has no resources array");
    for (const item of resources) {
      const uri = (item as { uri?: unknown } | null)?.uri;
      if (typeof uri === "string") out.push({ uri });
    }
    const next = (result as { nextCursor?: unknown }).nextCursor;
    if (typeof next !== "string") return out;
    if (seen.has(next)) throw new NormalizerError("UPSTREAM_HTTP_ERROR", `resources/list: cursor ${JSON.stringify(next)} came back twice; stopped`);
    seen.add(next);
    cursor = next;
  }
}

function toFact(server: string, uri: string, method: string, change: ChangeRecord, before: unknown, after: unknown, tokens: TokenCounter | undefined): EntryFact {
  const fact: EntryFact = {
    server,
    method,
    uri,
    action: change.action,
    mimeBefore: change.mimeBefore,
    mimeAfter: change.mimeAfter,
    bytesBefore: change.bytesBefore,
    bytesAfter: change.bytesAfter,
    saved: change.saved,
    applied: change.applied,
  };
  if (tokens === undefined) return fact;
  const entryBefore = valueAt(before, change.path);
  const entryAfter = valueAt(after, change.path);
  const tokensBefore = tokens(JSON.stringify(entryBefore) ?? "");
  const tokensAfter = entryAfter === entryBefore ? tokensBefore : tokens(JSON.stringify(entryAfter) ?? "");
  return { ...fact, tokensBefore, tokensAfter };
}

function failureOf(uri: string, error: unknown): { uri: string; error: string; code?: number } {
  if (error instanceof RpcError) return { uri, error: `${error.message} (JSON-RPC ${error.rpcCode})`, code: error.rpcCode };
  return { uri, error: error instanceof Error ? error.message : String(error) };
}

/** Runs a step of the session; a failure names the step. */
async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const why = error instanceof RpcError ? `${error.message} (JSON-RPC ${error.rpcCode})` : error instanceof Error ? error.message : String(error);
    throw new NormalizerError("UPSTREAM_UNREACHABLE", `${name} failed: ${why}`, {}, { cause: error });
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
