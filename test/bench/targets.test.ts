/**
 * The speed targets are judged from one run's own figures: overhead over direct against the best
 * peer's, stdio against the byte relay, the burst against direct, start-up paired ratios.
 * Synthetic figures in, verdicts out (timings themselves are the benchmark's business).
 */
import { describe, expect, it } from "vitest";
// @ts-expect-error plain JavaScript module of the benchmark
import { addRatios, evaluateTargets } from "../../bench/suite/analysis.mjs";

type Target = { id: string; value: number | null; met: boolean | null; floor?: number | null };
const row = (path: string, medianMs: number) => ({ path, status: "ok", medianMs, calls: 100, proxy: null });
const calls = (id: string, medians: Record<string, number>) =>
  addRatios({ id, kind: "calls", results: Object.entries(medians).map(([p, ms]) => row(p, ms)) });
const byId = (targets: Target[]) => new Map(targets.map((t) => [t.id, t]));

describe("speed targets", () => {
  it("small reads: the proxy's overhead over direct against the best peer's of the same kind; stdio against the relay", () => {
    const w = calls("read-text-1k", {
      direct: 0.3,
      "mcpn-ws": 0.4,
      "sg-ws": 0.6,
      "mcpn-mcp": 2.3,
      "sg-mcp": 3.3,
      "mcpp-mcp": 4.3,
      "mcpn-stdio": 0.5,
      "relay-stdio": 0.4,
    });
    const t = byId(evaluateTargets([w]) as Target[]);
    // (0.4 − 0.3) / (0.6 − 0.3) and (2.3 − 0.3) / (3.3 − 0.3): the faster peer is the baseline.
    expect(t.get("read-text-1k/mcpn-ws/overhead-vs-peer")).toMatchObject({ value: 0.333, met: true });
    expect(t.get("read-text-1k/mcpn-mcp/overhead-vs-peer")).toMatchObject({ value: 0.667, met: false });
    expect(t.get("read-text-1k/mcpn-sse/overhead-vs-peer")?.met).toBeNull();
    expect(t.get("read-text-1k/mcpn-stdio/vs-relay")).toMatchObject({ value: 1.25, met: false });
    // No transport relay ran: no floor beside the figure.
    expect(t.get("read-text-1k/mcpn-ws/overhead-vs-peer")?.floor).toBeNull();
  });

  it("small reads: the transport's byte relay gets the same figure, beside the target (not judged)", () => {
    const w = calls("read-blob-76", { direct: 0.2, "mcpn-ws": 0.5, "relay-ws": 0.4, "sg-ws": 0.6 });
    const t = byId(evaluateTargets([w]) as Target[]);
    // (0.5 − 0.2) / (0.6 − 0.2) for the proxy, (0.4 − 0.2) / (0.6 − 0.2) for the relay; the relay
    // is a reference, never the baseline peer.
    expect(t.get("read-blob-76/mcpn-ws/overhead-vs-peer")).toMatchObject({
      value: 0.75,
      floor: 0.5,
      baseline: "sg-ws",
      met: false,
    });
  });

  it("burst: p99 and throughput against direct, errors counted; a proxy run that failed misses", () => {
    const figures = (p99Ms: number, readsPerS: number, errors = 0) => ({
      p99Ms,
      readsPerS,
      errors,
      firstError: errors ? "boom" : null,
    });
    const burst = {
      id: "burst",
      kind: "burst",
      runs: [
        {
          sessions: 100,
          direct: figures(400, 1000),
          mcp: { ...figures(500, 950), p99VsDirect: 1.25, throughputVsDirect: 0.95 },
          ws: { ...figures(700, 850, 2), p99VsDirect: 1.75, throughputVsDirect: 0.85 },
        },
        {
          sessions: 1000,
          direct: figures(2000, 900),
          mcp: {
            p99Ms: null,
            readsPerS: null,
            errors: 1,
            firstError: "no answer",
            p99VsDirect: null,
            throughputVsDirect: null,
          },
          ws: { ...figures(2000, 900), p99VsDirect: 1, throughputVsDirect: 1 },
        },
      ],
    };
    const t = byId(evaluateTargets([burst]) as Target[]);
    expect(t.get("burst/100/mcpn-mcp/p99")?.met).toBe(true);
    expect(t.get("burst/100/mcpn-mcp/throughput")?.met).toBe(true);
    expect(t.get("burst/100/mcpn-ws/p99")?.met).toBe(false);
    expect(t.get("burst/100/mcpn-ws/throughput")?.met).toBe(false);
    expect(t.get("burst/100/mcpn-ws/errors")).toMatchObject({ value: 2, met: false });
    expect(t.get("burst/1000/mcpn-mcp/p99")?.met).toBe(false);
    expect(t.get("burst/1000/mcpn-ws/p99")?.met).toBe(true);
  });

  it("start-up: paired medians against their limits; a failed measurement misses", () => {
    const startup = {
      id: "startup",
      kind: "startup",
      help: { ratioMedian: 1.4, aMedianMs: 100, bMedianMs: 70 },
      initialize: { error: "no answer" },
    };
    const t = byId(evaluateTargets([startup]) as Target[]);
    expect(t.get("startup/help")).toMatchObject({ value: 1.4, met: true });
    expect(t.get("startup/initialize")).toMatchObject({ value: null, met: false });
  });

  it("50 MiB: growth is peak minus what the proxy held before, against the upstream message", () => {
    const mib = 1024 * 1024;
    const big = {
      id: "read-blob-50m",
      kind: "big",
      contentBytes: 50 * mib,
      results: [
        {
          path: "mcpn-stdio",
          status: "ok",
          medianMs: 1000,
          calls: 1,
          proxy: { cpuSeconds: 1.6, peakRssBytes: 300 * mib, rssBeforeBytes: 60 * mib },
        },
      ],
    };
    const t = byId(evaluateTargets([addRatios(big)]) as Target[]);
    expect(t.get("read-blob-50m/mcpn-stdio/cpu")).toMatchObject({ value: 1.6, met: false });
    const growth = t.get("read-blob-50m/mcpn-stdio/rss-growth")!;
    expect(growth.value).toBeCloseTo(240 / ((Math.ceil((50 * mib) / 3) * 4) / mib), 1);
    expect(growth.met).toBe(true);
  });
});
