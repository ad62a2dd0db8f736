/**
 * Rules reach every image they name: an image block inlined from an embedded resource is still
 * that resource's (a `uri` rule applies, and its record names the URI), and a type rule applies to
 * what the bytes are as well as to the label (a server may call an SVG `image/png`). Real images,
 * the real fit runtime.
 */
import { describe, expect, it } from "vitest";
import { fitLimitsOf, fitOptionsFor } from "../../src/config/fitPolicy.js";
import { DEFAULT_IMAGES, DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { parseConfig } from "../../src/config/load.js";
import { FitPolicy } from "../../src/fit/fitPolicy.js";
import { fitResult, type FitSession } from "../../src/fit/fitResult.js";
import { createFitRuntime } from "../../src/fit/runtime.js";
import { photoPng, svg } from "../fixtures/images/makeImages.js";

function session(normalize: Record<string, unknown>): FitSession {
  const config = parseConfig(JSON.stringify({ mcpServers: { a: { command: "node" } }, normalize }), "p.json", {});
  return {
    policy: new FitPolicy(fitOptionsFor(config, config.mcpServers.a), DEFAULT_IMAGES),
    runtime: createFitRuntime(fitLimitsOf({ limits: DEFAULT_LIMITS })),
    store: null,
  };
}

const embedded = (blob: string, mimeType: string) => ({
  content: [{ type: "resource", resource: { uri: "file:///x/photo.png", mimeType, blob } }],
});

describe("fit rules", () => {
  it("a uri rule's images: false holds for an image inlined from that resource", async () => {
    const png = (await photoPng()).toString("base64");
    for (const embeddedResources of ["keep", "inline"]) {
      const s = session({
        images: true,
        embeddedResources,
        rules: [{ uri: "file:///x/*", set: { images: false } }],
      });
      const fitted = await fitResult("tools/call", embedded(png, "image/png"), null, s);
      const block = (fitted.value as { content: Array<Record<string, unknown>> }).content[0]!;
      const data = block.type === "image" ? block.data : (block.resource as { blob: string }).blob;
      expect(data, embeddedResources).toBe(png);
      expect(
        fitted.changes.filter((c) => c.action === "fit-image"),
        embeddedResources,
      ).toEqual([]);
    }
  });

  it("an image inlined from a resource is fitted under that resource's URI", async () => {
    const png = (await photoPng()).toString("base64");
    const s = session({ images: true, embeddedResources: "inline" });
    const fitted = await fitResult("tools/call", embedded(png, "image/png"), null, s);
    expect(fitted.changes.find((c) => c.action === "fit-image")).toMatchObject({ uri: "file:///x/photo.png" });
  });

  it("a type rule applies to what the bytes are: an SVG labelled image/png is not drawn", async () => {
    const s = session({ images: true, rules: [{ mimeType: "image/svg+xml", set: { images: false } }] });
    const data = svg(4000, 1000).toString("base64");
    const result = { content: [{ type: "image", data, mimeType: "image/png" }] };
    const fitted = await fitResult("tools/call", result, null, s);
    expect(fitted.value).toBe(result);
    expect(fitted.changes.filter((c) => c.action === "fit-image")).toEqual([]);
    // Without the rule it is drawn (the test can tell).
    const drawn = await fitResult("tools/call", result, null, session({ images: true }));
    expect(drawn.changes.map((c) => c.action)).toContain("fit-image");
  });
});
