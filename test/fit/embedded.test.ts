/**
 * `embeddedResources: "inline"` in the engine: the new block keeps every other field of the block
 * it replaces (annotations, _meta, fields the proxy does not know, a member named __proto__),
 * and takes the resource's _meta only where the block has none.
 */
import { describe, expect, it } from "vitest";
import { inlineResource } from "../../src/fit/embedded.js";
import type { ChangeRecord } from "../../src/normalize/change.js";

const inline = (block: Record<string, unknown>): Record<string, unknown> | null =>
  inlineResource(block, "content[0]", false, [] as ChangeRecord[]);

describe("an inlined embedded resource", () => {
  it("keeps the block's own fields, known or not; the resource's _meta where the block has none", () => {
    const block = JSON.parse(
      '{"type":"resource","resource":{"uri":"file:///a.png","mimeType":"image/png","blob":"aGk=","_meta":{"s":1}},' +
        '"x_block":{"kept":1},"__proto__":{"p":1},"annotations":{"priority":1}}',
    ) as Record<string, unknown>;
    const out = inline(block)!;
    expect(JSON.stringify(out)).toBe(
      '{"type":"image","data":"aGk=","mimeType":"image/png","x_block":{"kept":1},"__proto__":{"p":1},' +
        '"annotations":{"priority":1},"_meta":{"s":1}}',
    );
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it("the block's _meta wins over the resource's; a block field named like the new block's stays out of its way", () => {
    const out = inline({
      type: "resource",
      resource: { uri: "file:///n.md", mimeType: "text/markdown", text: "# N", _meta: { resource: true } },
      _meta: { block: true },
      text: "stale",
    });
    expect(out).toEqual({ type: "text", text: "# N", _meta: { block: true } });
  });
});
