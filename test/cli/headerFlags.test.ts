import { describe, expect, it } from "vitest";
import { parseHeaderFlags } from "../../src/cli/args.js";

describe("--header flags", () => {
  it("give a record of names and values; a value no HTTP header can carry is refused by name, never quoted", () => {
    expect(parseHeaderFlags(["X-Key: abc", "Authorization: Bearer t"], "serve")).toEqual({
      "X-Key": "abc",
      Authorization: "Bearer t",
    });
    expect(() => parseHeaderFlags(["X-Key: sk-secret\nmore"], "serve")).toThrow(
      /^serve: --header "X-Key" holds a line break or another control character .*\(the value is not shown\)$/,
    );
    expect(() => parseHeaderFlags(["X-Key: sk-secret\u0000"], "serve")).toThrow(/not shown/);
  });
});
