/**
 * The fit layer under backpressure, against the flood fixture behind a real proxy with
 * `normalize.images` on: a host that has stopped reading asks for an image (fitted by the proxy)
 * and then for a flood of notifications. While the host does not read, the flooder is held back
 * (nothing piles up behind the fitted result in the proxy's memory); once it reads, it gets the
 * fitted image first, then every notification in order, then the flood's answer.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openHost, rssBytes, type RawMessage } from "../fixtures/hosts/rawHosts.mjs";
import { bigPng } from "../fixtures/images/makeImages.js";
import { FLOOD_COUNT, FLOOD_SERVER, holdFlood } from "../helpers/flood.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";
import { serveConfig } from "./helpers.js";

/**
 * A held session keeps about limits.hostBufferBytes; unbounded, the flood is ~46 MB of wire and
 * several times that in heap. The bound also leaves room for the image decoder's own memory
 * (libvips keeps its caches and threads after the fit), which backpressure.test.ts has no need of.
 */
const RSS_GROWTH_BOUND = 120 * 1024 * 1024;

describe("a result being fitted, then a flood, to a host that does not read", () => {
  let serve: ServeProcess;
  const dir = tempDir("mcpn-fitbp-");
  const png = join(dir, "big.png");
  beforeAll(async () => {
    writeFileSync(png, await bigPng(6000, 4000));
    serve = await serveConfig({
      mcpServers: { fl: { command: process.execPath, args: [FLOOD_SERVER] } },
      normalize: { images: true },
    });
  });
  afterAll(() => serve?.stop());

  it("ws: the flooder is held back; the host then gets the fitted image, every notification in order, the answer", async () => {
    const host = await openHost("ws", { url: serve.url, name: "fl" });
    const progressFile = join(dir, "ws.json");
    try {
      await host.initialize();
      // Everything the host receives, responses included, in the order it arrives.
      const arrived: RawMessage[] = [];
      const deliver = (host as unknown as { deliver: (m: RawMessage) => void }).deliver.bind(host);
      (host as unknown as { deliver: (m: RawMessage) => void }).deliver = (message) => {
        arrived.push(message);
        deliver(message);
      };
      const idleRss = rssBytes(serve.child.pid!)!;
      host.pause();
      const image = host.request("tools/call", { name: "image", arguments: { file: png } }, 120_000);
      // Awaited below; a failure before that must not leave it unhandled when the host closes.
      image.catch(() => {});
      const flood = await holdFlood(host, progressFile, { timeoutMs: 60_000 });
      expect(flood.held.written).toBeLessThan(FLOOD_COUNT / 2);
      expect(rssBytes(serve.child.pid!)! - idleRss).toBeLessThan(RSS_GROWTH_BOUND);

      host.resume();
      const [imageAnswer, floodAnswer] = await Promise.all([image, flood.answer]);
      const block = imageAnswer.result.content[0] as { type: string; data: string; mimeType: string };
      const fitted = await sharp(Buffer.from(block.data, "base64")).metadata();
      expect(Math.max(fitted.width, fitted.height)).toBe(1568);
      expect(floodAnswer.result.content[0].text).toBe(`flooded ${FLOOD_COUNT}`);

      // The image answer came first, then the flood's notifications 0, 1, 2, …, then its answer.
      expect(arrived[0]).toBe(imageAnswer);
      expect(arrived.at(-1)).toBe(floodAnswer);
      const between = arrived.slice(1, -1);
      expect(between).toHaveLength(FLOOD_COUNT);
      expect(between.every((m, i) => m.method === "notifications/message" && m.params.data.seq === i)).toBe(true);
    } finally {
      await host.close();
    }
  });
});
