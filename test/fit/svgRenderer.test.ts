/**
 * The child process an SVG is drawn in: it never outlives the proxy (ended gracefully or killed
 * outright while it draws), and it runs whatever NODE_OPTIONS the proxy was started with.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ImageQueue } from "../../src/fit/imageQueue.js";
import { renderSvgInChild } from "../../src/fit/images/svgRenderers.js";
import { IMAGE_FORMATS } from "../../src/fit/settings.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { svg } from "../fixtures/images/makeImages.js";
import { worstLagDuring } from "../helpers/eventLoopLag.js";
import { CLI, IMAGE_SERVER } from "../helpers/paths.js";
import { signalProcess } from "../helpers/pids.js";
import { SLOW_SVG, svgRenderersOf } from "../helpers/svgRenderers.js";
import { tempDir } from "../helpers/tempDir.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `pid` still runs (a zombie waiting for a parent that does not reap it has ended). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe("the SVG renderer's child process", () => {
  it.each(["SIGTERM", "SIGKILL"] as const)(
    "ends with the proxy when it gets %s while drawing",
    async (signal) => {
      const dir = tempDir("mcpn-svg-");
      writeFileSync(join(dir, "slow.svg"), SLOW_SVG);
      const config = join(dir, "proxy.config.json");
      writeFileSync(
        config,
        JSON.stringify({
          mcpServers: { img: { command: process.execPath, args: [IMAGE_SERVER], env: { FIXTURE_IMAGES_DIR: dir } } },
          normalize: { images: true },
        }),
      );
      const proxy = spawn(process.execPath, [CLI, "stdio", "--config", config, "--server", "img"], {
        stdio: ["pipe", "ignore", "ignore"],
      });
      const exited = new Promise((resolve) => proxy.once("exit", resolve));
      const send = (message: unknown) => proxy.stdin.write(`${JSON.stringify(message)}\n`);
      let renderer: number | undefined;
      try {
        send({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
        });
        send({ jsonrpc: "2.0", method: "notifications/initialized" });
        send({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "image", arguments: { file: "slow.svg", mimeType: "image/svg+xml" } },
        });
        for (let waited = 0; renderer === undefined && waited < 15_000; waited += 100) {
          await sleep(100);
          renderer = svgRenderersOf(proxy.pid!)[0];
        }
        expect(renderer, "a renderer started").toBeDefined();
        proxy.kill(signal);
        await exited;
        for (let waited = 0; alive(renderer!) && waited < 5_000; waited += 100) await sleep(100);
        expect(alive(renderer!), "the renderer still draws after the proxy ended").toBe(false);
      } finally {
        proxy.kill("SIGKILL");
        if (renderer !== undefined && alive(renderer)) signalProcess(renderer, "SIGKILL");
      }
    },
    30_000,
  );

  it("draws under NODE_OPTIONS that make `node -e` read ES modules", async () => {
    const before = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = "--experimental-default-type=module";
    try {
      const queue = new ImageQueue({ concurrency: 1, timeoutMs: 20_000, maxPixels: DEFAULT_LIMITS.imageMaxPixels });
      const settings = { maxDimension: 100, maxBytes: 1024 * 1024, formats: IMAGE_FORMATS, resources: false };
      const fit = await queue.fit(svg(400, 200, ""), settings);
      expect(fit.kind, fit.kind === "fitted" ? "" : fit.reason).toBe("fitted");
    } finally {
      if (before === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = before;
    }
  });

  it("parses an SVG off the proxy's thread: <use> nested in <use> (seconds and gigabytes to parse) holds nothing up", async () => {
    // 100,000 copies of a 400-segment path through five levels of ten <use>: a few kilobytes.
    let d = "M0 0";
    for (let i = 0; i < 400; i++) d += ` L${(i * 7) % 100} ${(i * 13) % 100}`;
    let bomb = `<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><defs><g id="l0"><path d="${d}Z"/></g>`;
    for (let level = 1; level <= 5; level++)
      bomb += `<g id="l${level}">${`<use href="#l${level - 1}" x="1"/>`.repeat(10)}</g>`;
    bomb += '</defs><use href="#l5"/></svg>';
    const queue = new ImageQueue({ concurrency: 1, timeoutMs: 2_000, maxPixels: DEFAULT_LIMITS.imageMaxPixels });
    const settings = { maxDimension: 100, maxBytes: 1024 * 1024, formats: IMAGE_FORMATS, resources: false };
    const rssBefore = process.memoryUsage().rss;
    const { worstLagMs } = await worstLagDuring(() => queue.fit(Buffer.from(bomb), settings));
    expect(worstLagMs).toBeLessThan(500);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
  }, 30_000);

  it("takes a large SVG in time proportional to its size (its input is joined once)", async () => {
    const filler = "x".repeat(60 * 1024 * 1024);
    const large = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200"><!--${filler}--><rect width="400" height="200"/></svg>`;
    const started = Date.now();
    const drawn = await renderSvgInChild(large, { font: { loadSystemFonts: false }, maxDimension: 400 });
    expect(drawn).toMatchObject({ width: 400, height: 200, sourceWidth: 400, sourceHeight: 200 });
    // Joined chunk by chunk, 60 MB took tens of seconds; once, well under one.
    expect(Date.now() - started).toBeLessThan(8_000);
  }, 30_000);
});
