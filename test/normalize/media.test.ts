/**
 * Image and audio blocks: every format of the corpus declared wrong, missing, generic,
 * upper-case and with parameters, in a tool result, a prompt message and a sampling request.
 * Only `mimeType` may change; `data` is the very same string.
 */
import { testPolicy } from "../helpers/policy.js";
import { describe, expect, it } from "vitest";
import { loadMediaCorpus, messageWithBlock, type BlockMethod } from "../fixtures/corpus/index.js";
import {
  normalizeMediaBlock,
  normalizeRequestParams,
  normalizeResult,
  type Policy,
  type ChangeRecord,
} from "../../src/normalize/index.js";

const cases = loadMediaCorpus();
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8");

function run(method: BlockMethod, value: unknown, policy: Policy): { value: unknown; changes: ChangeRecord[] } {
  return method === "sampling/createMessage"
    ? normalizeRequestParams(method, value, policy)
    : normalizeResult(method, value, policy);
}

describe("media corpus", () => {
  it("covers every issue-7 format", () => {
    const formats = [
      "png",
      "jpg",
      "gif",
      "webp",
      "bmp",
      "tiff",
      "avif",
      "heic",
      "ico",
      "wav",
      "mp3",
      "opus",
      "flac",
      "m4a",
      "webm",
    ];
    for (const f of formats) expect(cases.filter((c) => c.name.includes(`tiny.${f}-`)).length, f).toBe(5);
  });
});

/** The actions that give a block another `mimeType`: a wrong one fixed, a missing one filled. */
const changesType = (action: string): boolean => action === "fix-mime" || action === "fill-mime";

describe.each(cases)("media case $name", (c) => {
  const policy = testPolicy(c.policy);

  it("gets the expected type and action; data untouched; bytes counted exactly", () => {
    const { block, record } = normalizeMediaBlock(c.input, policy, "content[0]");
    expect(JSON.stringify(block)).toBe(JSON.stringify(c.expected));
    expect((block as { data: string }).data).toBe(c.input.data);
    expect(record!.action).toBe(c.action);
    expect(record!.bytesBefore).toBe(jsonBytes(c.input));
    expect(record!.bytesAfter).toBe(jsonBytes(c.expected));
    expect(record!.saved).toBe(record!.bytesBefore - record!.bytesAfter);
    if (!changesType(c.action)) expect(block).toBe(c.input);
  });

  it("is idempotent", () => {
    const once = normalizeMediaBlock(c.input, policy, "x").block;
    const twice = normalizeMediaBlock(once, policy, "x");
    expect(twice.block).toBe(once);
    if (changesType(c.action)) expect(twice.record!.action).toBe("none");
  });

  it.each(["tools/call", "prompts/get", "sampling/createMessage"] satisfies BlockMethod[])(
    "is the same inside %s",
    (method) => {
      const { value, path, pick } = messageWithBlock(method, c.input);
      const out = run(method, value, policy);
      expect(JSON.stringify(pick(out.value))).toBe(JSON.stringify(c.expected));
      expect(out.changes.map((r) => [r.path, r.action])).toEqual([[path, c.action]]);
      if (!changesType(c.action)) expect(out.value).toBe(value);
    },
  );

  it("changes nothing when the media rule is off, and only records in dryRun", () => {
    const off = normalizeMediaBlock(c.input, testPolicy({ ...c.policy, media: false }), "x");
    expect(off).toEqual({ block: c.input, record: null });
    const dry = normalizeMediaBlock(c.input, testPolicy({ ...c.policy, dryRun: true }), "x");
    expect(dry.block).toBe(c.input);
    expect(dry.record!.action).toBe(c.action);
    expect(dry.record!.applied).toBe(false);
  });
});

describe("media blocks: edges", () => {
  it("leaves non-media blocks and malformed ones alone", () => {
    for (const block of [
      null,
      "x",
      { type: "text", text: "a" },
      { type: "image" },
      { type: "image", data: 5 },
      { type: "video", data: "AA==" },
    ]) {
      expect(normalizeMediaBlock(block, testPolicy(), "x")).toEqual({ block, record: null });
    }
  });

  it("reads the signature from the first bytes only: a long block costs no full decode", () => {
    const png = loadMediaCorpus().find((c) => c.name === "matrix-image-tiny.png-wrong")!;
    const data = (png.input.data as string) + "A".repeat(4 * 1024 * 1024);
    const block = { type: "image", data, mimeType: "image/jpeg" };
    const { block: out, record } = normalizeMediaBlock(block, testPolicy(), "x");
    expect(record!.action).toBe("fix-mime");
    expect(record!.mimeAfter).toBe("image/png");
    expect((out as { data: string }).data).toBe(data);
    expect(record!.bytesBefore).toBe(jsonBytes(block));
  });

  it("fills a resource_link's missing type from its extension", () => {
    const result = {
      content: [
        { type: "resource_link", uri: "file:///a/b.md", name: "b" },
        { type: "resource_link", uri: "file:///a/c.png", name: "c", mimeType: "image/png" },
      ],
    };
    const out = normalizeResult("tools/call", result, testPolicy());
    expect((out.value as typeof result).content[0]).toEqual({
      type: "resource_link",
      uri: "file:///a/b.md",
      name: "b",
      mimeType: "text/markdown",
    });
    expect((out.value as typeof result).content[1]).toBe(result.content[1]);
    expect(out.changes.map((r) => [r.path, r.action])).toEqual([["content[0]", "fill-mime"]]);
  });
});

describe("a text entry that starts like a binary format", () => {
  it("stays text when it is plain ASCII: no binary format is carried without a byte above it", async () => {
    const { isBinaryString } = await import("../../src/normalize/textEvidence.js");
    for (const text of ["GIF89a is the animated one.\n", "%PDF-1.7 added layers.\n", "RIFF\u0000x"])
      expect(isBinaryString(text, false), JSON.stringify(text)).toBe(text.includes("\u0000"));
    // A whole PDF is one even when all ASCII (uncompressed, no binary comment line).
    expect(isBinaryString("%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n", false)).toBe(true);
    // Bytes of a GIF carried one per character: binary.
    expect(isBinaryString("GIF89a\u00c8\u00ff\u0080\u00ff\u00f7", false)).toBe(true);
  });
});
