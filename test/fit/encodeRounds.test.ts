/**
 * Fitting an image to a small `maxBytes` takes rounds of encodings at shrinking sizes. A format
 * far larger than another at one size is not encoded again in the next rounds: it cannot fit
 * first, and a large GIF's palette takes seconds each time.
 */
import { randomBytes } from "node:crypto";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { encodeToFit } from "../../src/fit/images/encode.js";

/** sharp, counting the encodings made in each format. */
function countingSharp(counts: Record<string, number>): typeof sharp {
  return ((...args: Parameters<typeof sharp>) => {
    const image = sharp(...args);
    for (const format of ["gif", "png", "jpeg", "webp"] as const) {
      const encode = image[format].bind(image) as (...a: unknown[]) => typeof image;
      (image as unknown as Record<string, unknown>)[format] = (...a: unknown[]) => {
        counts[format] = (counts[format] ?? 0) + 1;
        return encode(...a);
      };
    }
    return image;
  }) as typeof sharp;
}

describe("encoding to fit, round after round", () => {
  it("a format far larger than the smallest is dropped after the first round; the result still fits", async () => {
    const [width, height] = [600, 400];
    // Random pixels: a GIF's 256 colours make them far larger than a JPEG does.
    const pixels = { data: randomBytes(width * height * 3), width, height, channels: 3 as const };
    const counts: Record<string, number> = {};
    const fit = await encodeToFit(countingSharp(counts), pixels, ["image/gif", "image/png", "image/jpeg"], 4000);
    expect(fit).not.toBeNull();
    expect(fit!.bytes.length).toBeLessThanOrEqual(4000);
    expect(fit!.mime).toBe("image/jpeg");
    expect(counts.jpeg).toBeGreaterThan(1);
    expect(counts.gif).toBe(1);
    expect(counts.png).toBe(1);
  });
});
