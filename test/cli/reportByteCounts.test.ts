/**
 * `report` over a log with corrupt byte counts: a count that is not a whole number from 0 to
 * 2^53 − 1 makes its line malformed, and lines whose sum would pass 2^53 − 1 are skipped too,
 * so the totals stay exact numbers (the JSON report's schema) and the headline a real size.
 * Real `report` runs, the log on stdin.
 */
import { describe, expect, it } from "vitest";
import type { ReportModel } from "../../src/report/model.js";
import { runCli } from "../helpers/runCli.js";

const line = (uri: string, bytesBefore: unknown, bytesAfter: unknown): string =>
  JSON.stringify({
    ts: "2026-12-02T10:20:00.000Z",
    server: "s",
    method: "resources/read",
    uri,
    action: "unwrap-blob",
    mimeBefore: "text/plain",
    mimeAfter: "text/plain",
    bytesBefore,
    bytesAfter,
    ...(typeof bytesBefore === "number" && typeof bytesAfter === "number" ? { saved: bytesBefore - bytesAfter } : {}),
  });

const CORRUPT: Array<[unknown, unknown]> = [
  [1e308, 0],
  [1.5, 0.5],
  [10, -20],
  [2 ** 53 + 2, 0],
  [100, 2 ** 60],
];

describe("report: byte counts", () => {
  it("a count that is not a whole number from 0 to 2^53 − 1 is malformed; the totals stay those of the good lines", async () => {
    const log = [line("ok", 100, 40), ...CORRUPT.map(([before, after], i) => line(`bad${i}`, before, after))];
    const run = await runCli(["report", "--format", "json", "-"], { input: `${log.join("\n")}\n`, timeoutMs: 15_000 });
    expect(run.code, run.stderr).toBe(0);
    const model = JSON.parse(run.stdout) as ReportModel;
    expect(model.totals).toMatchObject({ entries: 1, bytesBefore: 100, bytesAfter: 40, saved: 60 });
    expect(model.malformed.lines).toBe(CORRUPT.length);
    for (const example of model.malformed.examples) expect(example.error).toMatch(/field bytes(Before|After) is not/);

    const markdown = await runCli(["report", "-"], { input: `${log.join("\n")}\n`, timeoutMs: 15_000 });
    expect(markdown.stdout).not.toMatch(/Infinity|NaN/);
  }, 20_000);

  it("lines whose sum would pass 2^53 − 1 bytes are skipped as malformed: the totals stay exact", async () => {
    const half = 2 ** 52;
    const log = [line("a", half, 0), line("b", half - 1, 0), line("c", 1, 0), line("d", 3, 1)];
    const run = await runCli(["report", "--format", "json", "-"], { input: `${log.join("\n")}\n`, timeoutMs: 15_000 });
    expect(run.code, run.stderr).toBe(0);
    const model = JSON.parse(run.stdout) as ReportModel;
    // a and b fill the totals to 2^53 − 1 exactly; c and d would pass it.
    expect(model.totals).toMatchObject({ entries: 2, bytesBefore: Number.MAX_SAFE_INTEGER, bytesAfter: 0 });
    expect(model.malformed.lines).toBe(2);
    expect(model.malformed.examples.map((e) => e.line)).toEqual([3, 4]);
    expect(model.malformed.examples[0]!.error).toMatch(/bytesBefore \+ bytesAfter .* 2\^53 − 1/);
    for (const row of [...model.byServer, ...model.byMime, ...model.byAction, ...model.byMethod, ...model.byUri])
      expect(Number.isSafeInteger(row.bytesBefore) && Number.isSafeInteger(row.saved)).toBe(true);
  }, 20_000);
});
