/**
 * `audit --tokens` counts an entry in pieces of bounded size: a long stretch with no break (a
 * blob of zeros decoded, a run of one letter) costs time in proportion to its length, and the
 * figures for ordinary text are those of counting the text whole.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { countInPieces } from "../../src/cli/audit/tokens.js";
import { TOKEN_PIECE_CHARS, tokenPieces } from "../../src/cli/audit/tokenPieces.js";
import { ROOT } from "../helpers/paths.js";

const TOKENS_MODULE = pathToFileURL(join(ROOT, "dist", "cli", "audit", "tokens.js")).href;

/** Runs `script` in a child node (a blocked tokenizer cannot be interrupted in this process). */
function runNode(script: string, timeoutMs: number): Promise<{ stdout: string; error: Error | null }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", script],
      { timeout: timeoutMs, killSignal: "SIGKILL" },
      (error, stdout) => resolve({ stdout, error }),
    );
  });
}

describe("audit --tokens: counting in pieces", () => {
  it("a megabyte run of one letter is counted without stalling (quadratic when encoded whole)", async () => {
    const script =
      `const { loadTokenCounter } = await import(${JSON.stringify(TOKENS_MODULE)});` +
      `const count = await loadTokenCounter(); console.log(await count("a".repeat(1_000_000)));`;
    const run = await runNode(script, 15_000);
    expect(run.error).toBeNull();
    // o200k_base has a token for eight a's.
    expect(Number(run.stdout.trim())).toBe(125_000);
  }, 20_000);

  it("a long run after many distinct words is counted as fast as on its own (the tokenizer's cache full)", async () => {
    const script =
      `const { loadTokenCounter } = await import(${JSON.stringify(TOKENS_MODULE)});` +
      "const count = await loadTokenCounter();" +
      // Distinct words of letters only (digits are split off, and cached apart).
      'const letters = (i) => i.toString(26).replace(/[0-9]/g, (d) => "klmnopqrst"[d]);' +
      'const words = Array.from({ length: 120000 }, (_, i) => " q" + letters(i)).join("");' +
      'console.log(await count(words), await count("YWFh".repeat(250000)));';
    const { stdout, error } = await runNode(script, 15_000);
    expect(error, "killed after 15 s").toBeNull();
    expect(stdout.trim().split(" ")[1]).toBe("750000");
  }, 20_000);

  it("text that spells a special token (<|endoftext|>) is counted as text, not refused", async () => {
    const { loadTokenCounter } = await import("../../src/cli/audit/tokens.js");
    const count = await loadTokenCounter();
    expect(await count("x <|endoftext|> y")).toBe(countTokens("x <|endoftext|> y", { disallowedSpecial: new Set() }));
    expect(await count("<|im_start|>system")).toBeGreaterThan(1);
  });

  it("ordinary English and JSON count the same in pieces as whole", async () => {
    const samples = readdirSync(join(ROOT, "docs"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => readFileSync(join(ROOT, "docs", name), "utf8"));
    const cases = readFileSync(join(ROOT, "test", "fixtures", "corpus", "cases.json"), "utf8");
    samples.push(cases, JSON.stringify(JSON.parse(cases)));
    expect(samples.some((text) => text.length > 10 * TOKEN_PIECE_CHARS)).toBe(true);
    for (const text of samples) expect(await countInPieces(text, countTokens)).toBe(countTokens(text));
  });

  it("a piece the same as the one before is not counted again (a long run of one letter, base64 of zeros)", async () => {
    const counted: string[] = [];
    const count = (piece: string): number => {
      counted.push(piece);
      return countTokens(piece);
    };
    for (const text of ["x".repeat(20 * TOKEN_PIECE_CHARS), Buffer.alloc(15 * TOKEN_PIECE_CHARS).toString("base64")]) {
      counted.length = 0;
      expect(await countInPieces(text, count)).toBe(
        [...tokenPieces(text)].reduce((sum, piece) => sum + countTokens(piece), 0),
      );
      expect(counted.length).toBeLessThanOrEqual(2);
    }
  });

  it("no piece is longer than the bound; the pieces join to the text, surrogate pairs kept whole", () => {
    const texts = [
      "a".repeat(5 * TOKEN_PIECE_CHARS + 7),
      "😀".repeat(3 * TOKEN_PIECE_CHARS),
      `x${"😀".repeat(3 * TOKEN_PIECE_CHARS)}`,
      "word ".repeat(2 * TOKEN_PIECE_CHARS),
      "",
    ];
    for (const text of texts) {
      const pieces = [...tokenPieces(text)];
      expect(pieces.join("")).toBe(text);
      for (const piece of pieces) {
        expect(piece.length).toBeLessThanOrEqual(TOKEN_PIECE_CHARS);
        // No lone surrogate at either end: a pair was not cut in two.
        expect(piece).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
      }
    }
  });

  it("a piece ends before the space that starts the next word, where there is one", () => {
    const pieces = [...tokenPieces(`${"word ".repeat(2 * TOKEN_PIECE_CHARS)}end`)];
    expect(pieces.length).toBeGreaterThan(2);
    for (const piece of pieces.slice(1)) expect(piece).toMatch(/^ [a-z]/);
  });
});
