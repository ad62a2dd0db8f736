/**
 * The fit layer as one session's decorator sees it: which tool a `tools/call` names (rules
 * can match on it; the decorator keeps it with the request in flight), the session's pages of
 * cut results, and the requests the proxy answers itself instead of forwarding —
 * `resources/read` of a page URI (but of one the upstream's results linked to: another
 * mcp-normalizer's, in front of which this one runs); and, when results may be cut and the upstream declared
 * no `resources` capability, `resources/list` and `resources/templates/list` (empty lists),
 * since the proxy then declares that capability so hosts offer the model a way to read the pages.
 */
import { FIT_METHODS, fitResult, type FitSession, type Fitted } from "../fit/fitResult.js";
import { FitPolicy, type FitPolicyInput } from "../fit/fitPolicy.js";
import type { FitRuntime } from "../fit/runtime.js";
import type { FitLimits } from "../fit/settings.js";
import { defaultFitRuntime, fitPolicyOf } from "./defaultFit.js";
import { SpillStore } from "../fit/spill/spillStore.js";
import { UpstreamPages } from "../fit/spill/upstreamPages.js";
import { pageReadAnswer } from "./pageRead.js";
import { rebuild, type JsonObject } from "../normalize/objects.js";
import { idAsWritten } from "../transports/idAsWritten.js";
import { isObj, isRequest } from "../transports/jsonrpc.js";

export interface FitOptions {
  /** A compiled fit policy, or options to compile one (keys left out: the config's defaults). */
  readonly policy: FitPolicy | FitPolicyInput;
  /** Shared image queue and page memory; default: one per process with default limits. */
  readonly runtime?: FitRuntime;
  /**
   * The fit layer's `limits.*` for one in-process wrapper (`fitHeldBytes`, `fitConcurrency`, …;
   * those left out at their defaults): `withNormalization` gives it a runtime of its own with
   * them. Read there only: a stage is given its runtime.
   */
  readonly limits?: Partial<FitLimits>;
  /**
   * Pages shared with other connections of the same client (a stateless pool's upstreams: any
   * of them may serve the next read). Its owner closes it; default: this connection's own.
   */
  readonly store?: SpillStore;
  /** Pages of an mcp-normalizer upstream, shared like `store`; default: this connection's own. */
  readonly upstreamPages?: UpstreamPages;
}

/** The empty answers the proxy gives for an upstream without resources, once it declared them. */
const EMPTY_LISTS: Readonly<Record<string, string>> = {
  "resources/list": "resources",
  "resources/templates/list": "resourceTemplates",
};

export class FitStage {
  readonly session: FitSession;
  /** True once the proxy declared `resources` for an upstream that had not. */
  private declaredResources = false;
  private readonly ownsStore: boolean;
  private readonly ending = new AbortController();
  /** Pages the upstream's results linked to: their reads go upstream. */
  private readonly upstreamPages: UpstreamPages;

  constructor(options: FitOptions) {
    const policy = options.policy instanceof FitPolicy ? options.policy : fitPolicyOf(options.policy);
    const runtime = options.runtime ?? defaultFitRuntime();
    this.ownsStore = options.store === undefined;
    this.upstreamPages = options.upstreamPages ?? new UpstreamPages();
    this.session = {
      policy,
      runtime,
      store: policy.mayCut ? (options.store ?? new SpillStore(runtime.spill)) : null,
      ended: this.ending.signal,
    };
  }

  get active(): boolean {
    return this.session.policy.active;
  }

  /** Requests whose answers this stage needs to see besides the results it fits. */
  tracks(method: string): boolean {
    return method === "initialize" && this.session.policy.mayCut;
  }

  /** The tool a `tools/call` request names (rules may match on it; its answer is fitted with it). */
  toolOf(method: string, params: unknown): string | undefined {
    return method === "tools/call" && isObj(params) && typeof params.name === "string" ? params.name : undefined;
  }

  /**
   * The fitted result (or a promise of it) of a `method` request that named `tool`; null when
   * the method is not one the fit layer changes.
   */
  fit(
    method: string,
    tool: string | undefined,
    result: unknown,
    givenUp?: AbortSignal,
  ): Fitted | Promise<Fitted> | null {
    if (!FIT_METHODS.has(method)) return null;
    this.upstreamPages.noteLinksIn(result, this.session.store);
    if (!this.active) return null;
    return fitResult(method, result, tool ?? null, this.session, givenUp);
  }

  /** An `initialize` result with `resources` declared when pages may be served and it had none. */
  initializeResult(result: unknown): unknown {
    if (!isObj(result) || !isObj(result.capabilities) || result.capabilities.resources !== undefined) return result;
    this.declaredResources = true;
    return rebuild(result, { capabilities: rebuild(result.capabilities, { resources: {} }) });
  }

  /** The response the proxy gives itself to a host request, or null when it goes to the upstream. */
  answer(msg: unknown): JsonObject | null {
    if (!isRequest(msg)) return null;
    const page = pageReadAnswer(this.session.store, msg, this.upstreamPages);
    if (page !== null) return page;
    const list = this.declaredResources ? EMPTY_LISTS[msg.method] : undefined;
    if (list !== undefined) return { jsonrpc: "2.0", id: idAsWritten(msg), result: { [list]: [] } };
    return null;
  }

  /** The session is over: its pages go, and its image fits still running are given up. */
  close(): void {
    this.ending.abort();
    if (this.ownsStore) this.session.store?.close();
  }
}
