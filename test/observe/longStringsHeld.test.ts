/**
 * Strings a server chooses, megabytes long, must not be held whole by what the proxy keeps of
 * them: a record's first 1024 characters (V8 keeps a slice of a long string as a view of it) or
 * the metrics' label cache (keyed by the type as sent). Each held 256 MB of 1 MB types before.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { recordedText } from "../../src/normalize/recordedText.js";
import { mimeLabel } from "../../src/observe/metricLabels.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Heap MiB still used after `fill` ran, what it returned kept alive until measured. */
function heapHeldBy(fill: () => unknown): number {
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = fill();
  gc();
  const held = (process.memoryUsage().heapUsed - before) / 2 ** 20;
  expect(kept).toBeDefined();
  return held;
}

/** A distinct megabyte-long string, made flat (as a parsed message's strings are). */
function longString(i: number): string {
  return JSON.parse(JSON.stringify(`text/x-${i};p=${"a".repeat(2 ** 20)}`)) as string;
}

describe("megabyte-long strings from a server", () => {
  it("a record of one holds its first 1024 characters, not the whole", () => {
    const held = heapHeldBy(() => Array.from({ length: 100 }, (_, i) => recordedText(longString(i))));
    expect(held).toBeLessThan(20);
  });

  it("the metrics' mime label of one is not kept by the whole string", () => {
    const held = heapHeldBy(() => {
      for (let i = 0; i < 100; i++) expect(mimeLabel(longString(i), null)).toBe("other");
      return true;
    });
    expect(held).toBeLessThan(20);
  });
});
