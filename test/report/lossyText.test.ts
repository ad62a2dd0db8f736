/** `report` on a log with warn-lossy-text records: a line in md and html; counted as warned. */
import { describe, expect, it } from "vitest";
import { ReportAggregator } from "../../src/report/aggregate.js";
import { parseLogLine } from "../../src/report/parseLogLine.js";
import { renderHtml } from "../../src/report/renderHtml.js";
import { renderMarkdown } from "../../src/report/renderMarkdown.js";

const line = (action: string, uri: string) =>
  JSON.stringify({
    ts: "2026-12-03T10:00:00.000Z",
    server: "fs",
    session: "fs-1",
    method: "tools/call",
    uri,
    action,
    mimeBefore: null,
    mimeAfter: null,
    bytesBefore: 600,
    bytesAfter: 600,
    saved: 0,
    ms: 0.1,
    path: "content[0]",
    reason: "5 U+FFFD replacement characters in 500",
    applied: true,
  });

describe("lossy text in reports", () => {
  it("two lossy records: counted as warned, one line in md and in html", () => {
    const aggregator = new ReportAggregator();
    for (const text of [line("warn-lossy-text", "a"), line("warn-lossy-text", "b"), line("unwrap-blob", "c")]) {
      const parsed = parseLogLine(text);
      if (parsed.kind !== "record") throw new Error(parsed.kind);
      aggregator.add(parsed.fact);
    }
    const model = aggregator.toModel({
      kind: "log",
      source: { files: ["n.jsonl"] },
      generatedAt: "2026-12-03T10:00:01.000Z",
    });
    expect(model.totals.warned).toBe(2);
    expect(renderMarkdown(model)).toContain("**2 entries have lossy text** (`warn-lossy-text`)");
    expect(renderHtml(model)).toContain('<span data-metric="lossy-text">2</span> entries have U+FFFD');
  });

  it("no lossy record: no line", () => {
    const aggregator = new ReportAggregator();
    const parsed = parseLogLine(line("unwrap-blob", "c"));
    if (parsed.kind === "record") aggregator.add(parsed.fact);
    const model = aggregator.toModel({
      kind: "log",
      source: { files: ["n.jsonl"] },
      generatedAt: "2026-12-03T10:00:01.000Z",
    });
    expect(renderMarkdown(model)).not.toContain("lossy text");
    expect(renderHtml(model)).not.toContain("lossy-text");
  });
});
