/**
 * The order report reads a log's files in: by when each file's first record was written, gzip
 * rotations read at their start only (a highly compressible one too), files without a readable
 * first record after the others.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { inWrittenOrder } from "../../src/report/writtenOrder.js";
import { tempDir } from "../helpers/tempDir.js";

const line = (ts: string, n = 0): string =>
  `${JSON.stringify({ ts, server: "s", method: "resources/read", uri: `u://${n}`, action: "none" })}\n`;

describe("inWrittenOrder", () => {
  it("orders a log's files by their first record, gzip ones included, whatever their names", () => {
    const dir = tempDir();
    const at = (name: string) => join(dir, name);
    // 50,000 identical lines: a start that inflates far past a few kilobytes.
    writeFileSync(at("n.jsonl.2.gz"), gzipSync(line("2026-12-01T00:00:00Z").repeat(50_000)));
    writeFileSync(at("n.jsonl.1"), line("2026-12-02T00:00:00Z"));
    writeFileSync(at("n.jsonl"), line("2026-12-03T00:00:00Z"));
    writeFileSync(at("torn.jsonl"), "{not json");
    expect(inWrittenOrder([at("torn.jsonl"), at("n.jsonl"), at("n.jsonl.1"), at("n.jsonl.2.gz")])).toEqual([
      at("n.jsonl.2.gz"),
      at("n.jsonl.1"),
      at("n.jsonl"),
      at("torn.jsonl"),
    ]);
  });
});
