/**
 * A log record holds what an upstream chose (URI, mimeType, the reason quoting it) whole when
 * short, else as its start, its length and a hash: the log line stays small and the report can
 * still read it (it refuses lines over 1 MiB).
 */
import { describe, expect, it } from "vitest";
import type { ChangeRecord, NormalizationEvent } from "../../src/normalize/change.js";
import { toLogRecords } from "../../src/observe/logRecord.js";

describe("toLogRecords", () => {
  it("keeps short strings whole and long ones as start, length and hash", () => {
    const uri = `x://${"u".repeat(600_000)}`;
    const mime = `text/${"m".repeat(600_000)}`;
    const change = {
      action: "unwrap-blob",
      path: "contents[0]",
      uri,
      mimeBefore: mime,
      mimeAfter: "text/plain",
      bytesBefore: 10,
      bytesAfter: 8,
      saved: 2,
      reason: `UTF-8 text (${mime})`,
      applied: true,
    } as unknown as ChangeRecord;
    const event = { method: "resources/read", changes: [change], ms: 1 } as unknown as NormalizationEvent;
    const [record] = toLogRecords(event, { server: "s", id: "s-1" });
    expect(record?.mimeAfter).toBe("text/plain");
    expect(record?.uri).toMatch(/^x:\/\/u{1020}…\[600004 chars, fnv1a [0-9a-f]{8}\]$/);
    expect(JSON.stringify(record).length).toBeLessThan(5000);
  });
});
