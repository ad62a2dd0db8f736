import { stat } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { ImageQueue } from "../../src/fit/imageQueue.js";
import { IMAGE_FORMATS } from "../../src/fit/settings.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { bigPng } from "../fixtures/images/makeImages.js";
import { SLOW_SVG, svgRenderersOf } from "../helpers/svgRenderers.js";

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

  it("waiting fits take turns by session: one session's many images do not hold another's behind them", async () => {
    const queue = new ImageQueue({ concurrency: 1, timeoutMs: 60_000, maxPixels: DEFAULT_LIMITS.imageMaxPixels });
    const png = await bigPng(400, 300);
    const many = new AbortController().signal;
    const other = new AbortController().signal;
    const done: string[] = [];
    const fits = Array.from({ length: 6 }, (_, i) =>
      queue.fit(png, SETTINGS, undefined, many).then(() => done.push(`many ${i}`)),
    );
    const late = queue.fit(png, SETTINGS, undefined, other).then(() => done.push("other"));
    await Promise.all([...fits, late]);
    // The first of the six was running when the other came; the other goes right after the second.
    expect(done.indexOf("other")).toBe(2);
  });

  it("turns stay the session's when each result can be cancelled on its own; a cancel gives up its own fits, saying so", async () => {
    const queue = new ImageQueue({ concurrency: 1, timeoutMs: 60_000, maxPixels: DEFAULT_LIMITS.imageMaxPixels });
    const png = await bigPng(400, 300);
    const session = new AbortController().signal;
    const other = new AbortController().signal;
    const requests = Array.from({ length: 6 }, () => new AbortController());
    const done: string[] = [];
    const fits = requests.map((request, i) =>
      queue.fit(png, SETTINGS, undefined, session, request.signal).then((fit) => {
        done.push(`many ${i}`);
        return fit;
      }),
    );
    const late = queue.fit(png, SETTINGS, undefined, other).then(() => done.push("other"));
    requests[5]!.abort();
    const outcomes = await Promise.all(fits);
    await late;
    expect(outcomes[5]).toMatchObject({ kind: "warn", action: "warn-image-timeout" });
    expect((outcomes[5] as { reason: string }).reason).toMatch(/^not fitted: the host cancelled its request/);
    expect(outcomes.slice(0, 5).every((fit) => fit.kind !== "warn")).toBe(true);
    // As with one signal for the session: the other session's image goes right after the second.
    expect(done.filter((name) => name !== "many 5").indexOf("other")).toBe(2);
  });

  it("thousands of fits waiting on one session's end are queued and given up at once, not one listener each", async () => {
    const queue = new ImageQueue({ concurrency: 1, timeoutMs: 60_000, maxPixels: DEFAULT_LIMITS.imageMaxPixels });
    const png = await bigPng(40, 30);
    const session = new AbortController();
    const started = performance.now();
    const fits = Array.from({ length: 20_000 }, () => queue.fit(png, SETTINGS, undefined, session.signal));
    const queued = performance.now() - started;
    session.abort();
    const outcomes = await Promise.all(fits);
    expect(outcomes.filter((fit) => fit.kind === "warn" && fit.reason.includes("its session ended")).length).toBe(
      outcomes.length - outcomes.filter((fit) => fit.kind !== "warn").length,
    );
    expect(outcomes.filter((fit) => fit.kind === "warn").length).toBeGreaterThan(19_990);
    // A listener each made queueing 20,000 take seconds (each add walked those before it).
    expect(queued).toBeLessThan(1500);
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

  it("an SVG still drawing when its fit is given up stops drawing: no thread, no core stays busy with it", async () => {
    const svg = Buffer.from(SLOW_SVG);
    const queue = new ImageQueue({ concurrency: 4, timeoutMs: 300, maxPixels: DEFAULT_LIMITS.imageMaxPixels });
    const fits = await Promise.all(Array.from({ length: 4 }, () => queue.fit(svg, SETTINGS)));
    for (const fit of fits) expect(fit).toMatchObject({ kind: "warn", action: "warn-image-timeout" });
    // File work shares libuv's four threads with native image work: it must not wait for the drawings.
    const fileWork = stat(".").then(() => "done");
    const waited = new Promise((resolve) => setTimeout(() => resolve("still waiting"), 5_000));
    expect(await Promise.race([fileWork, waited])).toBe("done");
    const deadline = Date.now() + 5_000;
    while ((queue.load.running > 0 || svgRenderersOf().length > 0) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(queue.load).toEqual({ running: 0, waiting: 0 });
    expect(svgRenderersOf()).toEqual([]);
  }, 20_000);
});
