/**
 * A Prometheus histogram observed through series handles: an observation is a bucket search and
 * three additions. prom-client's `Histogram.observe(labels, value)` validates and hashes the
 * label object on every call, which was a measurable share of a small read through the proxy
 * (one observation per normalized message).
 *
 * It registers in a prom-client `Registry` as a metric of its own and renders exactly what
 * prom-client's `Histogram` renders for the same observations (test/observe/metrics.test.ts
 * compares the two): series in the order they were first observed, cumulative `_bucket` lines
 * (`le` first, then the series' labels), `+Inf`, `_sum`, `_count`.
 */
import type { Registry } from "prom-client";

export interface HistogramSeries<L extends string> {
  readonly labels: Readonly<Record<L, string>>;
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/** One exported value, in prom-client's shape (what `Registry.getMetricsAsString` formats). */
interface MetricValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
  exemplar?: null | undefined;
}

export class SeriesHistogram<L extends string> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly bounds: readonly number[];
  private series: Array<HistogramSeries<L>> = [];

  constructor(
    readonly name: string,
    readonly help: string,
    buckets: readonly number[],
    registers: readonly Registry[],
  ) {
    // prom-client sorts the bounds too.
    this.bounds = [...buckets].sort((a, b) => a - b);
    for (const registry of registers)
      registry.registerMetric(this as unknown as Parameters<Registry["registerMetric"]>[0]);
  }

  /** A new series; keep it and observe through it (prom-client keys series by label values: ask once per label set). */
  createSeries(labels: Readonly<Record<L, string>>): HistogramSeries<L> {
    const series: HistogramSeries<L> = {
      labels,
      counts: new Array<number>(this.bounds.length + 1).fill(0),
      sum: 0,
      count: 0,
    };
    return series;
  }

  observe(series: HistogramSeries<L>, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    // First observation: the series is exported from now on (as prom-client creates it on first observe).
    if (series.count === 0 && !this.series.includes(series)) this.series.push(series);
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    series.counts[i]! += 1;
    series.sum += value;
    series.count += 1;
  }

  /** What prom-client's registry renders as text. */
  async getForPromString(): Promise<{
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: MetricValue[];
  }> {
    const values: MetricValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const series of this.series) {
      const sharedLabels = series.labels as Record<string, string>;
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += series.counts[i]!;
        values.push({ labels: { le: bound }, sharedLabels, value: cumulative, metricName: bucketName, exemplar: null });
      });
      values.push({
        labels: { le: "+Inf" },
        sharedLabels,
        value: series.count,
        metricName: bucketName,
        exemplar: null,
      });
      values.push({ labels: {}, sharedLabels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** What prom-client's registry returns as JSON (labels merged, `le` first). */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ labels, sharedLabels, ...rest }) => ({
      ...rest,
      labels: { ...labels, ...sharedLabels },
    }));
    return data;
  }

  reset(): void {
    for (const series of this.series) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
    this.series = [];
  }
}
