import { describe, expect, it } from "vitest";
import type { ChangeRecord } from "../../src/normalize/change.js";
import { mimeLabel, methodLabel, actionLabel } from "../../src/observe/metricLabels.js";
import { ProxyMetrics } from "../../src/observe/metrics.js";
import { series } from "./promText.js";

function change(overrides: Partial<ChangeRecord>): ChangeRecord {
  const bytesBefore = overrides.bytesBefore ?? 100;
  const bytesAfter = overrides.bytesAfter ?? 80;
  return { action: "unwrap-blob", path: "contents[0]", uri: "x:/a", mimeBefore: "text/plain", mimeAfter: "text/plain", reason: "", applied: true, ...overrides, bytesBefore, bytesAfter, saved: bytesBefore - bytesAfter };
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
    expect(series(text, "mcp_normalizer_bytes_saved_total", { server: "docs", method: "resources/read", action: "unwrap-blob", mime: "text/plain" })).toBe(20);
    expect(series(text, "mcp_normalizer_entries_total")).toBe(5);
    expect(series(text, "mcp_normalizer_rewrites_total")).toBe(2);
    expect(series(text, "mcp_normalizer_warnings_total", { action: "skip-invalid-base64" })).toBe(1);
    expect(series(text, "mcp_normalizer_normalize_duration_seconds_count", { server: "docs" })).toBe(1);
    expect(series(text, "mcp_normalizer_normalize_duration_seconds_sum", { server: "docs" })).toBeCloseTo(0.002);
    expect(text).toContain("# TYPE mcp_normalizer_bytes_saved_total counter");
  });

  it("each instance has its own registry; default metrics are there unless turned off", async () => {
    const a = new ProxyMetrics();
    const b = new ProxyMetrics();
    a.observe({ method: "resources/read", id: 1, ms: 1, changes: [change({})] }, "s");
    expect(series((await b.render()).body, "mcp_normalizer_bytes_saved_total")).toBe(0);
    expect(series((await a.render()).body, "mcp_normalizer_bytes_saved_total")).toBe(20);
    expect((await a.render()).body).toContain("process_cpu_user_seconds_total");
    expect((await new ProxyMetrics({ defaultMetrics: false }).render()).body).not.toContain("process_cpu_user_seconds_total");
    expect((await a.render()).contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it("upstream gauges are sampled from the health source at scrape time; failures follow its total; restarts are counted", async () => {
    const m = new ProxyMetrics({ defaultMetrics: false, servers: ["a", "b"] });
    let health = { servers: { a: { status: "up" as const, sessions: 2, upstreamFailures: 0 }, b: { status: "idle" as const, sessions: 0, upstreamFailures: 0 } } };
    m.sampleHealthFrom(() => health);
    let text = (await m.render()).body;
    expect(series(text, "mcp_normalizer_upstream_up", { server: "a" })).toBe(1);
    expect(series(text, "mcp_normalizer_upstream_up", { server: "b" })).toBe(0);
    expect(series(text, "mcp_normalizer_upstream_sessions", { server: "a" })).toBe(2);
    health = { servers: { a: { status: "up", sessions: 1, upstreamFailures: 0 }, b: { status: "down" as never, sessions: 0, upstreamFailures: 3 } } };
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
  });
});
