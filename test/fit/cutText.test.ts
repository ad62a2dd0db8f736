import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { cutEnd, pageBounds, utf8Bytes } from "../../src/fit/spill/cutText.js";

const pieces = (text: string, bounds: number[]): string[] =>
  bounds.slice(1).map((end, i) => text.slice(bounds[i], end));

describe("cutting text at character boundaries", () => {
  it("counts UTF-8 bytes like Buffer does for well-formed text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (text) => utf8Bytes(text) === Buffer.byteLength(text, "utf8")),
    );
  });

  it("pages concatenate to the original exactly, each within the budget, never splitting a character", () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.oneof(
            fc.constant("a"),
            fc.constant("é"),
            fc.constant("中"),
            fc.constant("😀"),
            fc.constant("👩‍👩‍👧"),
            fc.constant("e\u0301"),
            fc.constant("\ud800"),
          ),
          maxLength: 400,
        }),
        fc.integer({ min: 4, max: 64 }),
        (text, max) => {
          const bounds = pageBounds(text, 0, max);
          const parts = pieces(text, bounds);
          expect(parts.join("")).toBe(text);
          for (const part of parts) {
            expect(utf8Bytes(part)).toBeLessThanOrEqual(max);
            expect(part.length).toBeGreaterThan(0);
          }
          // No boundary falls between the two halves of a surrogate pair.
          for (const at of bounds.slice(1, -1)) {
            const high = text.charCodeAt(at - 1);
            const low = text.charCodeAt(at);
            expect(high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff).toBe(false);
          }
        },
      ),
    );
  });

  it("every cut is a grapheme boundary of the whole text, Latin text and line breaks around it included", () => {
    const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom(
            "a",
            " ",
            "\r",
            "\n",
            "\u00a9",
            "\u200d",
            "e\u0301",
            "\u0301",
            "é",
            "中",
            "\ufe0f",
            "👍🏽",
          ),
          maxLength: 300,
        }),
        fc.integer({ min: 4, max: 32 }),
        (text, max) => {
          const segments = [...segmenter.segment(text)];
          const boundaries = new Set(segments.map((s) => s.index));
          for (const at of pageBounds(text, 0, max).slice(1, -1)) {
            // A grapheme wider than a page is cut where it must be.
            const around = segments.findLast((s) => s.index < at)!;
            if (utf8Bytes(around.segment) > max) continue;
            expect(boundaries.has(at), `${at}`).toBe(true);
          }
        },
      ),
    );
  });

  it("cuts Latin text into pages without asking the segmenter (a segmentation per page cost more than the page)", () => {
    const text = "Lorem ipsum dolor sit amet.\r\n".repeat(40_000);
    const segment = vi.spyOn(Intl.Segmenter.prototype, "segment");
    try {
      const bounds = pageBounds(text, 0, 1024);
      expect(bounds.length).toBeGreaterThan(1000);
      for (const at of bounds.slice(1, -1)) expect(text.slice(at - 1, at + 1)).not.toBe("\r\n");
      // A cut that falls between CR and LF asks it, as does every cut next to other characters.
      expect(segment.mock.calls.length).toBeLessThan(bounds.length / 10);
    } finally {
      segment.mockRestore();
    }
  });

  it("keeps an emoji sequence whole when the budget falls inside it", () => {
    const family = "👩‍👩‍👧"; // 18 bytes: three emoji joined by two ZWJs
    const text = `ab${family}cd`;
    const end = cutEnd(text, 0, 2 + 10);
    expect(text.slice(0, end)).toBe("ab");
    expect(cutEnd(text, 0, 2 + 18)).toBe(2 + family.length);
  });

  it("cuts a long run of flags between flags, never between a flag's two halves, whatever the run's length", () => {
    const text = `a${"🇫🇷".repeat(40_000)}`;
    for (const budget of [60_000, 60_004, 1_001, 97]) {
      const bounds = pageBounds(text, 0, budget);
      expect(
        bounds
          .slice(1)
          .map((end, i) => text.slice(bounds[i], end))
          .join(""),
        String(budget),
      ).toBe(text);
      // Each flag is 4 UTF-16 units after the "a": a cut between flags is at 1 + 4k.
      for (const at of bounds.slice(1, -1)) expect((at - 1) % 4, `budget ${budget}, cut at ${at}`).toBe(0);
      expect(bounds.at(-1)).toBe(text.length);
    }
  });

  it("cuts a megabyte of flags in big pages at once (the segmenter is given a short window, never the run)", () => {
    const text = "🇺🇸".repeat(262_144);
    const started = performance.now();
    const bounds = pageBounds(text, 0, 256 * 1024);
    // Seconds per cut when the run was handed to the segmenter whole; milliseconds in all now.
    expect(performance.now() - started).toBeLessThan(2_000);
    for (const at of bounds) expect(at % 4).toBe(0);
  });

  it("never returns a cut inside a surrogate pair", () => {
    const text = "x😀y";
    expect(cutEnd(text, 0, 3)).toBe(1);
    expect(cutEnd(text, 0, 5)).toBe(3);
  });

  it("returns the start when not even one character fits", () => {
    expect(cutEnd("😀", 0, 3)).toBe(0);
    expect(pageBounds("😀😀", 0, 3)).toEqual([0, 2, 4]);
  });
});
