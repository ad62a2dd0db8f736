/**
 * An SVG an embedded resource or a `resources/read` entry holds, with images on: drawn as any
 * image is (an SVG blob reaches the fit layer as text — the engine finds SVG to be text). In a
 * file of its own: the drawing children it leaves waiting would be counted by other files' tests.
 */
import sharp from "sharp";
import { describe, expect, it } from "vitest";

import { fitPair } from "../helpers/decoratorPair.js";
import { waitFor } from "../helpers/polling.js";

describe("an SVG an embedded resource or a read entry holds (the engine makes an SVG blob text)", () => {
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" width="4000" height="2000"><rect width="4000" height="2000" fill="#c00"/></svg>';
  const asBlob = { uri: "file:///x/big.svg", mimeType: "image/svg+xml", blob: Buffer.from(svg).toString("base64") };
  const asText = { uri: "file:///x/big.svg", mimeType: "image/svg+xml", text: svg };

  async function pngOf(data: unknown): Promise<{ width?: number; height?: number; format?: string }> {
    return sharp(Buffer.from(data as string, "base64")).metadata();
  }

  it("inlined with images on, is drawn: an image block in an accepted format, not its markup as text", async () => {
    const { upstream, transport, received, events } = await fitPair({
      policy: { images: { maxDimension: 1000 }, embeddedResources: "inline" },
    });
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } });
    await upstream.send({
      jsonrpc: "2.0",
      id: 1,
      result: {
        content: [
          { type: "resource", resource: asBlob, annotations: { priority: 1 } },
          { type: "resource", resource: asText },
        ],
      },
    });
    await waitFor(() => received.length === 1, 10_000);
    const content = (received[0] as unknown as { result: { content: Array<Record<string, unknown>> } }).result.content;
    expect(content.map((block) => [block.type, block.mimeType])).toEqual([
      ["image", "image/png"],
      ["image", "image/png"],
    ]);
    expect(content[0]!.annotations).toEqual({ priority: 1 });
    for (const block of content)
      expect(await pngOf(block.data)).toMatchObject({ format: "png", width: 1000, height: 500 });
    await waitFor(() => events.some((e) => e.id === 1));
    const changes = events.find((e) => e.id === 1)!.changes;
    // Inlined as an image blob is, then fitted: one entry per block, its second record chained
    // to the first (the engine's unwrap measured the resource, another entry).
    expect(changes.map((c) => [c.path, c.action, c.chained])).toEqual([
      ["content[0].resource", "unwrap-blob", undefined],
      ["content[0]", "inline-resource", undefined],
      ["content[0]", "fit-image", true],
      ["content[1]", "inline-resource", undefined],
      ["content[1]", "fit-image", true],
    ]);
    for (const i of [1, 3]) {
      expect(changes[i + 1]!.bytesBefore).toBe(changes[i]!.bytesAfter);
      expect(changes[i + 1]!.bytesAfter).toBe(Buffer.byteLength(JSON.stringify(content[(i - 1) / 2])));
    }
    // Measured from the block as it came: its SVG as text.
    expect(changes[3]!.bytesBefore).toBe(Buffer.byteLength(JSON.stringify({ type: "resource", resource: asText })));
  });

  it("kept embedded, or read with images.resources, becomes a blob of the drawn image in its text's place", async () => {
    const { upstream, transport, received } = await fitPair({
      policy: { images: { maxDimension: 1000, resources: true } },
    });
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } });
    await upstream.send({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "resource", resource: asBlob }] } });
    await transport.send({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: asText.uri } });
    await upstream.send({ jsonrpc: "2.0", id: 2, result: { contents: [{ ...asText, _meta: { m: 1 } }] } });
    await waitFor(() => received.length === 2, 10_000);
    const embedded = (received[0] as unknown as { result: { content: Array<{ resource: Record<string, unknown> }> } })
      .result.content[0]!.resource;
    const entry = (received[1] as unknown as { result: { contents: Array<Record<string, unknown>> } }).result
      .contents[0]!;
    expect(Object.keys(embedded)).toEqual(["uri", "mimeType", "blob"]);
    expect(Object.keys(entry)).toEqual(["uri", "mimeType", "blob", "_meta"]);
    for (const held of [embedded, entry]) {
      expect(held.mimeType).toBe("image/png");
      expect(await pngOf(held.blob)).toMatchObject({ format: "png", width: 1000, height: 500 });
    }
  });

  it("one that cannot be drawn stays the resource it was, and the record says why", async () => {
    const { upstream, transport, received, events } = await fitPair({
      policy: { images: true, embeddedResources: "inline" },
    });
    const broken = { uri: "file:///x/broken.svg", mimeType: "image/svg+xml", text: "<svg this is not xml" };
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } });
    await upstream.send({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "resource", resource: broken }] } });
    await waitFor(() => received.length === 1, 10_000);
    expect((received[0] as unknown as { result: { content: unknown[] } }).result.content).toEqual([
      { type: "resource", resource: broken },
    ]);
    await waitFor(() => events.some((e) => e.id === 1));
    expect(events.find((e) => e.id === 1)!.changes.map((c) => c.action)).toEqual(["warn-image-undecodable"]);
  });
});
