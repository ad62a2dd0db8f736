/**
 * Fitting results through the real proxy: an SDK client over stdio and over /mcp, an SDK
 * upstream (test/fixtures/servers/image-server.mjs) sending images made here with sharp, long
 * text and embedded resources. Checks what the host receives, that pages of a cut result are
 * served by the proxy (never by the upstream), and that every change is a record in the log.
 */
import { createServer, type Server } from "node:http";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IMAGE_SERVER } from "../helpers/paths.js";
import { connect, hostTransport, raw, startServe, type Connected, type ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";
import { runCli } from "../helpers/runCli.js";
import { alphaPng, bigPng, bmp24, bombPng, photoJpeg, smallPng, svg, tiff } from "../fixtures/images/makeImages.js";

const dir = tempDir("mcpn-fit-");
let server: Server;
let requests = 0;
let serve: ServeProcess;
const configFile = join(dir, "proxy.config.json");
const logFile = join(dir, "fit.log");
const MAX_RESULT = 4096;

async function meta(
  data: string,
): Promise<{ width: number; height: number; format: string; hasAlpha: boolean; bytes: number }> {
  const bytes = Buffer.from(data, "base64");
  const m = await sharp(bytes).metadata();
  return { width: m.width, height: m.height, format: m.format, hasAlpha: m.hasAlpha, bytes: bytes.length };
}

beforeAll(async () => {
  server = createServer((_req, res) => {
    requests++;
    res.end("x");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const files: Record<string, Buffer> = {
    "big.png": await bigPng(),
    "small.png": await smallPng(),
    "photo.jpg": await photoJpeg(4000, 3000),
    "alpha.png": await alphaPng(),
    "logo.svg": svg(
      3000,
      600,
      `<image href="http://127.0.0.1:${port}/x.png" width="10" height="10"/><image href="${join(dir, "small.png")}" width="10" height="10"/>`,
    ),
    "scan.tiff": await tiff(2000, 1500),
    "old.bmp": bmp24(640, 480),
    "bomb.png": await bombPng(),
    "broken.png": Buffer.from("this is not a png at all"),
  };
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
  const upstream = (env: Record<string, string>) => ({
    command: process.execPath,
    args: [IMAGE_SERVER],
    env: { FIXTURE_IMAGES_DIR: dir, ...env },
  });
  writeFileSync(
    configFile,
    JSON.stringify({
      mcpServers: {
        img: upstream({}),
        bare: upstream({ FIXTURE_NO_RESOURCES: "1" }),
        plain: { ...upstream({}), normalize: { images: false, embeddedResources: "keep", maxResultBytes: false } },
      },
      normalize: { images: { resources: true }, embeddedResources: "inline", maxResultBytes: MAX_RESULT },
      log: { file: logFile },
    }),
  );
  serve = await startServe(["--config", configFile]);
});

afterAll(async () => {
  await serve?.stop();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

describe.each(["stdio", "mcp"] as const)("fitting results through %s", (kind) => {
  let host: Connected;
  const open = (name: string): Promise<Connected> =>
    connect(hostTransport(kind, { url: serve.url, name, stdioArgs: ["--config", configFile, "--server", name] }));
  beforeAll(async () => {
    host = await open("img");
  });
  afterAll(async () => {
    await host?.close();
  });

  const image = async (file: string, mimeType: string) =>
    (
      (await raw(host.client, "tools/call", { name: "image", arguments: { file, mimeType } })).content as Array<{
        type: string;
        data: string;
        mimeType: string;
      }>
    )[0]!;

  it("a 6000×4000 PNG arrives as 1568×1045 PNG under maxBytes", async () => {
    const block = await image("big.png", "image/png");
    expect(block.mimeType).toBe("image/png");
    expect(await meta(block.data)).toMatchObject({ width: 1568, height: 1045, format: "png" });
    expect((await meta(block.data)).bytes).toBeLessThanOrEqual(1024 * 1024);
  });

  it("an image within the limits arrives byte-identical", async () => {
    const block = await image("small.png", "image/png");
    expect(block.data).toBe(readFileSync(join(dir, "small.png")).toString("base64"));
  });

  it("a photo JPEG over maxBytes arrives as a smaller JPEG; an alpha PNG keeps its alpha", async () => {
    const photo = await image("photo.jpg", "image/jpeg");
    expect(photo.mimeType).toBe("image/jpeg");
    expect(await meta(photo.data)).toMatchObject({ width: 1568, height: 1176, format: "jpeg" });
    const alpha = await image("alpha.png", "image/png");
    expect((await meta(alpha.data)).hasAlpha).toBe(true);
    expect(["image/png", "image/webp"]).toContain(alpha.mimeType);
  });

  it("SVG, TIFF and BMP arrive as PNG; the SVG's external references were never fetched", async () => {
    const logo = await image("logo.svg", "image/svg+xml");
    expect(logo.mimeType).toBe("image/png");
    expect(await meta(logo.data)).toMatchObject({ width: 1568, height: 314, format: "png" });
    expect(requests).toBe(0);
    const scan = await image("scan.tiff", "image/tiff");
    expect(["image/png", "image/jpeg"]).toContain(scan.mimeType);
    expect((await meta(scan.data)).format).not.toBe("tiff");
    const bmp = await image("old.bmp", "image/bmp");
    expect(bmp.mimeType).toBe("image/png");
    expect(await meta(bmp.data)).toMatchObject({ width: 640, height: 480, format: "png" });
  });

  it("a decompression bomb and undecodable bytes arrive unchanged", async () => {
    const bomb = await image("bomb.png", "image/png");
    expect(bomb.data).toBe(readFileSync(join(dir, "bomb.png")).toString("base64"));
    const broken = await image("broken.png", "image/png");
    expect(broken.data).toBe(readFileSync(join(dir, "broken.png")).toString("base64"));
  });

  it("a prompt message's image is fitted", async () => {
    const prompt = await raw(host.client, "prompts/get", {
      name: "image",
      arguments: { file: "big.png", mimeType: "image/png" },
    });
    const content = (prompt.messages as Array<{ content: { data: string; mimeType: string } }>)[0]!.content;
    expect(await meta(content.data)).toMatchObject({ width: 1568, height: 1045 });
  });

  it("a resources/read image blob is fitted when images.resources is on", async () => {
    const read = await raw(host.client, "resources/read", { uri: "img://big.png?type=image%2Fpng" });
    const entry = (read.contents as Array<{ blob: string; mimeType: string; uri: string }>)[0]!;
    expect(entry.uri).toBe("img://big.png?type=image%2Fpng");
    expect(await meta(entry.blob)).toMatchObject({ width: 1568, height: 1045 });
  });

  it("embedded resources are inlined: text → text block, image blob → (fitted) image block, a PDF stays embedded", async () => {
    const result = await raw(host.client, "tools/call", {
      name: "embedded",
      arguments: { file: "big.png", mimeType: "image/png" },
    });
    const [img, text, pdf] = result.content as Array<Record<string, unknown>>;
    // The block's other fields stay; the resource's _meta where the block has none.
    expect(img).toMatchObject({
      type: "image",
      mimeType: "image/png",
      _meta: { source: "camera" },
    });
    expect(await meta(img!.data as string)).toMatchObject({ width: 1568, height: 1045 });
    expect(text).toEqual({
      type: "text",
      text: "# Notes\n\nÜber alles 😀\n",
      annotations: { audience: ["assistant"] },
      _meta: { block: true },
    });
    expect(pdf).toMatchObject({ type: "resource", resource: { uri: "file:///doc.pdf", mimeType: "application/pdf" } });
  });

  it("a long tool result is cut to maxResultBytes with a link; the proxy serves the rest in pages that rebuild it exactly", async () => {
    const unit = "Grüße, 世界! 👩‍👩‍👧 ";
    const original = unit.repeat(1000);
    const result = await raw(host.client, "tools/call", { name: "long", arguments: { unit, repeat: 1000 } });
    const [head, link] = result.content as Array<Record<string, unknown>>;
    expect(head!.type).toBe("text");
    expect(Buffer.byteLength(head!.text as string)).toBeLessThanOrEqual(MAX_RESULT);
    expect(link).toMatchObject({ type: "resource_link", mimeType: "text/plain" });
    expect(link!.description).toMatch(/resources\/read/);
    let text = head!.text as string;
    let uri: string | null = link!.uri as string;
    let pages = 0;
    while (uri !== null) {
      const page = await raw(host.client, "resources/read", { uri });
      const contents = page.contents as Array<{ uri: string; mimeType: string; text: string }>;
      expect(Buffer.byteLength(contents[0]!.text)).toBeLessThanOrEqual(MAX_RESULT);
      text += contents[0]!.text;
      uri = contents[1] === undefined ? null : contents[1].text.trim();
      pages++;
    }
    expect(pages).toBeGreaterThan(5);
    expect(text).toBe(original);
    // The upstream never saw a page read.
    const reads = JSON.parse(
      ((await raw(host.client, "tools/call", { name: "reads" })).content as Array<{ text: string }>)[0]!.text,
    ) as string[];
    expect(reads.filter((read) => read.startsWith("mcp-normalizer:"))).toEqual([]);
  });

  it("another session's page URI gets a clear resources/read error", async () => {
    const result = await raw(host.client, "tools/call", { name: "long", arguments: { unit: "x", repeat: 10_000 } });
    const uri = (result.content as Array<{ uri?: string }>)[1]!.uri!;
    const other = await open("img");
    try {
      await expect(raw(other.client, "resources/read", { uri })).rejects.toThrow(/no such page in this session/);
    } finally {
      await other.close();
    }
  });

  it("an upstream linking to one of the proxy's own pages does not take its reads", async () => {
    const result = await raw(host.client, "tools/call", { name: "long", arguments: { unit: "h", repeat: 10_000 } });
    const uri = (result.content as Array<{ uri?: string }>)[1]!.uri!;
    await raw(host.client, "tools/call", { name: "link", arguments: { uri } });
    const page = await raw(host.client, "resources/read", { uri });
    expect((page.contents as Array<{ text: string }>)[0]!.text).toMatch(/^h+$/);
    const reads = JSON.parse(
      ((await raw(host.client, "tools/call", { name: "reads" })).content as Array<{ text: string }>)[0]!.text,
    ) as string[];
    expect(reads).not.toContain(uri);
  });

  it("an upstream without the resources capability: the proxy declares it and answers resources/list itself", async () => {
    const bare = await open("bare");
    try {
      expect(bare.client.getServerCapabilities()?.resources).toEqual({});
      expect(await raw(bare.client, "resources/list")).toEqual({ resources: [] });
      const result = await raw(bare.client, "tools/call", { name: "long", arguments: { unit: "y", repeat: 9000 } });
      const uri = (result.content as Array<{ uri?: string }>)[1]!.uri!;
      const page = await raw(bare.client, "resources/read", { uri });
      expect((page.contents as Array<{ text: string }>)[0]!.text).toBe("y".repeat(MAX_RESULT));
    } finally {
      await bare.close();
    }
  });

  it("a server whose own settings turn fitting off passes everything as it was", async () => {
    const plain = await open("plain");
    try {
      const block = (
        (
          await raw(plain.client, "tools/call", {
            name: "image",
            arguments: { file: "big.png", mimeType: "image/png" },
          })
        ).content as Array<{ data: string }>
      )[0]!;
      expect(block.data).toBe(readFileSync(join(dir, "big.png")).toString("base64"));
      const long = await raw(plain.client, "tools/call", { name: "long", arguments: { unit: "z", repeat: 9000 } });
      expect(long.content).toEqual([{ type: "text", text: "z".repeat(9000) }]);
    } finally {
      await plain.close();
    }
  });
});

describe("records", () => {
  it("every fit is a record in the log and in /metrics", async () => {
    // Records are flushed in batches; the serve process has handled the /mcp half by now.
    const deadline = Date.now() + 10_000;
    let actions = new Set<string>();
    while (Date.now() < deadline) {
      actions = new Set(
        readFileSync(logFile, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => (JSON.parse(line) as { action?: string }).action ?? ""),
      );
      if (
        ["fit-image", "inline-resource", "cut-result", "warn-image-too-many-pixels", "warn-image-undecodable"].every(
          (a) => actions.has(a),
        )
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect([...actions]).toEqual(
      expect.arrayContaining([
        "fit-image",
        "inline-resource",
        "cut-result",
        "warn-image-too-many-pixels",
        "warn-image-undecodable",
      ]),
    );
    const line = readFileSync(logFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((r) => r.action === "fit-image" && r.mimeBefore === "image/png")!;
    expect(line).toMatchObject({ server: "img", method: "tools/call", applied: true });
    expect(line.bytesAfter as number).toBeLessThan(line.bytesBefore as number);
    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    expect(metrics).toMatch(/mcp_normalizer_entries_total\{[^}]*action="fit-image"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/mcp_normalizer_entries_total\{[^}]*action="cut-result"[^}]*\} [1-9]/);
  });
});

describe("audit", () => {
  it("reports the fit layer's changes for a --call result", async () => {
    const run = await runCli(
      [
        "audit",
        "--format",
        "json",
        "--config",
        configFile,
        "--server",
        "img",
        "--call",
        "image",
        "--args",
        JSON.stringify({ file: "big.png", mimeType: "image/png" }),
      ],
      { timeoutMs: 60_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { totals: { actions: Record<string, number>; saved: number } };
    expect(report.totals.actions["fit-image"]).toBe(1);
    expect(report.totals.saved).toBeGreaterThan(0);
  });
});
