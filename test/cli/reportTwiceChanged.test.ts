/**
 * A tool's image changed twice — a PNG the server labels image/jpeg, its type fixed by the engine,
 * then made a JPEG by the fit layer (`images.formats: ["image/jpeg"]`) — as `audit` and `report`
 * (over the log of a real `stdio` session) show it: one entry, filed by mime type under the type
 * it went out with. The upstream is the image fixture server, run as a child process.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { formatBytes } from "../../src/report/format.js";
import type { ReportModel } from "../../src/report/model.js";
import { CLI, IMAGE_SERVER } from "../helpers/paths.js";
import { connect, raw } from "../helpers/proxyProcess.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const dir = tempDir("mcpn-twice-");
const config = join(dir, "proxy.config.json");
const logFile = join(dir, "normalizer.jsonl");
const args = { file: "red.png", mimeType: "image/jpeg" };
let block: { type: string; data: string; mimeType: string };

beforeAll(async () => {
  const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: "#c83c3c" } })
    .png()
    .toBuffer();
  writeFileSync(join(dir, "red.png"), png);
  block = { type: "image", data: png.toString("base64"), mimeType: "image/jpeg" };
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        img: { command: process.execPath, args: [IMAGE_SERVER], env: { FIXTURE_IMAGES_DIR: dir } },
      },
      normalize: { images: { formats: ["image/jpeg"] } },
      log: { file: logFile },
    }),
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "stdio", "--config", config, "--server", "img"],
    stderr: "ignore",
  });
  const host = await connect(transport);
  const result = await raw(host.client, "tools/call", { name: "image", arguments: args });
  expect((result.content as Array<{ mimeType: string }>)[0]!.mimeType).toBe("image/jpeg");
  // close() returns once the proxy has exited: its log is written.
  await host.close();
}, 60_000);

/** The image block's bytes as it came in; what it went out as is in the report's totals. */
const bytesIn = (): number => Buffer.byteLength(JSON.stringify(block));

describe("an entry changed twice, by mime type", () => {
  it("report: one entry in the row of the type it went out with (image/jpeg), in md and html too", async () => {
    const run = await runCli(["report", logFile, "--format", "json"]);
    expect(run.code, run.stderr).toBe(0);
    const model = JSON.parse(run.stdout) as ReportModel;
    expect(model.totals).toMatchObject({ entries: 1, changed: 1, bytesBefore: bytesIn() });
    expect(model.byMime.map((r) => [r.key, r.entries, r.bytesBefore, r.bytesAfter])).toEqual([
      ["image/jpeg", 1, bytesIn(), model.totals.bytesAfter],
    ]);
    const md = (await runCli(["report", logFile])).stdout;
    const byMime = md.slice(md.indexOf("## By mime type"), md.indexOf("## By action"));
    expect(byMime).toContain("| image/jpeg |");
    expect(byMime).not.toContain("image/png");
    const html = (await runCli(["report", logFile, "--format", "html"])).stdout;
    const chart = html.slice(html.indexOf('id="chart-mime"'));
    expect(chart.slice(0, chart.indexOf("</section>"))).toContain("image/jpeg");
    expect(chart.slice(0, chart.indexOf("</section>"))).not.toContain("image/png");
  });

  it("report: top offenders says the bytes saved are on entries without a URI, not that there is nothing to save", async () => {
    const run = await runCli(["report", logFile, "--format", "json"]);
    const saved = (JSON.parse(run.stdout) as ReportModel).totals.saved;
    expect(saved).toBeGreaterThan(0);
    const said = `No URI row saved anything: the ${formatBytes(saved)} saved were on entries without a URI (a tool's blocks).`;
    const md = (await runCli(["report", logFile])).stdout;
    const offenders = md.slice(md.indexOf("## Top offenders"), md.indexOf("## By server"));
    expect(offenders).toContain(said);
    expect(md).not.toContain("Nothing to save.");
    const html = (await runCli(["report", logFile, "--format", "html"])).stdout;
    const section = html.slice(html.indexOf('<section id="offenders">'));
    expect(section.slice(0, section.indexOf("</section>"))).toContain(said.replace("'", "&#39;"));
    expect(html).not.toContain("Nothing to save.");
  });

  it("audit --call: the same row, and the same totals", async () => {
    const run = await runCli(
      ["audit", "--config", config, "--server", "img", "--call", `image=${JSON.stringify(args)}`, "--format", "json"],
      { timeoutMs: 60_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    const model = JSON.parse(run.stdout) as ReportModel;
    expect(model.totals).toMatchObject({ entries: 1, changed: 1, bytesBefore: bytesIn() });
    expect(model.byMime.map((r) => [r.key, r.entries, r.bytesBefore, r.bytesAfter])).toEqual([
      ["image/jpeg", 1, bytesIn(), model.totals.bytesAfter],
    ]);
  });
});
