import { describe, expect, it } from "vitest";
import { ImageQueue } from "../../src/fit/imageQueue.js";
import { IMAGE_FORMATS } from "../../src/fit/settings.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { bigPng } from "../fixtures/images/makeImages.js";

const SETTINGS = { maxDimension: 1568, maxBytes: 1024 * 1024, formats: IMAGE_FORMATS, resources: false };

describe("the image queue", () => {
  it("runs at most `concurrency` fits at once; the rest wait their turn", async () => {
    const queue = new ImageQueue({ concurrency: 1, timeoutMs: 60_000, maxPixels: DEFAULT_LIMITS.imageMaxPixels });
    const png = await bigPng(3000, 2000);
    const first = queue.fit(png, SETTINGS);
    const second = queue.fit(png, SETTINGS);
    await Promise.resolve();
    expect(queue.load).toEqual({ running: 1, waiting: 1 });
    expect((await first).kind).toBe("fitted");
    expect((await second).kind).toBe("fitted");
    expect(queue.load).toEqual({ running: 0, waiting: 0 });
  });

  it("answers a fit not done within the timeout with a warning, and the image goes as it was", async () => {
    const queue = new ImageQueue({ concurrency: 1, timeoutMs: 5, maxPixels: DEFAULT_LIMITS.imageMaxPixels });
    const fit = await queue.fit(await bigPng(6000, 4000), SETTINGS);
    expect(fit).toMatchObject({ kind: "warn", action: "warn-image-timeout" });
    expect(fit.reason).toContain("limits.fitTimeoutMs");
    // The slot comes back once sharp's work ends, so the queue does not stay blocked.
    expect(queue.load.running).toBe(1);
    const deadline = Date.now() + 20_000;
    while (queue.load.running > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(queue.load).toEqual({ running: 0, waiting: 0 });
  });
});
