/**
 * The source says what it does in its own words: no comment or string in the code, tests,
 * benchmarks or scripts points at an issue number or at design notes a reader of this repository
 * does not have. And no line of src/ is longer than 120 characters (the formatter wraps code, not
 * comments and strings).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/paths.js";

const SOURCE = /\.(ts|mts|mjs|cjs|js|json)$/;
const SKIP = new Set(["node_modules", "artifacts", "results", "dist"]);
const MAX_LINE = 120;

/** Every source file under `dir`, recursively (generated output and dependencies left out). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIP.has(entry.name) ? [] : sourceFiles(path);
    return SOURCE.test(entry.name) ? [path] : [];
  });
}

describe("source text", () => {
  it("no file of src, test, bench or scripts (nor the Dockerfile) cites an issue or design notes", () => {
    // Built from pieces so that this file does not match itself.
    const outside = new RegExp(["\\bissues? #?\\d+\\b", "DESIGN\\.md", "STYLE\\.md"].join("|"), "gi");
    const files = [
      ...["src", "test", "bench", "scripts"].flatMap((dir) => sourceFiles(join(ROOT, dir))),
      join(ROOT, "Dockerfile"),
    ];
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(outside)].map((m) => `${relative(ROOT, file)}: ${m[0]}`),
    );
    expect(found).toEqual([]);
  });

  it("no line of src/ is longer than 120 characters (counted in UTF-8 bytes, as awk does)", () => {
    const files = sourceFiles(join(ROOT, "src"));
    expect(files.length).toBeGreaterThan(100);
    const long = files.flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) =>
          Buffer.byteLength(line) > MAX_LINE ? [`${relative(ROOT, file)}:${i + 1} (${Buffer.byteLength(line)})`] : [],
        ),
    );
    expect(long).toEqual([]);
  });
});
