/** Bytes back from text that carries them as U+DC80–U+DCFF (surrogate escapes), src/normalize/textEvidence.ts. */
import { describe, expect, it } from "vitest";
import { recoverEscapedBytes } from "../../src/normalize/textEvidence.js";

/** The rule spelled out piece by piece: UTF-8 of what is not an escape, the escaped byte for each escape. */
function reference(text: string): Buffer {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff) i++;
    else if (c >= 0xdc80 && c <= 0xdcff) {
      parts.push(Buffer.from(text.slice(start, i), "utf8"), Buffer.of(c - 0xdc00));
      start = i + 1;
    }
  }
  parts.push(Buffer.from(text.slice(start), "utf8"));
  return Buffer.concat(parts);
}

describe("recoverEscapedBytes", () => {
  it("equals the rule on generated text: escapes, pairs, lone surrogates, ASCII and more", () => {
    let seed = 11;
    const units = [0x61, 0xe9, 0x20ac, 0xdce9, 0xdc80, 0xdcff, 0xd83d, 0xde00, 0xdc7f, 0xd800];
    for (let n = 0; n < 3000; n++) {
      let text = "";
      for (let i = n % 23; i > 0; i--) {
        seed = (seed * 1103515245 + 12345) >>> 0;
        text += String.fromCharCode(units[seed % units.length]!);
      }
      expect(recoverEscapedBytes(text)).toEqual(reference(text));
    }
  });

  it("8 million characters alternating with escapes take one pass (two buffers an escape took seconds)", () => {
    const text = "a\udce9".repeat(4_000_000);
    const started = performance.now();
    const bytes = recoverEscapedBytes(text);
    expect(bytes.length).toBe(8_000_000);
    expect(bytes[1]).toBe(0xe9);
    expect(performance.now() - started).toBeLessThan(3000);
  });
});
