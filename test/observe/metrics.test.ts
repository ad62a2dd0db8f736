import { describe, expect, it } from "vitest";
import type { ChangeRecord } from "../../src/normalize/change.js";
import { CHANGE_ACTIONS } from "../../src/normalize/change.js";
import { mimeLabel, methodLabel, actionLabel } from "../../src/observe/metricLabels.js";
import { Histogram, Registry } from "prom-client";
import { NORMALIZE_SECONDS_BUCKETS, ProxyMetrics } from "../../src/observe/metrics.js";
import { SeriesHistogram } from "../../src/observe/seriesHistogram.js";
import { series } from "./promText.js";

function change(overrides: Partial<ChangeRecord>): ChangeRecord {
  const bytesBefore = overrides.bytesBefore ?? 100;
  const bytesAfter = overrides.bytesAfter ?? 80;
  return {
    action: "unwrap-blob",
    path: "contents[0]",
    uri: "x:/a",
    mimeBefore: "text/plain",
    mimeAfter: "text/plain",
    reason: "",
    applied: true,
    ...overrides,
    bytesBefore,
    bytesAfter,
    saved: bytesBefore - bytesAfter,
  };
}

/** A fresh registry that has observed one tools/call with `changes` for server "fx". */
function observedOnce(changes: ChangeRecord[]): ProxyMetrics {
  const m = new ProxyMetrics({ defaultMetrics: false });
  m.observe({ method: "tools/call", id: 1, ms: 1, changes }, "fx");
  return m;
}

describe("ProxyMetrics", () => {
  it("counts bytes in/out/saved/grown, entries, rewrites, warnings and time per message", async () => {
    const m = new ProxyMetrics({ defaultMetrics: false });
    m.observe(
      {
        method: "resources/read",
        id: 1,
        ms: 2,
        changes: [
          change({}),
          change({ action: "reencode-blob", mimeAfter: "application/octet-stream", bytesBefore: 50, bytesAfter: 60 }),
          change({ action: "none", bytesBefore: 30, bytesAfter: 30 }),
          change({ action: "skip-invalid-base64", bytesBefore: 10, bytesAfter: 10 }),
          change({ action: "fix-mime", mimeAfter: "image/png", bytesBefore: 40, bytesAfter: 39, applied: false }),
        ],
      },
      "docs",
    );
    const text = (await m.render()).body;
    expect(series(text, "mcp_normalizer_bytes_in_total")).toBe(230);
    // dryRun: the fix-mime went out unchanged, so 40 bytes out and nothing saved for it.
    expect(series(text, "mcp_normalizer_bytes_out_total")).toBe(80 + 60 + 30 + 10 + 40);
    expect(series(text, "mcp_normalizer_bytes_saved_total")).toBe(20);
    expect(series(text, "mcp_normalizer_bytes_grown_total")).toBe(10);
    expect(
      series(text, "mcp_normalizer_bytes_saved_total", {
        server: "docs",
        method: "resources/read",
        action: "unwrap-blob",
        mime: "text/plain",
      }),
    ).toBe(20);
    expect(series(text, "mcp_normalizer_entries_total")).toBe(5);
    expect(series(text, "mcp_normalizer_rewrites_total")).toBe(2);
    expect(series(text, "mcp_normalizer_warnings_total", { action: "skip-invalid-base64" })).toBe(1);
    expect(series(text, "mcp_normalizer_normalize_duration_seconds_count", { server: "docs" })).toBe(1);
    expect(series(text, "mcp_normalizer_normalize_duration_seconds_sum", { server: "docs" })).toBeCloseTo(0.002);
    expect(text).toContain("# TYPE mcp_normalizer_bytes_saved_total counter");
  });

  it("an entry changed twice (engine, then fit: a chained record) is one entry, in once, out at its last size", async () => {
    const m = observedOnce([
      change({ action: "fix-mime", path: "content[0]", bytesBefore: 72010, bytesAfter: 72009 }),
      change({ action: "fit-image", path: "content[0]", bytesBefore: 72009, bytesAfter: 34233, chained: true }),
      change({ action: "unwrap-blob", path: "content[1].resource", bytesBefore: 933, bytesAfter: 900 }),
    ]);
    const text = (await m.render()).body;
    expect(series(text, "mcp_normalizer_entries_total")).toBe(2);
    expect(series(text, "mcp_normalizer_bytes_in_total")).toBe(72010 + 933);
    expect(series(text, "mcp_normalizer_bytes_out_total")).toBe(34233 + 900);
    expect(series(text, "mcp_normalizer_bytes_saved_total")).toBe(72010 - 34233 + 933 - 900);
    // Counted under the first change's labels; every change is a rewrite under its own.
    expect(series(text, "mcp_normalizer_entries_total", { action: "fit-image" })).toBe(0);
    expect(series(text, "mcp_normalizer_rewrites_total", { action: "fit-image" })).toBe(1);
    expect(series(text, "mcp_normalizer_rewrites_total")).toBe(3);
  });

  it("never counts below nothing, whatever chained records say: /metrics keeps rendering", async () => {
    const m = observedOnce([
      change({ action: "unwrap-blob", path: "content[0]", bytesBefore: 91, bytesAfter: 89 }),
      change({ action: "inline-resource", path: "content[0]", bytesBefore: 120, bytesAfter: 27, chained: true }),
    ]);
    for (let scrape = 0; scrape < 2; scrape++) {
      const text = (await m.render()).body;
      expect(series(text, "mcp_normalizer_bytes_out_total")).toBe(0);
      expect(series(text, "mcp_normalizer_entries_total")).toBe(1);
      expect(series(text, "mcp_normalizer_bytes_in_total")).toBe(91);
    }
  });

  it("counts between scrapes add up: every entry once, whichever scrape reads it; series appear as they did per entry", async () => {
    const m = new ProxyMetrics({ defaultMetrics: false });
    const event = (changes: ChangeRecord[]) => ({ method: "resources/read", id: 1, ms: 1, changes });
    m.observe(event([change({ action: "none", bytesBefore: 0, bytesAfter: 0 })]), "s");
    let text = (await m.render()).body;
    // An unchanged entry of 0 bytes: its entries/bytes series exist (at 0 bytes), no saved/grown/rewrite series.
    expect(text).toMatch(/^mcp_normalizer_bytes_in_total\{[^}]*action="none"[^}]*\} 0$/m);
    expect(series(text, "mcp_normalizer_entries_total", { action: "none" })).toBe(1);
    expect(text).not.toMatch(/^mcp_normalizer_(bytes_saved|bytes_grown|rewrites|warnings)_total\{/m);
    m.observe(event([change({}), change({ mimeAfter: "text/plain; charset=utf-8" })]), "s");
    m.observe(event([change({ action: "none", bytesBefore: 30, bytesAfter: 30 })]), "s");
    text = (await m.render()).body;
    expect(series(text, "mcp_normalizer_entries_total")).toBe(4);
    expect(series(text, "mcp_normalizer_entries_total", { action: "unwrap-blob", mime: "text/plain" })).toBe(2);
    expect(series(text, "mcp_normalizer_bytes_in_total", { action: "none" })).toBe(30);
    expect(series(text, "mcp_normalizer_bytes_saved_total")).toBe(40);
    expect(series(text, "mcp_normalizer_rewrites_total")).toBe(2);
    // A scrape with nothing new changes nothing.
    expect((await m.render()).body).toBe(text);
    // The registry read directly (not through render) sees the counts too.
    m.observe(event([change({})]), "s");
    expect(series(await m.registry.metrics(), "mcp_normalizer_entries_total")).toBe(5);
  });

  it("the duration histogram renders exactly what prom-client's Histogram renders for the same observations (text and JSON)", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const name = "mcp_normalizer_normalize_duration_seconds";
    const help = "Time spent \\ in the engine\nper message";
    const fast = new SeriesHistogram<"server" | "method">(name, help, NORMALIZE_SECONDS_BUCKETS, [ours]);
    const reference = new Histogram({
      name,
      help,
      labelNames: ["server", "method"],
      buckets: [...NORMALIZE_SECONDS_BUCKETS],
      registers: [theirs],
    });
    expect(await ours.metrics()).toBe(await theirs.metrics());
    const a = fast.createSeries({ server: "docs", method: "resources/read" });
    const b = fast.createSeries({ server: 'we"ird\\', method: "tools/call" });
    const unused = fast.createSeries({ server: "docs", method: "prompts/get" });
    // Bounds, values between them, 0, above the last bound, and sums that are not exact in binary.
    const values = [0, 0.0001, 0.00010001, 0.1, 0.3, 0.7, 2.5, 5, 5.0001, 17, 0.00003, 0.001, 0.0025];
    values.forEach((value, i) => {
      const [series, labels] =
        i % 3 === 2
          ? [b, { server: 'we"ird\\', method: "tools/call" }]
          : [a, { server: "docs", method: "resources/read" }];
      fast.observe(series, value);
      reference.observe(labels, value);
    });
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
    expect(unused.count).toBe(0);
    expect(() => fast.observe(a, Number.NaN)).toThrow(TypeError);
    ours.resetMetrics();
    theirs.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    fast.observe(b, 0.2);
    reference.observe({ server: 'we"ird\\', method: "tools/call" }, 0.2);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it("each instance has its own registry; default metrics are there unless turned off", async () => {
    const a = new ProxyMetrics();
    const b = new ProxyMetrics();
    a.observe({ method: "resources/read", id: 1, ms: 1, changes: [change({})] }, "s");
    expect(series((await b.render()).body, "mcp_normalizer_bytes_saved_total")).toBe(0);
    expect(series((await a.render()).body, "mcp_normalizer_bytes_saved_total")).toBe(20);
    expect((await a.render()).body).toContain("process_cpu_user_seconds_total");
    expect((await new ProxyMetrics({ defaultMetrics: false }).render()).body).not.toContain(
      "process_cpu_user_seconds_total",
    );
    expect((await a.render()).contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it("upstream gauges are sampled from the health source at scrape time; failures follow its total; restarts are counted", async () => {
    const m = new ProxyMetrics({ defaultMetrics: false, servers: ["a", "b"] });
    let health = {
      servers: {
        a: { status: "up" as const, sessions: 2, upstreamFailures: 0 },
        b: { status: "idle" as const, sessions: 0, upstreamFailures: 0 },
      },
    };
    m.sampleHealthFrom(() => health);
    let text = (await m.render()).body;
    expect(series(text, "mcp_normalizer_upstream_up", { server: "a" })).toBe(1);
    expect(series(text, "mcp_normalizer_upstream_up", { server: "b" })).toBe(0);
    expect(series(text, "mcp_normalizer_upstream_sessions", { server: "a" })).toBe(2);
    health = {
      servers: {
        a: { status: "up", sessions: 1, upstreamFailures: 0 },
        b: { status: "down" as never, sessions: 0, upstreamFailures: 3 },
      },
    };
    m.upstreamRestarted("b");
    text = (await m.render()).body;
    expect(series(text, "mcp_normalizer_upstream_down", { server: "b" })).toBe(1);
    expect(series(text, "mcp_normalizer_upstream_failures_total", { server: "b" })).toBe(3);
    expect(series(text, "mcp_normalizer_upstream_restarts_total", { server: "b" })).toBe(1);
    // A second scrape with the same total does not count the failures again.
    text = (await m.render()).body;
    expect(series(text, "mcp_normalizer_upstream_failures_total", { server: "b" })).toBe(3);
  });

  it("labels have bounded cardinality: unknown types, methods and actions fold into other", () => {
    expect(mimeLabel("text/markdown; variant=GFM", null)).toBe("text/markdown");
    expect(mimeLabel(null, "IMAGE/PNG")).toBe("image/png");
    expect(mimeLabel("application/x-made-up-by-a-server-12345", null)).toBe("other");
    expect(mimeLabel("not a type", null)).toBe("other");
    expect(mimeLabel(null, null)).toBe("none");
    expect(methodLabel("resources/read")).toBe("resources/read");
    expect(methodLabel("vendor/anything")).toBe("other");
    expect(actionLabel("unwrap-blob")).toBe("unwrap-blob");
    expect(actionLabel("future-action")).toBe("other");
    // Every action the engine and the fit layer can record is its own label value.
    expect(CHANGE_ACTIONS.length).toBe(20);
    for (const action of CHANGE_ACTIONS) expect(actionLabel(action)).toBe(action);
  });
});
