/**
 * `report` over a log written by someone else (hostile or garbled): its output stays bounded, its
 * totals never go below zero, and nothing it prints to the terminal carries control characters.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ReportModel } from "../../src/report/model.js";
import { MAX_FOREIGN_ACTIONS } from "../../src/report/aggregate.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const dir = tempDir("mcpn-hostile-log-");

const record = (fields: Record<string, unknown>) =>
  JSON.stringify({
    ts: "2026-01-01T00:00:00.000Z",
    server: "s",
    method: "resources/read",
    uri: "x:/a",
    mimeBefore: "text/plain",
    mimeAfter: "text/plain",
    applied: true,
    ...fields,
  });

async function reportOf(lines: string[]): Promise<{ model: ReportModel; stderr: string; code: number | null }> {
  const file = join(dir, `log-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  const { stdout, stderr, code } = await runCli(["report", file, "--format", "json"]);
  return { model: JSON.parse(stdout) as ReportModel, stderr, code };
}

describe("report over a hostile log", () => {
  it("counts thousands of made-up action names by name only up to a bound; every row stays small", async () => {
    const lines = Array.from({ length: 5000 }, (_, i) =>
      record({ uri: `x:/${i % 7}`, action: `made-up-${i}`, bytesBefore: 10, bytesAfter: 10, saved: 0 }),
    );
    const { model, code } = await reportOf(lines);
    expect(code).toBe(0);
    expect(model.totals.entries).toBe(5000);
    expect(Object.keys(model.totals.actions)).toHaveLength(MAX_FOREIGN_ACTIONS + 1);
    expect(model.totals.actions["(other)"]).toBe(5000 - MAX_FOREIGN_ACTIONS);
    for (const row of [...model.byServer, ...model.byMime, ...model.byMethod])
      expect(Object.keys(row.actions).length).toBeLessThanOrEqual(MAX_FOREIGN_ACTIONS + 1);
  });

  it("a chained record that does not continue what the change before it left is skipped as malformed", async () => {
    const { model, code } = await reportOf([
      record({ action: "unwrap-blob", bytesBefore: 100, bytesAfter: 80, saved: 20 }),
      record({ action: "cut-result", bytesBefore: 5000, bytesAfter: 0, saved: 5000, chained: true }),
    ]);
    expect(code).toBe(0);
    expect(model.totals).toMatchObject({ entries: 1, bytesBefore: 100, bytesAfter: 80, saved: 20 });
    expect(model.malformed.lines).toBe(1);
    expect(model.malformed.examples[0]!.error).toContain("not what the change before it left (80)");
  });

  it("prints the first malformed line's reason without the terminal escapes it holds", async () => {
    const { stderr, code } = await reportOf(["\u001b]0;PWNED\u0007\u001b[2J\u0000 garbage"]);
    expect(code).toBe(0);
    expect(stderr).toContain("1 malformed lines skipped");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach the terminal
    expect(stderr.replace(/\n$/, "")).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(stderr).toContain("␛]0;PWNED");
  });
});
