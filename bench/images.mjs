#!/usr/bin/env node
/**
 * Image fitting figures (`npm run bench` runs this after the proxy suite; `--quick` for a short
 * run). Part one, in process (dist/): the cost of fitting each kind of image, and the cost of an
 * image already within the limits against a bare header read (sharp `metadata()`) of the same
 * bytes and against a result with no image at all. Part two, through `serve` over /mcp with the
 * image fixture upstream: a 6000×4000 PNG per tools/call with fitting on, against the same call
 * on a server with fitting off, and the proxy's peak RSS during each stretch.
 * Writes bench/results/images.json; prints one line per figure.
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import sharp from "sharp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";
import { fitImage } from "../dist/fit/images/fitImage.js";
import { fitResult } from "../dist/fit/fitResult.js";
import { FitPolicy } from "../dist/fit/fitPolicy.js";
import { createFitRuntime } from "../dist/fit/runtime.js";
import { fitLimitsOf } from "../dist/config/fitPolicy.js";
import { DEFAULT_FIT, DEFAULT_IMAGES, DEFAULT_LIMITS } from "../dist/config/defaults.js";
import { median } from "./lib/stats.mjs";
import { measureProcess } from "./suite/procStats.mjs";
import { ROOT } from "./suite/paths.mjs";
import { switchesOrExit } from "./lib/flags.mjs";

const USAGE = `Usage: node bench/images.mjs [--quick]   (run \`npm run build\` first, or use \`npm run bench:images\`)

  --quick      a short run (fewer rounds and calls)
  -h, --help   this help

Writes bench/results/images.json and prints one line per figure.
`;
const quick = switchesOrExit(process.argv.slice(2), "bench/images.mjs", USAGE, ["--quick"]).has("--quick");
const ROUNDS = quick ? 3 : 10;
const SMALL_ROUNDS = quick ? 100 : 1000;
const PROXY_CALLS = quick ? 4 : 12;
const ICONS = 100;
const ICON_ROUNDS = quick ? 1 : 3;
const log = (line) => process.stdout.write(`${line}\n`);
const SETTINGS = {
  maxDimension: 1568,
  maxBytes: 1024 * 1024,
  formats: ["image/png", "image/jpeg", "image/gif", "image/webp"],
  resources: false,
};

function grainy(width, height) {
  const data = Buffer.alloc(width * height * 3);
  let seed = 7;
  for (let i = 0; i < data.length; i += 3) {
    const p = i / 3;
    const x = p % width;
    const y = (p / width) | 0;
    seed = (seed * 1103515245 + 12345) >>> 0;
    const grain = (seed >>> 24) % 24;
    data[i] = (x * 255) / width + grain;
    data[i + 1] = (y * 255) / height + grain;
    data[i + 2] = 128 + 100 * Math.sin((x + y) / 150) + grain;
  }
  return data;
}

async function images() {
  const block = await sharp({ create: { width: 600, height: 400, channels: 3, background: "#d04020" } })
    .png()
    .toBuffer();
  const bigPng = await sharp({ create: { width: 6000, height: 4000, channels: 3, background: "#f4f6f8" } })
    .composite([{ input: block, left: 300, top: 200 }])
    .png()
    .toBuffer();
  const photoJpeg = await sharp(grainy(4000, 3000), { raw: { width: 4000, height: 3000, channels: 3 } })
    .jpeg({ quality: 92 })
    .toBuffer();
  const svg = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="4000" height="1000"><rect width="4000" height="1000" fill="#0a0"/><circle cx="2000" cy="500" r="400" fill="#fff"/></svg>`,
  );
  const tiff = await sharp(grainy(2000, 1500), { raw: { width: 2000, height: 1500, channels: 3 } })
    .tiff()
    .toBuffer();
  const small = await sharp({ create: { width: 800, height: 600, channels: 3, background: "#2266aa" } })
    .png()
    .toBuffer();
  return { bigPng, photoJpeg, svg, tiff, small };
}

async function timeAsync(fn, rounds) {
  await fn();
  const times = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return median(times);
}

/** Starts `count` `node -e ""` processes, `atOnce` at a time, each to its end. */
async function startNodes(count, atOnce) {
  let next = 0;
  const one = () =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
      child.once("error", reject);
      child.once("exit", resolve);
    });
  await Promise.all(
    Array.from({ length: atOnce }, async () => {
      while (next++ < count) await one();
    }),
  );
}

async function inProcess(imgs) {
  const out = {};
  const opts = { maxPixels: 8192 * 8192 };
  for (const [name, bytes] of [
    ["png-6000x4000", imgs.bigPng],
    ["jpeg-4000x3000-photo", imgs.photoJpeg],
    ["svg-4000x1000", imgs.svg],
    ["tiff-2000x1500", imgs.tiff],
  ]) {
    const ms = await timeAsync(() => fitImage(bytes, SETTINGS, opts), ROUNDS);
    out[name] = { ms, bytesIn: bytes.length };
    log(`fit ${name} (${bytes.length} bytes): ${ms.toFixed(1)} ms per image (median of ${ROUNDS})`);
  }
  const session = {
    policy: new FitPolicy({ ...DEFAULT_FIT, images: true }, DEFAULT_IMAGES),
    runtime: createFitRuntime(fitLimitsOf({ limits: DEFAULT_LIMITS })),
    store: null,
  };
  // A result of many small SVG icons, fitted as the proxy fits them (its queue, two at a time),
  // against what starting and ending a `node` per icon costs alone, two at a time, in this run.
  const iconBlocks = Array.from({ length: ICONS }, (_, i) => ({
    type: "image",
    mimeType: "image/svg+xml",
    data: Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48"><circle cx="24" cy="24" r="${8 + (i % 16)}" fill="#${((i * 2654435761) >>> 8).toString(16).padStart(6, "0").slice(0, 6)}"/></svg>`,
    ).toString("base64"),
  }));
  const icons = await timeAsync(async () => {
    const fitted = await fitResult("tools/call", { content: iconBlocks }, null, session);
    if (fitted.changes.filter((c) => c.action === "fit-image").length !== ICONS) throw new Error("icons not fitted");
  }, ICON_ROUNDS);
  const nodeStarts = await timeAsync(() => startNodes(ICONS, 2), ICON_ROUNDS);
  out.svgIcons = { icons: ICONS, ms: icons, nodeStartsMs: nodeStarts, ratioToNodeStarts: icons / nodeStarts };
  log(
    `${ICONS} SVG icons in one result through fitResult: ${icons.toFixed(0)} ms; starting and ending a node per icon alone, two at a time: ${nodeStarts.toFixed(0)} ms (${(icons / nodeStarts).toFixed(2)}×; median of ${ICON_ROUNDS})`,
  );
  const withImage = { content: [{ type: "image", data: imgs.small.toString("base64"), mimeType: "image/png" }] };
  const textOnly = { content: [{ type: "text", text: "x".repeat(1000) }] };
  const header = await timeAsync(() => sharp(imgs.small).metadata(), SMALL_ROUNDS);
  const decodeAndHeader = await timeAsync(
    () => sharp(Buffer.from(withImage.content[0].data, "base64")).metadata(),
    SMALL_ROUNDS,
  );
  const inLimits = await timeAsync(() => fitResult("tools/call", withImage, null, session), SMALL_ROUNDS);
  const noImage = await timeAsync(async () => fitResult("tools/call", textOnly, null, session), SMALL_ROUNDS);
  out.inLimits = {
    fitResultMs: inLimits,
    headerReadMs: header,
    base64PlusHeaderMs: decodeAndHeader,
    noImageMs: noImage,
    ratioToHeaderRead: inLimits / header,
  };
  log(
    `in-limits 800×600 PNG (${imgs.small.length} bytes) through fitResult: ${(inLimits * 1000).toFixed(0)} µs; sharp metadata() alone ${(header * 1000).toFixed(0)} µs (${(inLimits / header).toFixed(2)}×), base64 decode + metadata ${(decodeAndHeader * 1000).toFixed(0)} µs; a text-only result ${(noImage * 1000).toFixed(1)} µs (no promise made)`,
  );
  return out;
}

async function startServe(configFile) {
  const child = spawn(
    process.execPath,
    [join(ROOT, "dist", "cli.js"), "serve", "--port", "0", "--config", configFile, "--log-level", "warn"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  child.stderr.on("data", (c) => (err += c));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 20_000);
    child.stdout.on("data", (c) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return {
    url,
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", resolve);
        child.kill("SIGTERM");
      }),
  };
}

async function throughProxy(imgs, dir) {
  writeFileSync(join(dir, "big.png"), imgs.bigPng);
  const upstream = {
    command: process.execPath,
    args: [join(ROOT, "test", "fixtures", "servers", "image-server.mjs")],
    env: { FIXTURE_IMAGES_DIR: dir },
  };
  const configFile = join(dir, "bench.config.json");
  writeFileSync(
    configFile,
    JSON.stringify({ mcpServers: { fit: { ...upstream, normalize: { images: true } }, off: upstream } }),
  );
  const serve = await startServe(configFile);
  const out = {};
  try {
    for (const name of ["off", "fit"]) {
      const client = new Client({ name: "bench", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${serve.url}/mcp/${name}`)));
      const call = () =>
        client.request(
          { method: "tools/call", params: { name: "image", arguments: { file: "big.png", mimeType: "image/png" } } },
          z.looseObject({}),
        );
      await call();
      const proc = measureProcess(serve.child.pid);
      const times = [];
      for (let i = 0; i < PROXY_CALLS; i++) {
        const start = performance.now();
        await call();
        times.push(performance.now() - start);
      }
      const stats = proc.stop();
      out[name] = {
        msPerCall: median(times),
        peakRssBytes: stats.peakRssBytes,
        rssBeforeBytes: stats.rssBeforeBytes,
        cpuSeconds: stats.cpuSeconds,
        rssMethod: stats.rssMethod,
      };
      await client.close();
    }
  } finally {
    await serve.stop();
  }
  const mib = (b) => (b === null ? "–" : `${(b / 1048576).toFixed(0)} MiB`);
  log(
    `6000×4000 PNG (${imgs.bigPng.length} bytes) per tools/call over /mcp: fitting on ${out.fit.msPerCall.toFixed(0)} ms, off ${out.off.msPerCall.toFixed(0)} ms (${(out.fit.msPerCall / out.off.msPerCall).toFixed(1)}×; median of ${PROXY_CALLS})`,
  );
  log(
    `proxy peak RSS while fitting it: ${mib(out.fit.peakRssBytes)} (before ${mib(out.fit.rssBeforeBytes)}); same calls with fitting off: ${mib(out.off.peakRssBytes)} (${out.fit.rssMethod})`,
  );
  return out;
}

const dir = mkdtempSync(join(tmpdir(), "mcpn-bench-img-"));
try {
  const imgs = await images();
  const results = {
    schema: "mcp-normalizer-bench-images/1",
    quick,
    at: new Date().toISOString(),
    inProcess: await inProcess(imgs),
    proxy: await throughProxy(imgs, dir),
  };
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(
    join(ROOT, "bench", "results", quick ? "images-quick.json" : "images.json"),
    `${JSON.stringify(results, null, 2)}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
