import { escapeHtml } from "../../src/report/escapeHtml.js";
import { describe, expect, it } from "vitest";
import { ReportAggregator } from "../../src/report/aggregate.js";
import { formatBytes, formatCount, formatShare } from "../../src/report/format.js";
import type { EntryFact, ReportModel } from "../../src/report/model.js";
import { parseReportFormat, renderReport } from "../../src/report/render.js";
import { cell, code } from "../../src/report/markdownTable.js";

const hostileUri = `file:///a|b<script>alert("x")</script>.txt`;

function model(kind: "audit" | "log" = "log"): ReportModel {
  const agg = new ReportAggregator();
  const facts: EntryFact[] = [
    {
      ts: "2026-01-01T00:00:00.000Z",
      server: "docs",
      method: "resources/read",
      uri: hostileUri,
      action: "unwrap-blob",
      mimeBefore: "text/plain",
      mimeAfter: "text/plain",
      bytesBefore: 4000,
      bytesAfter: 3000,
      saved: 1000,
    },
    {
      ts: "2026-01-02T00:00:00.000Z",
      server: "img",
      method: "tools/call",
      uri: "file:///p.png",
      action: "fix-mime",
      mimeBefore: "text/plain",
      mimeAfter: "image/png",
      bytesBefore: 500,
      bytesAfter: 499,
      saved: 1,
    },
  ];
  for (const f of facts) agg.add(f);
  if (kind === "audit")
    agg.addFailure({ uri: "file:///gone", error: "Resource not found (JSON-RPC -32002)", code: -32002 });
  else agg.addMalformed({ source: "a.jsonl", line: 3, error: "not JSON" });
  return agg.toModel({
    kind,
    source: kind === "audit" ? { server: "docs", upstream: "node srv.js" } : { files: ["a.jsonl"] },
    generatedAt: "2026-01-03T00:00:00.000Z",
  });
}

describe("format", () => {
  it("bytes, counts and shares read the same everywhere", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(1536)).toBe("1.50 KiB");
    expect(formatBytes(-2048)).toBe("−2.00 KiB");
    expect(formatBytes(5 * 1024 * 1024 * 1024)).toBe("5.00 GiB");
    expect(formatCount(1234567)).toBe("1,234,567");
    expect(formatShare(1 / 3)).toBe("33.3%");
    expect(formatShare(0.0001)).toBe("<0.1%");
    expect(formatShare(0)).toBe("0.0%");
    expect(formatShare(-0.156)).toBe("−15.6%");
    expect(formatShare(-0.00001)).toBe("0.0%");
  });
});

describe("renderers", () => {
  it("json: the model itself, schemaVersion 1, with a stable set of top-level fields", () => {
    const m = model("audit");
    const parsed = JSON.parse(renderReport(m, "json"));
    expect(parsed).toEqual(m);
    expect(parsed.schemaVersion).toBe(1);
    expect(Object.keys(parsed)).toEqual([
      "schemaVersion",
      "kind",
      "generatedAt",
      "source",
      "timeRange",
      "totals",
      "byServer",
      "byMime",
      "byAction",
      "byMethod",
      "byUri",
      "topOffenders",
      "failures",
      "malformed",
      "ignoredLines",
      "uriTable",
    ]);
  });

  it("md: tables whose cells cannot be broken by a URI", () => {
    const md = renderReport(model("audit"), "md");
    expect(md).toContain("# Size audit: docs");
    expect(md).toContain("**4.39 KiB → 3.42 KiB: 1001 B saved (22.2%)**");
    expect(md).toContain('`file:///a\\|b<script>alert("x")</script>.txt`');
    expect(md).toContain("## Failed reads and tool errors (1)");
    expect(md).toContain("Resource not found (JSON-RPC -32002)");
    for (const line of md.split("\n").filter((l) => l.startsWith("| `file:///a")))
      expect(line.split(/(?<!\\)\|/).length).toBe(14);
  });

  it("an audit counts every failure in md and html though it lists only the first of them", () => {
    const listed = model("audit");
    const scope = {
      capabilities: { resources: true, tools: false, prompts: false },
      ...{ listed: 1500, filteredOut: 0, read: 1500, called: 0, readFailed: 1500, callFailed: 0, notes: [] },
    };
    const cut = { ...listed, scope };
    const md = renderReport(cut, "md");
    expect(md).toContain("## Failed reads and tool errors (1,500)");
    expect(md).toContain("… and 1499 more, not listed (each counted).");
    const html = renderReport(cut, "html");
    expect(html).toContain("resources read + tool calls · 1,500 failed");
    expect(html).toContain("<h2>Failed reads and tool errors (1,500)</h2>");
    expect(html).toContain("… and 1499 more, not listed (each counted).");
    expect(renderReport(listed, "md")).not.toContain("not listed");
  });

  it("when growth outweighs the savings, no row reads as 0% of them: shares show – in md and html", () => {
    const agg = new ReportAggregator();
    const fact = (uri: string, before: number, after: number): EntryFact => ({
      ...{ ts: "2026-01-01T00:00:00.000Z", server: "s", method: "resources/read", uri, action: "fix-mime" },
      ...{ mimeBefore: "text/plain", mimeAfter: "image/png", bytesBefore: before, bytesAfter: after },
      saved: before - after,
    });
    agg.add(fact("fx://save", 1000, 786));
    agg.add(fact("fx://grow", 1000, 1863));
    const grown = agg.toModel({ kind: "log", source: { files: ["a.jsonl"] }, generatedAt: "2026-01-03T00:00:00Z" });
    const md = renderReport(grown, "md");
    expect(md).toMatch(/\| `fx:\/\/save` \|.*\| 214 B \| – \|/);
    expect(md).not.toMatch(/\| 0\.0% \|/);
    expect(md).toContain("(−32.5%)");
    const html = renderReport(grown, "html");
    expect(html).toMatch(/data-uri="fx:\/\/save".*?<td class="num">–<\/td><\/tr>/);
    expect(html).not.toContain(">0.0%<");
  });

  it("md for logs: malformed lines are shown", () => {
    const md = renderReport(model("log"), "md");
    expect(md).toContain("1 malformed lines skipped");
    expect(md).toContain("| `a.jsonl` | 3 | not JSON |");
  });

  it("a URI table that could not keep every URI says its rows are approximate, in md and html", () => {
    const full = model("log");
    expect(renderReport(full, "md")).not.toContain("approximate");
    const bounded = { ...full, uriTable: { ...full.uriTable, limit: 1, untrackedEntries: 1 } };
    for (const format of ["md", "html"] as const)
      expect(renderReport(bounded, format), format).toContain(
        "a URI dropped from it and seen again counts from its return: with more URIs than --max-uris, its rows are approximate",
      );
  });

  it("html: self-contained, everything from upstreams escaped, no script, no fetches", () => {
    const html = renderReport(model("audit"), "html");
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(html).toContain(`Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"`);
    expect(html).not.toMatch(/(src|href)=/i);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).toContain('<rect class="bar before" data-key="docs" data-bytes="4000"');
    expect(html).toContain('<table id="top-offenders">');
  });

  it("--format accepts md, json, html and names the flag otherwise", () => {
    expect(parseReportFormat(undefined, "--format")).toBe("md");
    expect(parseReportFormat("html", "--format")).toBe("html");
    expect(() => parseReportFormat("pdf", "audit: --format")).toThrow(
      /audit: --format expects md, json or html, got "pdf"/,
    );
  });
});

describe("HTML of what a server chose", () => {
  it("shows control characters as symbols: an HTML report printed to a terminal carries no escape sequence", () => {
    expect(escapeHtml("x://a\u001b]0;PWNED\u0007<b>\u202e")).toBe("x://a\u241b]0;PWNED\u2407&lt;b&gt;U+202E");
  });
});

describe("Markdown cells of what a server chose", () => {
  it("show control characters as symbols and keep HTML, links and emphasis as text; code spans keep backslashes", () => {
    const hostile = "text/x-a\u001b]0;PWNED\u0007 <img src=x onerror=alert(7)> [click](http://evil) *b* \u202eevil";
    const shown = cell(hostile);
    for (const invisible of ["\u001b", "\u0007", "\u202e"]) expect(shown).not.toContain(invisible);
    expect(shown).toContain("\u241b\\]0;PWNED\u2407");
    expect(shown).toContain("\\<img src=x onerror=alert(7)\\>");
    expect(shown).toContain("\\[click\\](http://evil) \\*b\\* U+202Eevil");
    expect(code("file:///C:\\dir\\a|b`c\u001b[31m")).toBe("`file:///C:\\dir\\a\\|b'c\u241b[31m`");
  });
});

/** One blob unwrapped, 20 bytes saved. */
const UNWRAPPED: EntryFact = {
  server: "s",
  method: "resources/read",
  uri: "x://a",
  action: "unwrap-blob",
  mimeBefore: "text/plain",
  mimeAfter: "text/plain",
  bytesBefore: 30,
  bytesAfter: 10,
  saved: 20,
};

describe("a dry run's report", () => {
  it("says in every format that its changes were not applied", () => {
    const agg = new ReportAggregator();
    agg.add({ ...UNWRAPPED, applied: false });
    const dry = agg.toModel({ kind: "log", source: { files: ["a.jsonl"] }, generatedAt: "now" });
    for (const format of ["md", "html"] as const)
      expect(renderReport(dry, format), format).toContain("1 change was logged in dry run (not applied)");
  });
});

describe("no top offenders", () => {
  it("says nothing was saved only when there is nothing, and that none are shown for --top 0", () => {
    const agg = new ReportAggregator({ topOffenders: 0 });
    agg.add(UNWRAPPED);
    const some = agg.toModel({ kind: "log", source: { files: ["a.jsonl"] }, generatedAt: "now" });
    const none = new ReportAggregator().toModel({ kind: "log", source: { files: ["a.jsonl"] }, generatedAt: "now" });
    const plain = new ReportAggregator();
    plain.add({ ...UNWRAPPED, action: "none", bytesBefore: 10, bytesAfter: 10, saved: 0 });
    const untouched = plain.toModel({ kind: "log", source: { files: ["a.jsonl"] }, generatedAt: "now" });
    for (const format of ["md", "html"] as const) {
      expect(renderReport(some, format), format).toContain("None shown (--top 0).");
      expect(renderReport(some, format), format).not.toContain("Nothing to save.");
      expect(renderReport(none, format), format).toContain("Nothing to save.");
      // Entries read, none of them saving anything (an audit of a server that serves text): nothing to save.
      expect(renderReport(untouched, format), format).toContain("Nothing to save.");
      expect(renderReport(untouched, format), format).not.toContain("--top 0");
    }
    expect(renderReport(untouched, "md")).toContain("over 1 entry —");
  });
});

describe("actions named like Object.prototype's members", () => {
  it("are counted like any other name, in every format", () => {
    const agg = new ReportAggregator();
    for (const action of ["constructor", "toString", "__proto__", "constructor"]) agg.add({ ...UNWRAPPED, action });
    const model = agg.toModel({ kind: "log", source: { files: ["a.jsonl"] }, generatedAt: "now" });
    const json = JSON.parse(renderReport(model, "json")) as { totals: { actions: Record<string, unknown> } };
    expect(Object.entries(json.totals.actions).sort()).toEqual([
      ["__proto__", 1],
      ["constructor", 2],
      ["toString", 1],
    ]);
    for (const format of ["md", "html"] as const) expect(renderReport(model, format)).not.toContain("native code");
  });
});
