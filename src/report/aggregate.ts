/**
 * Entry facts in, a report model out. Pure and incremental: `report` feeds it a log
 * of any size line by line, `serve` keeps one alive for `GET /report`, `audit` feeds it the
 * engine's records. Memory is bounded: totals and breakdowns are exact; the per-URI table keeps
 * about `maxUris` rows (those that save or grow most) and counts the entries it could not keep.
 */
import { recordedText } from "../normalize/recordedText.js";
import { CHANGE_ACTIONS, WARNING_ACTIONS, type ChangeAction, type ChangeRecord } from "../normalize/change.js";
import { parseMediaType } from "../normalize/mediaType.js";
import {
  REPORT_SCHEMA_VERSION,
  type EntryFact,
  type GroupRow,
  type MalformedLine,
  type ReadFailure,
  type ReportModel,
  type Totals,
  type UriRow,
} from "./model.js";

/** Default most URIs tracked one by one; past it the least significant rows are dropped. */
export const DEFAULT_MAX_URIS = 10_000;
/** Default most distinct keys per breakdown (servers, mime types, …); the rest fold into `(other)`. */
export const DEFAULT_MAX_GROUP_KEYS = 1_000;
/** Default rows in the top offenders table. */
export const DEFAULT_TOP_OFFENDERS = 20;
/** Default malformed lines kept as examples (all are counted). */
export const DEFAULT_MAX_MALFORMED_EXAMPLES = 20;
/** Default most read failures listed (all are counted in `failures.length` up to this). */
export const DEFAULT_MAX_FAILURES = 1_000;

export interface AggregatorOptions {
  /** Most URIs tracked one by one (default 10 000; `Infinity` for an audit). */
  maxUris?: number;
  /** Most distinct keys per breakdown (default 1 000). */
  maxGroupKeys?: number;
  /** Rows in the top offenders table (default 20). */
  topOffenders?: number;
  /** Malformed lines kept as examples (default 20). */
  maxMalformedExamples?: number;
  /** Read failures kept (default 1 000). */
  maxFailures?: number;
}

export interface ModelMeta {
  kind: ReportModel["kind"];
  source: ReportModel["source"];
  generatedAt: string;
  /** Overrides the range of `ts` seen (audit: when it started and ended). */
  timeRange?: ReportModel["timeRange"];
  resources?: ReportModel["resources"];
  tokens?: ReportModel["tokens"];
  scope?: ReportModel["scope"];
  items?: ReportModel["items"];
  skipped?: ReportModel["skipped"];
  duplicates?: ReportModel["duplicates"];
}

/** The entry a chained fact may continue. */
interface EntryState {
  readonly fact: EntryFact;
  /** The totals it was counted in but its mime type's: all, by server, by method, its own, its URI's. */
  readonly filed: Totals[];
  /** Its mime type's row: the type its last fact left it with (`mime`). */
  mimeRow: Totals;
  /** Whether it still counts as warned (not yet changed). */
  warned: boolean;
  /** What it added so far (its facts'): what moves when a later change gives it another type. */
  readonly own: Totals;
  /** The mime key it is filed under: the type its last fact left it with. */
  mime: string;
}

/** One URI's running row. */
interface UriState {
  readonly uri: string;
  readonly server: string;
  mime: string;
  readonly totals: Totals;
}

const OTHER = "(other)";

/** The actions this version writes: always counted by name. */
const KNOWN_ACTIONS: ReadonlySet<string> = new Set<string>(CHANGE_ACTIONS);

/**
 * Most distinct actions this version does not write that are counted by name; the rest count as
 * `(other)`. Every row of every breakdown counts its facts by action: unbounded names would grow
 * each row with the log.
 */
export const MAX_FOREIGN_ACTIONS = 100;
const NO_MIME = "(none)";

export function emptyTotals(): Totals {
  // Counts keyed by the action a log line names: no prototype, so "constructor" or "__proto__"
  // from a foreign or hostile log is counted like any other name, not read off Object.prototype.
  const actions: Record<string, number> = Object.create(null);
  return { entries: 0, changed: 0, warned: 0, notApplied: 0, bytesBefore: 0, bytesAfter: 0, saved: 0, actions };
}

/**
 * Adds one fact to running totals (in place). A chained fact (its entry changed again, after the
 * fact before it) adds its difference and its action, not another entry — unless `asEntry` (the
 * totals of one action, which count its every use).
 */
export function addToTotals(totals: Totals, fact: EntryFact, asEntry = fact.chained !== true): void {
  if (!asEntry) {
    totals.bytesAfter += fact.bytesAfter - fact.bytesBefore;
    totals.saved += fact.saved;
    if (fact.applied === false && fact.action !== "none") totals.notApplied++;
    totals.actions[fact.action] = (totals.actions[fact.action] ?? 0) + 1;
    return;
  }
  totals.entries++;
  if (WARNING_ACTIONS.has(fact.action as ChangeAction)) totals.warned++;
  else if (fact.action !== "none") totals.changed++;
  if (fact.applied === false && fact.action !== "none") totals.notApplied++;
  totals.bytesBefore += fact.bytesBefore;
  totals.bytesAfter += fact.bytesAfter;
  totals.saved += fact.saved;
  if (fact.tokensBefore !== undefined) totals.tokensBefore = (totals.tokensBefore ?? 0) + fact.tokensBefore;
  if (fact.tokensAfter !== undefined) totals.tokensAfter = (totals.tokensAfter ?? 0) + fact.tokensAfter;
  totals.actions[fact.action] = (totals.actions[fact.action] ?? 0) + 1;
}

/** The fact an engine or fit record makes, for `server`'s answer to `method`, filed under `uri`. */
export function factOf(change: ChangeRecord, server: string, method: string, uri: string | null): EntryFact {
  return {
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
    ...(change.chained === true ? { chained: true } : {}),
  };
}

/**
 * The totals of one result's records, counted as a report counts them: an entry changed twice
 * (a chained record) is one entry, in at its first size and out at its last.
 */
export function totalsOfChanges(changes: readonly ChangeRecord[], method: string): Totals {
  const aggregator = new ReportAggregator();
  for (const change of changes) aggregator.add(factOf(change, "", method, change.uri));
  return aggregator.totalsSoFar();
}

/** The essence a fact is filed under: the type it ended with, else the one it came with. */
export function mimeKey(fact: Pick<EntryFact, "mimeBefore" | "mimeAfter">): string {
  const raw = fact.mimeAfter ?? fact.mimeBefore;
  if (raw === null || raw === undefined) return NO_MIME;
  const essence = parseMediaType(raw)?.essence;
  return essence === undefined ? "(invalid)" : recordedText(essence);
}

export class ReportAggregator {
  private readonly totals = emptyTotals();
  private readonly groups = {
    server: new Map<string, Totals>(),
    mime: new Map<string, Totals>(),
    action: new Map<string, Totals>(),
    method: new Map<string, Totals>(),
  };
  private readonly uris = new Map<string, UriState>();
  /** Actions counted by name that this version does not write (see `foreignAction`). */
  private readonly foreignActions = new Set<string>();
  private readonly failures: ReadFailure[] = [];
  private readonly malformedExamples: MalformedLine[] = [];
  private malformedCount = 0;
  private ignored = 0;
  /** Entries not reflected in the URI table (their rows were pruned, or never admitted). */
  private untracked = 0;
  /** Entries with no URI (a tool's blocks): in every total, in no URI row. */
  private withoutUri = 0;
  /** The sum of every fact's bytesBefore + bytesAfter: what bounds every total (see `fits`). */
  private bytesAdded = 0;
  /**
   * The last fact that was an entry of its own — what a chained fact after it continues — the
   * totals it was counted in, and whether it still counts as warned (not yet changed).
   */
  private entry: EntryState | undefined;
  /** |saved| a new URI's entry must exceed to join a full table (the least kept at the last pruning). */
  private admitAbove = 0;
  private firstTs = Infinity;
  private lastTs = -Infinity;
  private readonly maxUris: number;
  private readonly maxGroupKeys: number;
  private readonly topN: number;
  private readonly maxExamples: number;
  private readonly maxFailures: number;

  constructor(options: AggregatorOptions = {}) {
    this.maxUris = options.maxUris ?? DEFAULT_MAX_URIS;
    this.maxGroupKeys = options.maxGroupKeys ?? DEFAULT_MAX_GROUP_KEYS;
    this.topN = options.topOffenders ?? DEFAULT_TOP_OFFENDERS;
    this.maxExamples = options.maxMalformedExamples ?? DEFAULT_MAX_MALFORMED_EXAMPLES;
    this.maxFailures = options.maxFailures ?? DEFAULT_MAX_FAILURES;
  }

  /** Entries counted so far. */
  get entries(): number {
    return this.totals.entries;
  }

  /** The totals over every fact added so far (a copy). */
  totalsSoFar(): Totals {
    return cloneTotals(this.totals);
  }

  /**
   * Whether the fact can be added with every sum still exact. Each total — bytes before, after
   * or saved, in any breakdown, by action counting chained facts again — is at most the sum of
   * every fact's bytesBefore + bytesAfter, which is kept within 2^53 − 1; a fact past that would
   * make the totals round silently, so a log reader counts its line as malformed instead.
   */
  fits(fact: Pick<EntryFact, "bytesBefore" | "bytesAfter">): boolean {
    return this.bytesAdded + fact.bytesBefore + fact.bytesAfter <= Number.MAX_SAFE_INTEGER;
  }

  /**
   * Why a chained fact cannot continue the entry before it (a hostile or garbled log, whose
   * totals would go below zero): a change after an applied one whose `bytesBefore` is not what the
   * entry was left at, or any that would leave the entry below 0 bytes (a dry run's engine changes
   * are not made, so the fit layer's after them measures the entry as it came: bytes apart).
   * Undefined when it can, or is no chained fact of that entry.
   */
  chainBreak(
    fact: Pick<EntryFact, "chained" | "server" | "uri" | "bytesBefore" | "bytesAfter" | "applied">,
  ): string | undefined {
    const continued = this.continuedBy(fact);
    if (continued === undefined) return undefined;
    const left = continued.own.bytesAfter;
    if (continued.fact.applied !== false && fact.applied !== false && fact.bytesBefore !== left)
      return `chained record's bytesBefore (${fact.bytesBefore}) is not what the change before it left (${left})`;
    if (left + fact.bytesAfter - fact.bytesBefore < 0)
      return `chained record takes its entry below 0 bytes (${left} + ${fact.bytesAfter} − ${fact.bytesBefore})`;
    return undefined;
  }

  add(read: EntryFact): void {
    const given = KNOWN_ACTIONS.has(read.action) ? read : { ...read, action: this.foreignAction(read.action) };
    // A chained fact follows the one it continues (same server and URI); one that does not — a
    // hostile or garbled log — is an entry of its own.
    const continued = this.continuedBy(given);
    const continues = continued !== undefined;
    const fact: EntryFact = given.chained === true && !continues ? { ...given, chained: false } : given;
    // A chained fact is filed with the entry it continues, under that entry's keys — but by mime
    // type under the type the entry went out with, which a later change may have made another.
    const entry = continues ? continued!.fact : fact;
    this.bytesAdded += fact.bytesBefore + fact.bytesAfter;
    addToTotals(this.totals, fact);
    const filed = [
      this.totals,
      this.group(this.groups.server, entry.server, fact),
      this.group(this.groups.method, entry.method, fact),
    ];
    const mimeRow = continues ? this.refile(continued!, fact) : this.group(this.groups.mime, mimeKey(fact), fact);
    this.group(this.groups.action, fact.action, fact, true);
    const row = fact.uri === null ? undefined : this.addUri(fact);
    if (fact.uri === null && fact.chained !== true) this.withoutUri++;
    if (!continues) {
      const own = emptyTotals();
      addToTotals(own, fact);
      filed.push(own);
      if (row !== undefined) filed.push(row);
      const warned = WARNING_ACTIONS.has(fact.action as ChangeAction);
      this.entry = { fact, filed, mimeRow, warned, own, mime: mimeKey(fact) };
    } else {
      addToTotals(continued!.own, fact);
      if (continued!.warned && fact.action !== "none" && !WARNING_ACTIONS.has(fact.action as ChangeAction)) {
        // An entry warned about first and then changed (the fit layer made it fit) is a changed entry.
        for (const totals of [...continued!.filed, continued!.mimeRow]) {
          totals.warned--;
          totals.changed++;
        }
        continued!.warned = false;
      }
    }
    if (typeof fact.ts === "string") {
      const at = Date.parse(fact.ts);
      if (Number.isFinite(at)) {
        if (at < this.firstTs) this.firstTs = at;
        if (at > this.lastTs) this.lastTs = at;
      }
    }
  }

  addFailure(failure: ReadFailure): void {
    if (this.failures.length < this.maxFailures) this.failures.push(failure);
  }

  addMalformed(example: MalformedLine): void {
    this.malformedCount++;
    if (this.malformedExamples.length < this.maxExamples) this.malformedExamples.push(example);
  }

  /** A JSON line that is not a normalization record (an operational log line): skipped. */
  addIgnored(): void {
    this.ignored++;
  }

  toModel(meta: ModelMeta): ReportModel {
    const saved = this.totals.saved;
    const share = (n: number): number => (saved > 0 ? n / saved : 0);
    const rows = (map: Map<string, Totals>, order: (a: GroupRow, b: GroupRow) => number): GroupRow[] =>
      [...map].map(([key, totals]) => ({ key, ...cloneTotals(totals), shareOfSaved: share(totals.saved) })).sort(order);
    const bySaved = (a: Totals, b: Totals): number => b.saved - a.saved || b.bytesBefore - a.bytesBefore;
    // Rows are pruned in batches as they come: the model shows at most maxUris of them, the rest counted.
    const { kept, dropped } = this.rankedUris();
    const byUri: UriRow[] = kept
      .map(({ uri, server, mime, totals }) => ({
        uri,
        server,
        mime,
        ...cloneTotals(totals),
        shareOfSaved: share(totals.saved),
      }))
      .sort((a, b) => bySaved(a, b) || a.uri.localeCompare(b.uri));
    return {
      schemaVersion: REPORT_SCHEMA_VERSION,
      kind: meta.kind,
      generatedAt: meta.generatedAt,
      source: meta.source,
      timeRange: meta.timeRange ?? {
        from: Number.isFinite(this.firstTs) ? new Date(this.firstTs).toISOString() : null,
        to: Number.isFinite(this.lastTs) ? new Date(this.lastTs).toISOString() : null,
      },
      totals: {
        ...cloneTotals(this.totals),
        shareSaved: this.totals.bytesBefore > 0 ? saved / this.totals.bytesBefore : 0,
      },
      byServer: rows(this.groups.server, bySaved),
      byMime: rows(this.groups.mime, bySaved),
      byAction: rows(this.groups.action, (a, b) => b.entries - a.entries || a.key.localeCompare(b.key)),
      byMethod: rows(this.groups.method, bySaved),
      byUri,
      topOffenders: byUri.filter((row) => row.saved > 0).slice(0, this.topN),
      failures: [...this.failures],
      malformed: { lines: this.malformedCount, examples: [...this.malformedExamples] },
      ignoredLines: this.ignored,
      uriTable: { limit: this.maxUris, untrackedEntries: this.untracked + dropped, entriesWithoutUri: this.withoutUri },
      ...(meta.resources === undefined ? {} : { resources: meta.resources }),
      ...(meta.tokens === undefined ? {} : { tokens: meta.tokens }),
      ...(meta.scope === undefined ? {} : { scope: meta.scope }),
      ...(meta.items === undefined ? {} : { items: meta.items }),
      ...(meta.skipped === undefined ? {} : { skipped: meta.skipped }),
      ...(meta.duplicates === undefined ? {} : { duplicates: meta.duplicates }),
    };
  }

  private group(map: Map<string, Totals>, key: string, fact: EntryFact, asEntry?: boolean): Totals {
    const totals = this.slot(map, key);
    addToTotals(totals, fact, asEntry);
    return totals;
  }

  /**
   * The entry a chained fact continues: the last one, when it has the fact's server and URI; a
   * chained fact that does not follow its entry (a hostile or garbled log) continues none.
   */
  private continuedBy(fact: Pick<EntryFact, "chained" | "server" | "uri">): EntryState | undefined {
    const last = this.entry;
    return fact.chained === true && last?.fact.server === fact.server && last.fact.uri === fact.uri ? last : undefined;
  }

  /**
   * An action this version does not write (a newer proxy's, or a hostile log's): counted by its
   * name among the first `MAX_FOREIGN_ACTIONS`, then as `(other)` — every row counts by action.
   */
  private foreignAction(action: string): string {
    if (this.foreignActions.has(action)) return action;
    if (this.foreignActions.size >= MAX_FOREIGN_ACTIONS) return OTHER;
    this.foreignActions.add(action);
    return action;
  }

  /** The row `key` is counted in: its own, or `(other)` once the breakdown is full. */
  private slot(map: Map<string, Totals>, key: string): Totals {
    let totals = map.get(key);
    if (totals === undefined) {
      const slot = map.size < this.maxGroupKeys ? key : OTHER;
      totals = map.get(slot);
      if (totals === undefined) {
        totals = emptyTotals();
        map.set(slot, totals);
      }
    }
    return totals;
  }

  /**
   * Files a chained fact in its entry's mime row. When it leaves the entry with another type (a
   * PNG's type fixed, then the fit layer made it a JPEG), the entry moves — all it added so far —
   * to the row of the type it now goes out with; a row left with no entry goes.
   */
  private refile(state: EntryState, fact: EntryFact): Totals {
    let row = state.mimeRow;
    const key = mimeKey(fact);
    if (key !== state.mime) {
      shiftTotals(row, state.own, -1);
      if (row.entries === 0) {
        for (const [name, totals] of this.groups.mime) if (totals === row) this.groups.mime.delete(name);
      }
      row = this.slot(this.groups.mime, key);
      shiftTotals(row, state.own, 1);
      state.mimeRow = row;
      state.mime = key;
    }
    addToTotals(row, fact);
    return row;
  }

  /** Files `fact` in its URI's row; the row's totals, or undefined when it is in no row. */
  private addUri(fact: EntryFact): Totals | undefined {
    // A log from another proxy (or an older one) may hold URIs of any length: kept as records hold them.
    const uri = recordedText(fact.uri as string);
    const key = `${fact.server}\u0000${uri}`;
    let row = this.uris.get(key);
    // A chained fact adds to its entry's row; that row pruned, the fact goes with it.
    if (row === undefined && fact.chained === true) return undefined;
    if (row === undefined && this.uris.size >= this.maxUris && Math.abs(fact.saved) <= this.admitAbove) {
      // A full table admits a new URI only when it matters more than the least row kept at the
      // last pruning: otherwise a log of endless distinct small URIs would churn the table.
      this.untracked++;
      return undefined;
    }
    if (row === undefined) {
      row = { uri, server: fact.server, mime: mimeKey(fact), totals: emptyTotals() };
      this.uris.set(key, row);
    } else {
      row.mime = mimeKey(fact);
    }
    addToTotals(row.totals, fact);
    // Pruned in batches (down to the limit once a quarter over it): O(log n) amortized per add,
    // and at most 1.25 × maxUris rows alive.
    if (this.uris.size > this.maxUris + Math.ceil(this.maxUris / 4)) this.pruneUris();
    return row.totals;
  }

  /** The URI rows the model shows (at most maxUris, those that save or grow most) and the entries of the rest. */
  private rankedUris(): { kept: UriState[]; dropped: number } {
    if (this.uris.size <= this.maxUris) return { kept: [...this.uris.values()], dropped: 0 };
    const sorted = [...this.uris.values()].sort(byImpact);
    let dropped = 0;
    for (const row of sorted.slice(this.maxUris)) dropped += row.totals.entries;
    return { kept: sorted.slice(0, this.maxUris), dropped };
  }

  private pruneUris(): void {
    const sorted = [...this.uris].sort(([, a], [, b]) => byImpact(a, b));
    for (const [, row] of sorted.slice(this.maxUris)) this.untracked += row.totals.entries;
    this.uris.clear();
    for (const [key, row] of sorted.slice(0, this.maxUris)) this.uris.set(key, row);
    this.admitAbove = Math.abs(sorted[this.maxUris - 1]?.[1].totals.saved ?? 0);
  }
}

/** Rows that save or grow most first, then the biggest. */
function byImpact(a: UriState, b: UriState): number {
  return Math.abs(b.totals.saved) - Math.abs(a.totals.saved) || b.totals.bytesBefore - a.totals.bytesBefore;
}

/** Adds (`sign` 1) or takes away (−1) `from`'s counts and sums to or from `into`, in place. */
function shiftTotals(into: Totals, from: Totals, sign: 1 | -1): void {
  into.entries += sign * from.entries;
  into.changed += sign * from.changed;
  into.warned += sign * from.warned;
  into.notApplied += sign * from.notApplied;
  into.bytesBefore += sign * from.bytesBefore;
  into.bytesAfter += sign * from.bytesAfter;
  into.saved += sign * from.saved;
  if (from.tokensBefore !== undefined) into.tokensBefore = (into.tokensBefore ?? 0) + sign * from.tokensBefore;
  if (from.tokensAfter !== undefined) into.tokensAfter = (into.tokensAfter ?? 0) + sign * from.tokensAfter;
  for (const [action, n] of Object.entries(from.actions)) {
    const left = (into.actions[action] ?? 0) + sign * n;
    if (left === 0) delete into.actions[action];
    else into.actions[action] = left;
  }
}

function cloneTotals(totals: Totals): Totals {
  return { ...totals, actions: { ...totals.actions } };
}
