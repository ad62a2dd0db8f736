/**
 * What `audit` is asked to call and read: each call and each URI once, however often it is
 * given (lists merged from several places must not count a result twice).
 */
import { describe, expect, it } from "vitest";
import { parseCalls, parseReads } from "../../../src/cli/audit/targets.js";

describe("audit targets", () => {
  it("a call given twice, TOOL and TOOL={} alike, is made once; other arguments are another call", () => {
    expect(parseCalls(["emb", "emb", "emb={}", 'emb={"n":1}', 'emb={"n":1}', "other"], undefined)).toEqual([
      { tool: "emb", args: {} },
      { tool: "emb", args: { n: 1 } },
      { tool: "other", args: {} },
    ]);
    // The same arguments in another order, nested too.
    expect(
      parseCalls(['t={"a":1,"b":{"x":1,"y":2}}', 't={"b":{"y":2,"x":1},"a":1}', 't={"a":[{"k":1}]}'], undefined),
    ).toEqual([
      { tool: "t", args: { a: 1, b: { x: 1, y: 2 } } },
      { tool: "t", args: { a: [{ k: 1 }] } },
    ]);
  });

  it("a URI given twice is read once", () => {
    expect(parseReads(["a://x", "a://y", "a://x"])).toEqual(["a://x", "a://y"]);
  });
});
