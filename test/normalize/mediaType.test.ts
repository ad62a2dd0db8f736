/** Parsing a `mimeType` (src/normalize/mediaType.ts): parameters, quotes, and a hostile length. */
import { describe, expect, it } from "vitest";
import { getParam, parseMediaType } from "../../src/normalize/mediaType.js";

describe("parseMediaType", () => {
  it("splits parameters at semicolons outside quotes and unquotes their values", () => {
    const mt = parseMediaType('Text/Plain; charset="utf\\"-8"; x="a;b"; y=c\\')!;
    expect(mt.essence).toBe("text/plain");
    expect(getParam(mt, "charset")).toBe('utf"-8');
    expect(getParam(mt, "x")).toBe("a;b");
    expect(getParam(mt, "y")).toBe("c\\");
  });

  it("a quoted parameter value of 32 million characters is read in one pass (it took over five seconds)", () => {
    const started = performance.now();
    const mt = parseMediaType(`text/plain; a="${"\\\\".repeat(16_000_000)}"`)!;
    expect(getParam(mt, "a")).toBe("\\".repeat(16_000_000));
    expect(performance.now() - started).toBeLessThan(3000);
  });
});
