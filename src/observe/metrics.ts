/**
 * Prometheus metrics of one proxy instance, on prom-client
 * with a registry of its own (never the global one: two proxies in one process, or two tests,
 * must not add into each other's counters).
 *
 * Counters are monotonic (Prometheus rule), and a saving can be negative (a re-encode to blob
 * grows the entry), so savings and growth are two counters: net saved = saved − grown.
 * Changes not applied (dryRun) count as bytes out unchanged and in `entries_total` only.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { WARNING_ACTIONS, type ChangeAction } from "../normalize/change.js";
import type { ChangeRecord, NormalizationEvent } from "../normalize/change.js";
import { actionLabel, methodLabel, mimeLabel } from "./metricLabels.js";
import { SeriesHistogram, type HistogramSeries } from "./seriesHistogram.js";

/** Buckets of the per-message normalization time, in seconds (from 0.0001 s to 5 s). */
export const NORMALIZE_SECONDS_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/** What `/healthz` knows per upstream (SessionManager.healthReport()), sampled at scrape time. */
export interface UpstreamHealthSample {
  servers: Record<string, { status: "up" | "down" | "idle"; sessions: number; upstreamFailures: number }>;
}

export interface ProxyMetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, handles) of prom-client. Default true. */
  defaultMetrics?: boolean;
  /** Server names known in advance, so their series exist (at 0) before the first session. */
  servers?: readonly string[];
}

export interface MetricsDocument {
  contentType: string;
  body: string;
}

const ENTRY_LABELS = ["server", "method", "action", "mime"] as const;
type EntryLabels = Record<(typeof ENTRY_LABELS)[number], string>;

/**
 * What one label set's entries added since the counters were last brought up to date.
 * prom-client hashes the label object on every `inc` (seven per entry here): counting in plain
 * numbers and adding them to the counters when they are read (`collect`, at scrape time) takes
 * that off every message. Label sets are few (bounded labels), so tallies
 * are kept and reused.
 */
interface EntryTally {
  readonly labels: EntryLabels;
  /** True when entries were counted since the last flush (their series then exist, even at 0). */
  pending: boolean;
  entries: number;
  bytesIn: number;
  bytesOut: number;
  saved: number;
  grown: number;
  warnings: number;
  rewrites: number;
}

export class ProxyMetrics {
  readonly registry = new Registry();
  private readonly bytesIn: Counter<(typeof ENTRY_LABELS)[number]>;
  private readonly bytesOut: Counter<(typeof ENTRY_LABELS)[number]>;
  private readonly bytesSaved: Counter<(typeof ENTRY_LABELS)[number]>;
  private readonly bytesGrown: Counter<(typeof ENTRY_LABELS)[number]>;
  private readonly entries: Counter<(typeof ENTRY_LABELS)[number]>;
  private readonly rewrites: Counter<(typeof ENTRY_LABELS)[number]>;
  private readonly warnings: Counter<(typeof ENTRY_LABELS)[number]>;
  private readonly duration: SeriesHistogram<"server" | "method">;
  private readonly up: Gauge<"server">;
  private readonly down: Gauge<"server">;
  private readonly sessions: Gauge<"server">;
  private readonly failures: Counter<"server">;
  private readonly restarts: Counter<"server">;
  private readonly failuresSeen = new Map<string, number>();
  private healthSource: (() => UpstreamHealthSample) | undefined;
  /**
   * Every label set's tally, also by server → method → action → mime (label values are few and their strings
   * reused: no
   * key is built per entry).
   */
  private readonly tallies: EntryTally[] = [];
  private readonly talliesByLabel = new Map<string, Map<string, Map<string, Map<string, EntryTally>>>>();
  private readonly durationSeries = new Map<string, Map<string, HistogramSeries<"server" | "method">>>();

  constructor(options: ProxyMetricsOptions = {}) {
    const registers = [this.registry];
    // Reading any entry counter first adds what was tallied since the last read.
    const collect = (): void => this.flush();
    const entryCounter = (name: string, help: string) =>
      new Counter({ name, help, labelNames: ENTRY_LABELS, registers, collect });
    this.bytesIn = entryCounter(
      "mcp_normalizer_bytes_in_total",
      "UTF-8 bytes of resource entries' JSON as the upstream sent them",
    );
    this.bytesOut = entryCounter(
      "mcp_normalizer_bytes_out_total",
      "UTF-8 bytes of resource entries' JSON as forwarded to the host",
    );
    this.bytesSaved = entryCounter(
      "mcp_normalizer_bytes_saved_total",
      "Bytes removed by normalization (entries that shrank)",
    );
    this.bytesGrown = entryCounter(
      "mcp_normalizer_bytes_grown_total",
      "Bytes added by normalization (entries that grew, e.g. re-encoded to blob)",
    );
    this.entries = entryCounter(
      "mcp_normalizer_entries_total",
      "Resource entries seen by the engine, by action (none = unchanged)",
    );
    this.rewrites = entryCounter(
      "mcp_normalizer_rewrites_total",
      "Entries rewritten (changes applied; warnings and dry-run changes excluded)",
    );
    this.warnings = entryCounter(
      "mcp_normalizer_warnings_total",
      "Entries left unchanged with a warning (skip-*, warn-*)",
    );
    this.duration = new SeriesHistogram(
      "mcp_normalizer_normalize_duration_seconds",
      "Time spent in the normalization engine per message",
      NORMALIZE_SECONDS_BUCKETS,
      registers,
    );
    this.up = new Gauge({
      name: "mcp_normalizer_upstream_up",
      help: "1 when the upstream has live sessions and its last start succeeded",
      labelNames: ["server"],
      registers,
    });
    this.down = new Gauge({
      name: "mcp_normalizer_upstream_down",
      help: "1 when the upstream's last start or session failed",
      labelNames: ["server"],
      registers,
    });
    this.sessions = new Gauge({
      name: "mcp_normalizer_upstream_sessions",
      help: "Live host sessions (each with its own upstream connection)",
      labelNames: ["server"],
      registers,
    });
    this.failures = new Counter({
      name: "mcp_normalizer_upstream_failures_total",
      help: "Upstream connections that failed to start or ended unexpectedly",
      labelNames: ["server"],
      registers,
    });
    this.restarts = new Counter({
      name: "mcp_normalizer_upstream_restarts_total",
      help: "Upstream connections restarted by the proxy",
      labelNames: ["server"],
      registers,
    });
    for (const server of options.servers ?? []) {
      this.up.set({ server }, 0);
      this.down.set({ server }, 0);
      this.sessions.set({ server }, 0);
      this.failures.inc({ server }, 0);
      this.restarts.inc({ server }, 0);
    }
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Counts one normalized message (wire it to `onNormalized`). */
  observe(event: NormalizationEvent, server: string): void {
    const method = methodLabel(event.method);
    this.duration.observe(this.durationSeriesOf(server, method), event.ms / 1000);
    // An entry changed again (the fit layer after the engine: a chained record, on the same
    // path) is one entry, counted under its first change's labels at the size its last change
    // left it: what chained records add is gathered by path first, in one pass.
    const chainedDelta = event.changes.some((change) => change.chained === true) ? deltasByPath(event) : undefined;
    for (const change of event.changes) {
      const tally = this.tally(
        server,
        method,
        actionLabel(change.action),
        mimeLabel(change.mimeAfter, change.mimeBefore),
      );
      tally.pending = true;
      if (WARNING_ACTIONS.has(change.action as ChangeAction)) tally.warnings += 1;
      else if (change.applied && change.action !== "none") tally.rewrites += 1;
      if (change.chained === true) continue;
      // Never below nothing: a counter cannot go down.
      const out = Math.max(0, bytesSent(change) + (chainedDelta?.get(change.path) ?? 0));
      tally.entries += 1;
      tally.bytesIn += change.bytesBefore;
      tally.bytesOut += out;
      const saved = change.bytesBefore - out;
      if (saved > 0) tally.saved += saved;
      if (saved < 0) tally.grown += -saved;
    }
  }

  private durationSeriesOf(server: string, method: string): HistogramSeries<"server" | "method"> {
    let byMethod = this.durationSeries.get(server);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.durationSeries.set(server, byMethod);
    }
    let series = byMethod.get(method);
    if (series === undefined) {
      series = this.duration.createSeries({ server, method });
      byMethod.set(method, series);
    }
    return series;
  }

  private tally(server: string, method: string, action: string, mime: string): EntryTally {
    let byMethod = this.talliesByLabel.get(server);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.talliesByLabel.set(server, byMethod);
    }
    let byAction = byMethod.get(method);
    if (byAction === undefined) {
      byAction = new Map();
      byMethod.set(method, byAction);
    }
    let byMime = byAction.get(action);
    if (byMime === undefined) {
      byMime = new Map();
      byAction.set(action, byMime);
    }
    let tally = byMime.get(mime);
    if (tally === undefined) {
      tally = {
        labels: { server, method, action, mime },
        pending: false,
        entries: 0,
        bytesIn: 0,
        bytesOut: 0,
        saved: 0,
        grown: 0,
        warnings: 0,
        rewrites: 0,
      };
      byMime.set(mime, tally);
      this.tallies.push(tally);
    }
    return tally;
  }

  /** Adds the tallies to the counters (the same series and values as counting each entry there). */
  private flush(): void {
    for (const tally of this.tallies) {
      if (!tally.pending) continue;
      const { labels } = tally;
      this.entries.inc(labels, tally.entries);
      this.bytesIn.inc(labels, tally.bytesIn);
      this.bytesOut.inc(labels, tally.bytesOut);
      if (tally.saved > 0) this.bytesSaved.inc(labels, tally.saved);
      if (tally.grown > 0) this.bytesGrown.inc(labels, tally.grown);
      if (tally.warnings > 0) this.warnings.inc(labels, tally.warnings);
      if (tally.rewrites > 0) this.rewrites.inc(labels, tally.rewrites);
      tally.pending = false;
      tally.entries = tally.bytesIn = tally.bytesOut = tally.saved = tally.grown = tally.warnings = tally.rewrites = 0;
    }
  }

  /** The session manager (or reliability code) calls this when it restarts an upstream connection. */
  upstreamRestarted(server: string): void {
    this.restarts.inc({ server });
  }

  /** Where up/down/sessions/failures come from: sampled on every scrape (e.g. `() => sessions.healthReport()`). */
  sampleHealthFrom(source: () => UpstreamHealthSample): void {
    this.healthSource = source;
  }

  /** The `/metrics` document (Prometheus text exposition format). */
  async render(): Promise<MetricsDocument> {
    this.sampleHealth();
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private sampleHealth(): void {
    if (this.healthSource === undefined) return;
    for (const [server, health] of Object.entries(this.healthSource().servers)) {
      this.up.set({ server }, health.status === "up" ? 1 : 0);
      this.down.set({ server }, health.status === "down" ? 1 : 0);
      this.sessions.set({ server }, health.sessions);
      // The session manager keeps a running total; the counter follows it by its increments.
      const seen = this.failuresSeen.get(server) ?? 0;
      if (health.upstreamFailures > seen) this.failures.inc({ server }, health.upstreamFailures - seen);
      this.failuresSeen.set(server, Math.max(seen, health.upstreamFailures));
    }
  }
}

/** Path → what the chained records on it added to the size their entry went out at. */
function deltasByPath(event: NormalizationEvent): Map<string, number> {
  const deltas = new Map<string, number>();
  for (const change of event.changes)
    if (change.chained === true)
      deltas.set(change.path, (deltas.get(change.path) ?? 0) + bytesSent(change) - change.bytesBefore);
  return deltas;
}

/** What an entry's change sent on: its bytes after when it was made, else its bytes before (dryRun). */
function bytesSent(change: ChangeRecord): number {
  return change.applied && change.action !== "none" ? change.bytesAfter : change.bytesBefore;
}
