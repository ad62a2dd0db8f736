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

  it("a flag without a name and colon, or with a name HTTP does not allow, is refused by its place, never quoted", () => {
    const error = (flags: string[]): string => {
      try {
        parseHeaderFlags(flags, "stdio");
      } catch (e) {
        return (e as Error).message;
      }
      return "accepted";
    };
    const forgotten = error(["X-Ok: 1", "Authorization Bearer sk-live-51aa09f3"]);
    expect(forgotten).toMatch(
      /^stdio: --header #2 of 2 expects "Name: value" and has no name and colon \(not shown\)$/,
    );
    const badName = error(["Bearer sk-live-51aa09f3: x"]);
    expect(badName).toMatch(/^stdio: --header #1 of 1: its name \(not shown\) is not an HTTP header name/);
    for (const message of [forgotten, badName]) expect(message).not.toContain("sk-live");
  });
});
