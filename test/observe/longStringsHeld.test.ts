/**
 * Strings a server chooses, megabytes long, must not be held whole by what the proxy keeps of
 * them: a record's first 1024 characters (V8 keeps a slice of a long string as a view of it) or
 * the metrics' label cache (keyed by the type as sent). Each held 256 MB of 1 MB types before.
 */
import { describe, expect, it } from "vitest";
import { collectGarbage } from "../helpers/gc.js";
import { recordedText } from "../../src/normalize/recordedText.js";
import { mimeLabel } from "../../src/observe/metricLabels.js";

/** Heap MiB still used after `fill` ran, what it returned kept alive until measured. */
async function heapHeldBy(fill: () => unknown): Promise<number> {
  await collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const kept = fill();
  await collectGarbage();
  const held = (process.memoryUsage().heapUsed - before) / 2 ** 20;
  expect(kept).toBeDefined();
  return held;
}

/** A distinct megabyte-long string, made flat (as a parsed message's strings are). */
function longString(i: number): string {
  return JSON.parse(JSON.stringify(`text/x-${i};p=${"a".repeat(2 ** 20)}`)) as string;
}

describe("megabyte-long strings from a server", () => {
  it("a record of one holds its first 1024 characters, not the whole", async () => {
    const held = await heapHeldBy(() => Array.from({ length: 100 }, (_, i) => recordedText(longString(i))));
    expect(held).toBeLessThan(20);
  });

  it("the metrics' mime label of one is not kept by the whole string", async () => {
    const held = await heapHeldBy(() => {
      for (let i = 0; i < 100; i++) expect(mimeLabel(longString(i), null)).toBe("other");
      return true;
    });
    expect(held).toBeLessThan(20);
  });
});
