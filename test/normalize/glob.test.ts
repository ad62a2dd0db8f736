/**
 * Globs of policy rules and `audit --uri` (src/normalize/glob.ts): the same matches as the regular
 * expression they stand for, in one pass — a URI an upstream chose cannot make a rule's match slow.
 */
import { describe, expect, it } from "vitest";
import { Glob } from "../../src/normalize/glob.js";

/** The glob as a regular expression: what it means, if not how it is matched. */
function asRegExp(glob: string): RegExp {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === "*" && glob[i + 1] === "*") {
      source += ".*";
      i++;
    } else if (ch === "*") source += "[^/]*";
    else if (ch === "?") source += "[^/]";
    else source += ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`, "s");
}

describe("Glob", () => {
  it("matches as its regular expression would, over generated globs and texts", () => {
    const alphabet = ["a", "b", "/", ".", "*", "**", "?"];
    const texts = ["", "a", "b", "/", "a/b", "ab/", "/a.b", "a.b/b.a", "aa/bb/aa", "a//b", "b.a.b", "a/b/c.d"];
    let seed = 7;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 16) % n;
    };
    for (let round = 0; round < 3000; round++) {
      let glob = "";
      const length = next(7);
      for (let i = 0; i < length; i++) glob += alphabet[next(alphabet.length)];
      const compiled = new Glob(glob);
      const expected = asRegExp(glob);
      for (const text of texts) expect(compiled.test(text), `${glob} on ${text}`).toBe(expected.test(text));
    }
  });

  it("rules as configs write them", () => {
    expect(new Glob("file:///docs/**").test("file:///docs/a/b.md")).toBe(true);
    expect(new Glob("file:///docs/*.md").test("file:///docs/a/b.md")).toBe(false);
    expect(new Glob("**/*.log").test("file:///var/logs/x.log")).toBe(true);
    expect(new Glob("get_*").test("get_weather")).toBe(true);
    expect(new Glob("get_*").test("set_weather")).toBe(false);
  });

  it("** matches line breaks too (a URI holding one is still under the folder a rule names)", () => {
    expect(new Glob("file:///**").test("file:///a\nb")).toBe(true);
    expect(new Glob("**.log").test("x\r\n.log")).toBe(true);
    expect(new Glob("file:///*").test("file:///a\nb")).toBe(true);
    expect(new Glob("file:///*").test("file:///a/b")).toBe(false);
  });

  it("ten rules over 6 MB of long URIs, and a glob of 400 stars, take a walk each at most", () => {
    const rules = [
      "file:///**/logs/**/*.log",
      "file:///docs/**",
      "**/*.md",
      "https://**",
      "file:///a/*/b/**/c?.txt",
      "**/x/**/y/**",
      "*",
      "file:///**/*-*.png",
      "mem://**",
      "**",
    ].map((glob) => new Glob(glob));
    const uris = Array.from({ length: 20 }, (_, i) => `file:///${"logs/".repeat(60_000)}${i}.log`);
    const started = performance.now();
    let matches = 0;
    for (const uri of uris) for (const rule of rules) if (rule.test(uri)) matches++;
    expect(matches).toBe(20 * 2);
    expect(new Glob("*".repeat(401)).test("a".repeat(2000))).toBe(true);
    // A walk of every pattern position at every character took seconds; a regular expression, minutes.
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it("a long URI against two ** and a suffix is matched in one pass (the regular expression took seconds)", () => {
    const uri = `file:///${"logs/".repeat(40_000)}`;
    const started = performance.now();
    expect(new Glob("file:///**/logs/**/*.log").test(uri)).toBe(false);
    expect(new Glob("file:///**/logs/**/*.log").test(`${uri}x.log`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
