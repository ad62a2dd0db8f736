/**
 * The fit layer inside the normalizing decorator, in process: results without images are handed
 * on synchronously, a result with images holds what comes after it (order kept), the upstream's
 * close waits for it, and pages of a cut result are served without reaching the upstream.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolResultSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { withNormalization, type NormalizationEvent } from "../../src/index.js";
import { bigPng } from "../fixtures/images/makeImages.js";
import { decoratorPair, fitPair } from "../helpers/decoratorPair.js";
import { IMAGE_SERVER } from "../helpers/paths.js";
import { waitFor } from "../helpers/polling.js";
import { SLOW_SVG, svgRenderersOf } from "../helpers/svgRenderers.js";
import { tempDir } from "../helpers/tempDir.js";

describe("the fit layer in the decorator", () => {
  it("hands a result without images on synchronously", async () => {
    const { upstream, transport, received } = await fitPair({ policy: { images: true, maxResultBytes: 2048 } });
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } });
    // InMemoryTransport delivers synchronously inside send: the result must be there right after.
    await upstream.send({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "short" }] } });
    expect(received).toHaveLength(1);
  });

  it("keeps order behind a result whose image is being fitted, and defers the upstream's close", async () => {
    const { upstream, transport, received, events } = await fitPair({ policy: { images: true } });
    let closed = false;
    transport.onclose = () => (closed = true);
    const png = (await bigPng(4000, 3000)).toString("base64");
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shot" } });
    await transport.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo" } });
    await upstream.send({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "image", data: png, mimeType: "image/png" }] },
    });
    await upstream.send({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "after" }] } });
    await upstream.send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } });
    await upstream.close();
    expect(received).toHaveLength(0);
    expect(closed).toBe(false);
    await waitFor(() => closed);
    expect(received.map((m) => ("id" in m ? m.id : "note"))).toEqual([1, 2, "note"]);
    const image = (received[0] as unknown as { result: { content: Array<{ data: string }> } }).result.content[0]!.data;
    expect(image.length).toBeLessThan(png.length);
    expect(events.find((e) => e.id === 1)!.changes.map((c) => c.action)).toEqual(["fit-image"]);
  });

  it("serves the pages of a cut result itself; the upstream never sees the read", async () => {
    const { upstream, transport, received, toUpstream } = await fitPair({ policy: { maxResultBytes: 2048 } });
    const text = "é".repeat(5000);
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "long" } });
    await upstream.send({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text }] } });
    const content = (received[0] as unknown as { result: { content: Array<{ text?: string; uri?: string }> } }).result
      .content;
    let whole = content[0]!.text!;
    let uri: string | undefined = content[1]!.uri;
    let id = 10;
    while (uri !== undefined) {
      const before = received.length;
      await transport.send({ jsonrpc: "2.0", id, method: "resources/read", params: { uri } });
      await waitFor(() => received.length > before);
      const contents = (
        received[received.length - 1] as unknown as { id: number; result: { contents: Array<{ text: string }> } }
      ).result.contents;
      whole += contents[0]!.text;
      uri = contents[1]?.text.trim();
      id++;
    }
    expect(whole).toBe(text);
    expect(toUpstream.filter((m) => "method" in m && m.method === "resources/read")).toEqual([]);
  });
});

describe("an entry both the engine and the fit layer change", () => {
  it("is two records, the second chained (its bytes before are what the first left)", async () => {
    const { upstream, transport, events } = await fitPair({ policy: { images: true } });
    const png = (await bigPng(3000, 2000)).toString("base64");
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shot" } });
    // A PNG labelled JPEG: the engine fixes the type, then the fit layer makes it smaller.
    await upstream.send({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "image", data: png, mimeType: "image/jpeg" }] },
    });
    await waitFor(() => events.some((e) => e.id === 1));
    const changes = events.find((e) => e.id === 1)!.changes;
    expect(changes.map((c) => [c.action, c.chained])).toEqual([
      ["fix-mime", undefined],
      ["fit-image", true],
    ]);
    expect(changes[1]!.bytesBefore).toBe(changes[0]!.bytesAfter);
  });

  it("an embedded resource's image: both records measure the resource at their path, not the block around it", async () => {
    const { upstream, transport, received, events } = await fitPair({ policy: { images: { resources: true } } });
    const png = (await bigPng(3000, 2000)).toString("base64");
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shot" } });
    await upstream.send({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "resource", resource: { uri: "x:/shot.png", mimeType: "image/jpeg", blob: png } }] },
    });
    await waitFor(() => events.some((e) => e.id === 1));
    const changes = events.find((e) => e.id === 1)!.changes;
    expect(changes.map((c) => [c.path, c.action, c.chained])).toEqual([
      ["content[0].resource", "fix-mime", undefined],
      ["content[0].resource", "fit-image", true],
    ]);
    expect(changes[1]!.bytesBefore).toBe(changes[0]!.bytesAfter);
    const sent = received.find((m) => (m as { id?: unknown }).id === 1) as unknown as {
      result: { content: Array<{ resource: Record<string, unknown> }> };
    };
    expect(changes[1]!.bytesAfter).toBe(Buffer.byteLength(JSON.stringify(sent.result.content[0]!.resource)));
  });

  it("a read of two images: each chained record right after the one it continues; report and /metrics agree", async () => {
    for (const dryRun of [false, true]) {
      const events: NormalizationEvent[] = [];
      const { upstream, transport } = await decoratorPair({
        policy: { dryRun },
        fit: { policy: { images: { resources: true } } },
        onNormalized: (e) => events.push(e),
      });
      const big = (await bigPng(3000, 2000)).toString("base64");
      const small = (await bigPng(40, 30)).toString("base64");
      await transport.send({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "x:/a.png" } });
      await upstream.send({
        jsonrpc: "2.0",
        id: 1,
        result: {
          contents: [
            { uri: "x:/a.png", mimeType: "image/jpeg", blob: big },
            { uri: "x:/b.png", mimeType: "image/jpeg", blob: small },
          ],
        },
      });
      await waitFor(() => events.some((e) => e.id === 1));
      const event = events.find((e) => e.id === 1)!;
      expect(event.changes.map((c) => `${c.path} ${c.action}${c.chained ? " chained" : ""}`)).toEqual([
        "contents[0] fix-mime",
        "contents[0] fit-image chained",
        "contents[1] fix-mime",
      ]);
      const { toLogRecords } = await import("../../src/observe/logRecord.js");
      const { parseLogLine } = await import("../../src/report/parseLogLine.js");
      const { ReportAggregator } = await import("../../src/report/aggregate.js");
      const aggregator = new ReportAggregator();
      for (const record of toLogRecords(event, { server: "fx", id: "fx-1" })) {
        const parsed = parseLogLine(JSON.stringify(record));
        if (parsed.kind !== "record") continue;
        // The proxy's own chained records continue what the record before them left, dry run or not.
        expect(aggregator.chainBreak(parsed.fact), `dryRun ${dryRun}`).toBeUndefined();
        aggregator.add(parsed.fact);
      }
      const model = aggregator.toModel({ kind: "log", source: {}, generatedAt: "now" });
      const first = event.changes[0]!;
      const before = first.bytesBefore + event.changes[2]!.bytesBefore;
      expect(model.totals, `dryRun ${dryRun}`).toMatchObject({ entries: 2, bytesBefore: before });
      for (const row of [...model.byMime, ...model.byMethod, ...model.byServer, ...model.byUri]) {
        expect(row.entries, `${"key" in row ? row.key : row.uri} (dryRun ${dryRun})`).toBeGreaterThan(0);
        expect(row.bytesAfter).toBeGreaterThan(0);
      }
      const { ProxyMetrics } = await import("../../src/observe/metrics.js");
      const metrics = new ProxyMetrics({ defaultMetrics: false });
      metrics.observe(event, "fx");
      const text = (await metrics.render()).body;
      expect(text).toMatch(/mcp_normalizer_entries_total\{[^}]*action="fix-mime"[^}]*\} 2/);
    }
  });

  it("a resource unwrapped, then its block inlined, measure different things: not chained; /metrics renders", async () => {
    const { upstream, transport, events } = await fitPair({ policy: { embeddedResources: "inline" } });
    const blob = Buffer.from("short text").toString("base64");
    const resource = { uri: `note://${"long-uri-".repeat(8)}`, mimeType: "text/plain", blob };
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } });
    await upstream.send({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "resource", resource }] } });
    await waitFor(() => events.some((e) => e.id === 1));
    const event = events.find((e) => e.id === 1)!;
    expect(event.changes.map((c) => [c.path, c.action, c.chained])).toEqual([
      ["content[0].resource", "unwrap-blob", undefined],
      ["content[0]", "inline-resource", undefined],
    ]);
    const { ProxyMetrics } = await import("../../src/observe/metrics.js");
    const metrics = new ProxyMetrics({ defaultMetrics: false });
    metrics.observe(event, "fx");
    await expect(metrics.render()).resolves.toBeDefined();
  });
});

describe("an image whose data is not base64", () => {
  it("is one record per block (the engine's), as an image block, an embedded resource and a read entry", async () => {
    const { upstream, transport, events } = await fitPair({ policy: { images: true } });
    const bad = "not base64!";
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shot" } });
    await upstream.send({
      jsonrpc: "2.0",
      id: 1,
      result: {
        content: [
          { type: "image", data: bad, mimeType: "image/png" },
          { type: "resource", resource: { uri: "file:///a.png", blob: bad, mimeType: "image/png" } },
        ],
      },
    });
    await transport.send({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "file:///b.png" } });
    await upstream.send({
      jsonrpc: "2.0",
      id: 2,
      result: { contents: [{ uri: "file:///b.png", blob: bad, mimeType: "image/png" }] },
    });
    await waitFor(() => events.some((e) => e.id === 2));
    const actions = (id: number) =>
      events.filter((e) => e.id === id).flatMap((e) => e.changes.map((c) => `${c.path} ${c.action}`));
    expect(actions(1)).toEqual(["content[0] skip-invalid-base64", "content[1].resource skip-invalid-base64"]);
    expect(actions(2)).toEqual(["contents[0] skip-invalid-base64"]);
  });

  it("is the fit layer's record when the engine's media checks are off", async () => {
    const events: NormalizationEvent[] = [];
    const { upstream, transport } = await decoratorPair({
      policy: { media: false },
      fit: { policy: { images: true } },
      onNormalized: (e) => events.push(e),
    });
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shot" } });
    await upstream.send({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "image", data: "not base64!", mimeType: "image/png" }] },
    });
    await waitFor(() => events.some((e) => e.id === 1));
    expect(events.flatMap((e) => e.changes.map((c) => `${c.path} ${c.action}`))).toEqual([
      "content[0] warn-image-undecodable",
    ]);
  });
});

describe("the fit layer across the decorator's connections", () => {
  it("closing it while an SVG is being drawn ends the drawing at once", async () => {
    const { upstream, transport } = await fitPair({ policy: { images: true } });
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "draw" } });
    const data = Buffer.from(SLOW_SVG).toString("base64");
    await upstream.send({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "image", data, mimeType: "image/svg+xml" }] },
    });
    await waitFor(() => svgRenderersOf().length > 0);
    await transport.close();
    await waitFor(() => svgRenderersOf().length === 0, 2_000);
  });

  it("the host cancelling a request whose result is being drawn ends the drawing at once; the result goes on as it came", async () => {
    const { upstream, transport, received, events } = await fitPair({ policy: { images: true } });
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "draw" } });
    const data = Buffer.from(SLOW_SVG).toString("base64");
    const result = { content: [{ type: "image", data, mimeType: "image/svg+xml" }] };
    await upstream.send({ jsonrpc: "2.0", id: 1, result });
    await waitFor(() => svgRenderersOf().length > 0);
    const before = svgRenderersOf().length;
    // A cancel of another request gives nothing up.
    await transport.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(svgRenderersOf()).toHaveLength(before);
    expect(received).toHaveLength(0);
    await transport.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } });
    await waitFor(() => received.length === 1, 3_000);
    expect(received[0]).toEqual({ jsonrpc: "2.0", id: 1, result });
    await waitFor(() => svgRenderersOf().length === 0, 3_000);
    await waitFor(() => events.some((e) => e.id === 1), 3_000);
    expect(events.find((e) => e.id === 1)!.changes.map((c) => [c.action, c.reason])).toEqual([
      ["warn-image-timeout", expect.stringMatching(/^not fitted: the host cancelled its request/)],
    ]);
  });

  it("closed while it fits and started again at once, the old connection's result never reaches the new", async () => {
    // A transport whose close is over at once and that can start again (as a host's own may be).
    const sent: JSONRPCMessage[] = [];
    const inner: Transport = {
      start: async () => {},
      send: async (message) => void sent.push(message),
      close: async () => inner.onclose?.(),
    };
    const reported: Array<{ connection: number; id: unknown }> = [];
    const transport = withNormalization(inner, {
      fit: { policy: { images: true } },
      onNormalized: (event) => reported.push({ connection, id: event.id }),
    });
    const received: Array<{ connection: number; id: unknown }> = [];
    let connection = 1;
    transport.onmessage = (message) => received.push({ connection, id: "id" in message ? message.id : undefined });
    await transport.start();
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shot" } });
    const png = (await bigPng(4000, 3000)).toString("base64");
    inner.onmessage?.({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "image", data: png, mimeType: "image/png" }] },
    });
    await transport.close();
    connection = 2;
    await transport.start();
    await transport.send({ jsonrpc: "2.0", id: 100, method: "tools/call", params: { name: "echo" } });
    inner.onmessage?.({ jsonrpc: "2.0", id: 100, result: { content: [{ type: "text", text: "new" }] } });
    // Long enough for the old image to have been fitted and handed on, were it going to be.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(received).toEqual([{ connection: 2, id: 100 }]);
    // Nor is its record reported with the new connection's messages.
    inner.onmessage?.({ jsonrpc: "2.0", id: 101, result: { content: [{ type: "text", text: "later" }] } });
    expect(reported.filter((event) => event.id === 1)).toEqual([]);
    expect(sent).toHaveLength(2);
  });

  it("started again after a close (an SDK client reconnecting), it fits results as before", async () => {
    const dir = tempDir("mcpn-reuse-");
    writeFileSync(join(dir, "big.png"), await bigPng(3000, 2000));
    const stdio = new StdioClientTransport({
      command: process.execPath,
      args: [IMAGE_SERVER],
      env: { ...process.env, FIXTURE_IMAGES_DIR: dir } as Record<string, string>,
      stderr: "ignore",
    });
    const transport = withNormalization(stdio, { fit: { policy: { images: true } } });
    const client = new Client({ name: "reconnecting-host", version: "1" });
    const widthOfImage = async (): Promise<string> => {
      const result = await client.request(
        { method: "tools/call", params: { name: "image", arguments: { file: "big.png", mimeType: "image/png" } } },
        CallToolResultSchema,
        { timeout: 15_000 },
      );
      const block = result.content[0] as { data: string };
      return String((await sharp(Buffer.from(block.data, "base64")).metadata()).width);
    };
    try {
      for (let round = 0; round < 2; round++) {
        await client.connect(transport);
        expect(await widthOfImage(), `round ${round + 1}`).toBe("1568");
        await client.close();
      }
    } finally {
      await client.close();
    }
  }, 40_000);
});
