import { describe, expect, it } from "vitest";
import { ReportAggregator, mimeKey } from "../../src/report/aggregate.js";
import type { EntryFact } from "../../src/report/model.js";
import { parseLogLine } from "../../src/report/parseLogLine.js";

function fact(overrides: Partial<EntryFact> = {}): EntryFact {
  const bytesBefore = overrides.bytesBefore ?? 100;
  const bytesAfter = overrides.bytesAfter ?? 75;
  return {
    ts: "2026-01-01T00:00:00.000Z",
    server: "a",
    method: "resources/read",
    uri: "file:///a.txt",
    action: "unwrap-blob",
    mimeBefore: "text/plain",
    mimeAfter: "text/plain",
    saved: bytesBefore - bytesAfter,
    ...overrides,
    bytesBefore,
    bytesAfter,
  };
}

describe("ReportAggregator", () => {
  it("an entry changed twice (a chained record after the first) is one entry: in once, out at its last size", () => {
    const agg = new ReportAggregator();
    agg.add(fact({ action: "fix-mime", uri: "x:/img", bytesBefore: 72010, bytesAfter: 72009 }));
    agg.add(fact({ action: "fit-image", uri: "x:/img", bytesBefore: 72009, bytesAfter: 34233, chained: true }));
    const model = agg.toModel({ kind: "log", source: {}, generatedAt: "now" });
    expect(model.totals).toMatchObject({ entries: 1, bytesBefore: 72010, bytesAfter: 34233, saved: 37777 });
    expect(model.totals.shareSaved).toBeCloseTo(37777 / 72010);
    expect(model.byUri).toMatchObject([
      { uri: "x:/img", entries: 1, bytesBefore: 72010, saved: 37777, actions: { "fix-mime": 1, "fit-image": 1 } },
    ]);
    expect(model.byServer).toMatchObject([{ entries: 1, bytesBefore: 72010, saved: 37777 }]);
    // By action: each action's own use of the entry.
    expect(model.byAction.map((r) => [r.key, r.entries, r.bytesBefore, r.saved])).toEqual([
      ["fit-image", 1, 72009, 37776],
      ["fix-mime", 1, 72010, 1],
    ]);
  });

  it("counts entries with no URI (a tool's blocks): in every total, in no URI row, said in the report", async () => {
    const agg = new ReportAggregator();
    agg.add(fact({ method: "tools/call", uri: null, action: "fix-mime", bytesBefore: 72010, bytesAfter: 72009 }));
    agg.add(
      fact({
        method: "tools/call",
        uri: null,
        action: "fit-image",
        bytesBefore: 72009,
        bytesAfter: 34233,
        chained: true,
      }),
    );
    const model = agg.toModel({ kind: "log", source: {}, generatedAt: "now" });
    expect(model.totals).toMatchObject({ entries: 1, saved: 37777 });
    expect(model.byUri).toEqual([]);
    expect(model.uriTable).toMatchObject({ untrackedEntries: 0, entriesWithoutUri: 1 });
    const { renderMarkdown } = await import("../../src/report/renderMarkdown.js");
    expect(renderMarkdown(model)).toContain("1 entry has no URI (a tool's blocks): in every total, in no row here.");
  });

  it("a chained fact continues only the entry before it (same server and URI): files under the type it went out with; a stray one is an entry", () => {
    const agg = new ReportAggregator();
    agg.add(
      fact({
        action: "fix-mime",
        uri: "x:/img",
        mimeBefore: "image/jpeg",
        mimeAfter: "image/png",
        bytesBefore: 1000,
        bytesAfter: 999,
      }),
    );
    agg.add(
      fact({
        action: "fit-image",
        uri: "x:/img",
        mimeBefore: "image/png",
        mimeAfter: "image/webp",
        bytesBefore: 999,
        bytesAfter: 100,
        chained: true,
      }),
    );
    // A hostile or garbled log: "chained" after another URI's entry.
    agg.add(fact({ action: "fit-image", uri: "x:/other", bytesBefore: 50, bytesAfter: 40, chained: true }));
    const model = agg.toModel({ kind: "log", source: {}, generatedAt: "now" });
    expect(model.totals).toMatchObject({ entries: 2, bytesBefore: 1050, bytesAfter: 140, saved: 910 });
    // The entry went out as image/webp: its whole row moved there, none left under image/png.
    expect(model.byMime.map((r) => [r.key, r.entries, r.bytesBefore, r.bytesAfter, r.actions])).toEqual([
      ["image/webp", 1, 1000, 100, { "fix-mime": 1, "fit-image": 1 }],
      ["text/plain", 1, 50, 40, { "fit-image": 1 }],
    ]);
    for (const row of [...model.byMime, ...model.byUri, ...model.byServer])
      expect(row.bytesAfter).toBeGreaterThanOrEqual(0);
  });

  it("an entry warned about and then changed (a chained fit) counts as changed, not warned, everywhere", () => {
    const agg = new ReportAggregator();
    agg.add(fact({ action: "warn-media-mismatch", uri: "x:/img", bytesBefore: 5000, bytesAfter: 5000 }));
    agg.add(fact({ action: "fit-image", uri: "x:/img", bytesBefore: 5000, bytesAfter: 900, chained: true }));
    agg.add(fact({ action: "warn-media-mismatch", uri: "x:/other", bytesBefore: 10, bytesAfter: 10 }));
    const model = agg.toModel({ kind: "log", source: {}, generatedAt: "now" });
    expect(model.totals).toMatchObject({ entries: 2, changed: 1, warned: 1, saved: 4100 });
    expect(model.byServer).toMatchObject([{ entries: 2, changed: 1, warned: 1 }]);
    expect(model.byUri.find((r) => r.uri === "x:/img")).toMatchObject({ entries: 1, changed: 1, warned: 0 });
  });

  it("an entry warned about, then changed to another type, moves to that type's row as a changed entry", () => {
    const agg = new ReportAggregator();
    const image = { uri: "x:/img", mimeBefore: "image/png", mimeAfter: "image/png" };
    agg.add(fact({ ...image, action: "warn-image-too-many-pixels", bytesBefore: 5000, bytesAfter: 5000 }));
    agg.add(
      fact({
        ...image,
        action: "fit-image",
        mimeAfter: "image/jpeg",
        bytesBefore: 5000,
        bytesAfter: 900,
        chained: true,
      }),
    );
    const model = agg.toModel({ kind: "log", source: {}, generatedAt: "now" });
    expect(model.byMime).toMatchObject([
      { key: "image/jpeg", entries: 1, changed: 1, warned: 0, bytesBefore: 5000, bytesAfter: 900, saved: 4100 },
    ]);
    expect(model.byMime).toHaveLength(1);
  });

  it("reads chained from a log line", () => {
    const line = JSON.stringify({ ...fact({ chained: true }), ts: "2026-01-01T00:00:00.000Z" });
    expect(parseLogLine(line)).toMatchObject({ kind: "record", fact: { chained: true } });
  });

  it("totals and every breakdown are the exact sums of the facts", () => {
    const facts = [
      fact(),
      fact({
        server: "b",
        uri: "file:///b.md",
        mimeAfter: "text/markdown; charset=utf-8",
        bytesBefore: 400,
        bytesAfter: 300,
      }),
      fact({
        action: "reencode-blob",
        uri: "file:///c.bin",
        mimeAfter: "application/octet-stream",
        bytesBefore: 50,
        bytesAfter: 70,
      }),
      fact({ action: "skip-invalid-base64", uri: "file:///d", bytesBefore: 10, bytesAfter: 10 }),
      fact({ action: "fix-mime", uri: "file:///a.txt", bytesBefore: 20, bytesAfter: 21, applied: false }),
    ];
    const agg = new ReportAggregator();
    for (const f of facts) agg.add(f);
    const model = agg.toModel({ kind: "log", source: { files: ["x"] }, generatedAt: "now" });
    const sum = (key: "bytesBefore" | "bytesAfter" | "saved") => facts.reduce((s, f) => s + f[key], 0);
    expect(model.totals).toMatchObject({
      entries: 5,
      changed: 4,
      warned: 1,
      notApplied: 1,
      bytesBefore: sum("bytesBefore"),
      bytesAfter: sum("bytesAfter"),
      saved: sum("saved"),
    });
    expect(model.totals.shareSaved).toBeCloseTo(sum("saved") / sum("bytesBefore"));
    for (const breakdown of [model.byServer, model.byMime, model.byAction, model.byMethod]) {
      expect(breakdown.reduce((s, r) => s + r.saved, 0)).toBe(sum("saved"));
      expect(breakdown.reduce((s, r) => s + r.entries, 0)).toBe(5);
    }
    expect(model.byServer.map((r) => [r.key, r.saved])).toEqual([
      ["b", 100],
      ["a", 4],
    ]);
    // Grouped by essence, parameters dropped.
    expect(model.byMime.map((r) => r.key).sort()).toEqual(["application/octet-stream", "text/markdown", "text/plain"]);
    const a = model.byUri.find((r) => r.uri === "file:///a.txt");
    expect(a).toMatchObject({ entries: 2, bytesBefore: 120, saved: 24, actions: { "unwrap-blob": 1, "fix-mime": 1 } });
    expect(model.topOffenders.map((r) => r.uri)).toEqual(["file:///b.md", "file:///a.txt"]);
    expect(model.topOffenders[0]!.shareOfSaved).toBeCloseTo(100 / sum("saved"));
    expect(model.timeRange).toEqual({ from: "2026-01-01T00:00:00.000Z", to: "2026-01-01T00:00:00.000Z" });
  });

  it("bounds the URI table but keeps totals exact, and counts the entries it could not keep", () => {
    const agg = new ReportAggregator({ maxUris: 10, topOffenders: 5 });
    let saved = 0;
    for (let i = 0; i < 1000; i++) {
      const f = fact({ uri: `u://${i}`, bytesBefore: 1000 + i, bytesAfter: 1000 });
      saved += f.saved;
      agg.add(f);
    }
    const model = agg.toModel({ kind: "log", source: {}, generatedAt: "now" });
    expect(model.totals.saved).toBe(saved);
    // At most maxUris rows in the model (the aggregator prunes in batches, up to 1.25× that, as it goes).
    expect(model.byUri.length).toBe(10);
    expect(model.byUri.map((r) => r.uri).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `u://${990 + i}`).sort());
    expect(model.uriTable.untrackedEntries).toBe(1000 - model.byUri.reduce((s, r) => s + r.entries, 0));
    // The rows kept are the heaviest: the top offender is the last, biggest one.
    expect(model.topOffenders.map((r) => r.uri)).toEqual(["u://999", "u://998", "u://997", "u://996", "u://995"]);
  });

  it("keeps a long URI or mime type as its start, length and hash: distinct URIs stay distinct rows, memory small", () => {
    const agg = new ReportAggregator();
    const long = (i: number): string => `x://${"a".repeat(200_000)}${i}`;
    for (let i = 0; i < 50; i++) agg.add(fact({ uri: long(i), mimeAfter: `text/${"b".repeat(200_000)}` }));
    agg.add(fact({ uri: long(0) }));
    const model = agg.toModel({ kind: "log", source: {}, generatedAt: "now" });
    expect(model.byUri.length).toBe(50);
    for (const row of model.byUri) expect(row.uri.length).toBeLessThan(1100);
    expect(model.byUri.find((r) => r.entries === 2)?.uri).toMatch(
      /^x:\/\/a{1020}…\[200005 chars, fnv1a [0-9a-f]{8}\]$/,
    );
    for (const row of model.byMime) expect(row.key.length).toBeLessThan(1100);
  });

  it("folds breakdown keys past the limit into (other)", () => {
    const agg = new ReportAggregator({ maxGroupKeys: 3 });
    for (let i = 0; i < 10; i++) agg.add(fact({ server: `s${i}` }));
    const model = agg.toModel({ kind: "log", source: {}, generatedAt: "now" });
    expect(model.byServer.map((r) => r.key).sort()).toEqual(["(other)", "s0", "s1", "s2"]);
    expect(model.byServer.find((r) => r.key === "(other)")!.entries).toBe(7);
  });

  it("time range spans the earliest and latest ts, in any order", () => {
    const agg = new ReportAggregator();
    agg.add(fact({ ts: "2026-03-01T00:00:00.000Z" }));
    agg.add(fact({ ts: "2026-01-01T10:00:00.000Z" }));
    agg.add(fact({ ts: "2026-02-01T00:00:00+02:00" }));
    expect(agg.toModel({ kind: "log", source: {}, generatedAt: "now" }).timeRange).toEqual({
      from: "2026-01-01T10:00:00.000Z",
      to: "2026-03-01T00:00:00.000Z",
    });
  });

  it("mimeKey: the type it ended with, else the one it came with", () => {
    expect(mimeKey({ mimeBefore: null, mimeAfter: null })).toBe("(none)");
    expect(mimeKey({ mimeBefore: "TEXT/Plain; charset=latin1", mimeAfter: null })).toBe("text/plain");
    expect(mimeKey({ mimeBefore: "text/plain", mimeAfter: "image/png" })).toBe("image/png");
    expect(mimeKey({ mimeBefore: "nonsense", mimeAfter: null })).toBe("(invalid)");
  });
});

describe("parseLogLine", () => {
  const good = {
    ts: "2026-01-01T00:00:00.000Z",
    server: "s",
    session: "s-1",
    method: "resources/read",
    uri: "x:/a",
    action: "unwrap-blob",
    mimeBefore: "text/plain",
    mimeAfter: "text/plain",
    bytesBefore: 10,
    bytesAfter: 7,
    saved: 3,
    ms: 0.1,
  };

  it("reads a normalization log line into a fact", () => {
    const parsed = parseLogLine(JSON.stringify(good));
    expect(parsed).toEqual({
      kind: "record",
      fact: {
        ts: good.ts,
        server: "s",
        method: "resources/read",
        uri: "x:/a",
        action: "unwrap-blob",
        mimeBefore: "text/plain",
        mimeAfter: "text/plain",
        bytesBefore: 10,
        bytesAfter: 7,
        saved: 3,
      },
    });
  });

  it("operational lines are ignored, broken ones malformed, blank ones blank", () => {
    expect(parseLogLine(JSON.stringify({ level: "info", msg: "listening" }))).toEqual({ kind: "ignored" });
    expect(parseLogLine("   ")).toEqual({ kind: "blank" });
    expect(parseLogLine(`{"ts":"2026-01-01","action":"unwrap-bl`)).toMatchObject({
      kind: "malformed",
      error: expect.stringContaining("not JSON"),
    });
    expect(parseLogLine("[1,2]")).toMatchObject({ kind: "malformed" });
    expect(parseLogLine(JSON.stringify({ ...good, bytesBefore: "10" }))).toMatchObject({
      kind: "malformed",
      error: expect.stringContaining("bytesBefore"),
    });
    expect(parseLogLine(JSON.stringify({ ...good, saved: 99 }))).toMatchObject({
      kind: "malformed",
      error: expect.stringContaining("saved"),
    });
    expect(parseLogLine(JSON.stringify({ ...good, uri: 5 }))).toMatchObject({
      kind: "malformed",
      error: expect.stringContaining("uri"),
    });
    expect(parseLogLine(JSON.stringify({ ...good, action: "" }))).toMatchObject({ kind: "malformed" });
  });

  it("a byte count must be a whole number from 0 to 2^53 − 1: a fraction, a negative or a huge one is malformed", () => {
    for (const [bytesBefore, bytesAfter] of [
      [10.5, 7.5],
      [1e308, 0],
      [2 ** 53 + 2, 0],
      [10, -1],
    ]) {
      const line = JSON.stringify({ ...good, bytesBefore, bytesAfter, saved: bytesBefore! - bytesAfter! });
      expect(parseLogLine(line)).toMatchObject({
        kind: "malformed",
        error: expect.stringMatching(/^field bytes(Before|After) is not a byte count/),
      });
    }
    const largest = JSON.stringify({ ...good, bytesBefore: Number.MAX_SAFE_INTEGER, bytesAfter: 0, saved: undefined });
    expect(parseLogLine(largest)).toMatchObject({ kind: "record" });
  });
});
