/**
 * The HTML report in a real headless Chromium, driven by playwright-core: the browser
 * test/helpers/chromium.ts finds (MCPN_CHROMIUM, a system Chromium, else the one
 * @sparticuz/chromium ships). A real audit of the fixture upstream (the whole corpus) is rendered to a file;
 * the test asserts on what the browser renders — the numbers in the tables, the bars and their
 * sizes, no network fetch, nothing injected by hostile URIs — and keeps a screenshot in
 * test/artifacts/report.png.
 */
import { testPolicy } from "../helpers/policy.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAudit } from "../../src/cli/audit/runAudit.js";
import { ReportAggregator } from "../../src/report/aggregate.js";
import { formatBytes, formatCount } from "../../src/report/format.js";
import type { ReportModel } from "../../src/report/model.js";
import { renderHtml } from "../../src/report/renderHtml.js";
import { createUpstreamTransport } from "../../src/transports/upstream/index.js";
import { loadCorpus } from "../fixtures/corpus/index.js";
import { findChromium } from "../helpers/chromium.js";
import { FIXTURE_SERVER, ROOT } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempDir.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";

const ARTIFACTS = join(ROOT, "test", "artifacts");

let browser: Browser;
let page: Page;
let model: ReportModel;
let htmlFile: string;
const requests: string[] = [];

beforeAll(async () => {
  const found = await findChromium();
  console.log(`[browser] ${found.source}: ${found.executablePath}`);
  const dir = tempDir("mcpn-browser-");
  const corpusFile = join(dir, "corpus.json");
  writeFileSync(
    corpusFile,
    JSON.stringify(
      loadCorpus()
        .filter((c) => Object.keys(c.policy).length === 0)
        .map((c) => ({ name: c.name, input: c.input })),
    ),
  );
  const transport = createUpstreamTransport(
    {
      command: process.execPath,
      args: [FIXTURE_SERVER],
      env: { FIXTURE_CORPUS: corpusFile },
    },
    { maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes },
  );
  ({ model } = await runAudit({
    transport,
    server: "fixture",
    upstream: "node fixture-server.mjs",
    policy: testPolicy({}),
    requestTimeoutMs: DEFAULT_LIMITS.requestTimeoutMs,
  }));
  mkdirSync(ARTIFACTS, { recursive: true });
  htmlFile = join(ARTIFACTS, "report.html");
  writeFileSync(htmlFile, renderHtml(model));
  browser = await chromium.launch({
    executablePath: found.executablePath,
    ...(found.env === undefined ? {} : { env: found.env }),
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("request", (request) => requests.push(request.url()));
  await page.goto(pathToFileURL(htmlFile).href, { waitUntil: "load" });
}, 90_000);

afterAll(async () => {
  await browser?.close();
});

describe("the HTML report in Chromium", () => {
  it("loads from disk with no other request", () => {
    expect(requests).toEqual([pathToFileURL(htmlFile).href]);
  });

  it("the summary shows the model's totals", async () => {
    const t = model.totals;
    expect(t.saved).toBeGreaterThan(0);
    await expect(page.locator('[data-metric="before"] .value').textContent()).resolves.toBe(formatBytes(t.bytesBefore));
    await expect(page.locator('[data-metric="after"] .value').textContent()).resolves.toBe(formatBytes(t.bytesAfter));
    await expect(page.locator('[data-metric="saved"] .exact').textContent()).resolves.toContain(
      `${formatCount(t.saved)} B`,
    );
    await expect(page.locator('[data-metric="resources"] .value').textContent()).resolves.toBe(
      `${formatCount(model.scope!.read)} + ${formatCount(model.scope!.called)}`,
    );
    expect(model.scope!.read).toBe(model.resources!.listed);
  });

  it("the top offenders table has the model's rows and numbers, in order", async () => {
    const rows = page.locator("#top-offenders tbody tr");
    await expect(rows.count()).resolves.toBe(model.topOffenders.length);
    const rendered = await rows.evaluateAll((trs) =>
      trs.map((tr) => {
        const cells = [...tr.querySelectorAll("td")];
        return {
          uri: cells[0]!.textContent,
          saved: Number(cells[6]!.getAttribute("data-value")),
          savedText: cells[6]!.textContent,
        };
      }),
    );
    expect(rendered).toEqual(
      model.topOffenders.map((r) => ({ uri: r.uri, saved: r.saved, savedText: formatBytes(r.saved) })),
    );
  });

  it("bars are drawn for every server and mime type, after never longer than before where bytes were saved", async () => {
    const bars = async (chart: string) =>
      page.locator(`${chart} rect.bar`).evaluateAll((rects) =>
        rects.map((r) => ({
          key: r.getAttribute("data-key"),
          cls: r.getAttribute("class"),
          bytes: Number(r.getAttribute("data-bytes")),
          width: r.getBoundingClientRect().width,
          height: r.getBoundingClientRect().height,
        })),
      );
    const server = await bars("#chart-server");
    expect(server.map((b) => [b.key, b.cls, b.bytes])).toEqual(
      model.byServer.flatMap((r) => [
        [r.key, "bar before", r.bytesBefore],
        [r.key, "bar after", r.bytesAfter],
      ]),
    );
    const mime = await bars("#chart-mime");
    expect(mime.length).toBe(2 * Math.min(model.byMime.length, 12));
    for (const list of [server, mime]) {
      for (const bar of list) {
        expect(bar.height).toBeGreaterThan(4);
        if (bar.bytes > 0) expect(bar.width).toBeGreaterThan(0);
      }
    }
    const widest = Math.max(...mime.map((b) => b.width));
    const biggest = mime.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    expect(biggest.width).toBe(widest);
    const [before, after] = server;
    expect(after!.width).toBeLessThan(before!.width);
    // The savings bar: the saved part's share of the drawn width is the savings share.
    const savings = await page
      .locator("#savings rect.bar")
      .evaluateAll((rects) => rects.map((r) => r.getBoundingClientRect().width));
    expect(savings[1]! / (savings[0]! + savings[1]!)).toBeCloseTo(model.totals.shareSaved, 2);
  });

  it("fits the window (no horizontal scrolling) and is kept as a screenshot", async () => {
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    expect(overflow).toBeLessThanOrEqual(0);
    // The first screens: summary, savings, both charts and the top offenders.
    await page.setViewportSize({ width: 1280, height: 1700 });
    const png = await page.screenshot({ path: join(ARTIFACTS, "report.png") });
    expect(png.subarray(1, 4).toString()).toBe("PNG");
  });

  it("draws its text (a browser without usable fonts lays text out but paints nothing)", async () => {
    const title = page.locator("h1");
    const box = await title.boundingBox({ timeout: 5_000 });
    expect(box?.width).toBeGreaterThan(0);
    expect(box?.height).toBeGreaterThan(0);
    const painted = await page.screenshot({ clip: box!, timeout: 5_000 });
    await title.evaluate((el) => ((el as unknown as { style: { color: string } }).style.color = "transparent"));
    const blank = await page.screenshot({ clip: box!, timeout: 5_000 });
    await title.evaluate((el) => ((el as unknown as { style: { color: string } }).style.color = ""));
    expect(painted.equals(blank)).toBe(false);
  });

  it("hostile URIs render as text: no element injected, no script run", async () => {
    const agg = new ReportAggregator();
    const evil = `file:///x"><img src=x onerror="document.title='pwned'"><b>bold</b>`;
    agg.add({
      server: "s<b>",
      method: "resources/read",
      uri: evil,
      action: "unwrap-blob",
      mimeBefore: "text/plain",
      mimeAfter: "text/plain",
      bytesBefore: 100,
      bytesAfter: 50,
      saved: 50,
    });
    const other = await browser.newPage();
    await other.setContent(
      renderHtml(
        agg.toModel({ kind: "log", source: { files: ["<i>f</i>"] }, generatedAt: "2026-01-01T00:00:00.000Z" }),
      ),
    );
    await expect(other.locator("img, b, i").count()).resolves.toBe(0);
    await expect(other.title()).resolves.toBe("Size report");
    await expect(other.locator("#top-offenders td.uri").textContent()).resolves.toBe(evil);
    await other.close();
  });
});
