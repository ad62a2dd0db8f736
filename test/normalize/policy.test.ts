/**
 * Every policy option of the engine: each rule switch, charset "preserve", maxNormalizeBytes,
 * extraTextualTypes, per-URI / per-type rules, and dryRun (records computed, contents unchanged).
 */
import { testPolicy, type TestPolicyOptions as PolicyOptions } from "../helpers/policy.js";
import { describe, expect, it } from "vitest";
import { corpusFile } from "../fixtures/corpus/index.js";
import { normalizeResourceEntry, normalizeResult } from "../../src/normalize/index.js";

const md = corpusFile("text/utf8.md");
const png = corpusFile("media/tiny.png");
const sjis = corpusFile("text/shift_jis.txt");
const utf16 = corpusFile("text/utf16le-bom.txt");

const unwrapCase = { uri: "file:///a/README.md", mimeType: "application/octet-stream", blob: md.toString("base64") };
const transcodeCase = {
  uri: "file:///a/j.txt",
  mimeType: "text/plain; charset=Shift_JIS",
  blob: sjis.toString("base64"),
};
const bomCase = { uri: "file:///a/u.txt", mimeType: "text/plain", blob: utf16.toString("base64") };
const binaryStringCase = { uri: "mem://img", text: png.toString("latin1") };
const escapedLegacyCase = {
  uri: "file:///a/j.txt",
  mimeType: "text/plain; charset=shift_jis",
  text: Array.from(sjis, (b) => String.fromCharCode(b < 0x80 ? b : 0xdc00 + b)).join(""),
};
const pngCase = { uri: "file:///a/shot", mimeType: "application/octet-stream", blob: png.toString("base64") };
const textCase = { uri: "file:///a/b.json", mimeType: "application/octet-stream", text: "{}" };

function run(entry: Record<string, unknown>, options: PolicyOptions) {
  const { entry: out, record } = normalizeResourceEntry(entry, testPolicy(options), "contents[0]");
  return { out: out as Record<string, unknown>, action: record!.action, record: record! };
}

describe("rule switches", () => {
  it("unwrapBlobs: off keeps UTF-8 blobs as blobs (their generic type still fixed)", () => {
    expect(run(unwrapCase, {}).action).toBe("unwrap-blob");
    const off = run(unwrapCase, { unwrapBlobs: false });
    expect(off.action).toBe("fix-mime");
    expect(off.out).toEqual({ ...unwrapCase, mimeType: "text/markdown" });
    expect(run(unwrapCase, { unwrapBlobs: false, fixMime: false }).out).toBe(unwrapCase);
  });

  it("transcode: off keeps legacy-charset and BOM-marked blobs as they are", () => {
    expect(run(transcodeCase, {}).action).toBe("transcode");
    expect(run(bomCase, {}).action).toBe("transcode");
    expect(run(transcodeCase, { transcode: false }).out).toBe(transcodeCase);
    expect(run(bomCase, { transcode: false }).out).toBe(bomCase);
    // Surrogate-escaped text in a declared charset is a transcode too.
    expect(run(escapedLegacyCase, {}).action).toBe("transcode");
    expect(run(escapedLegacyCase, { transcode: false })).toMatchObject({ action: "none", out: escapedLegacyCase });
  });

  it("reencodeBinaryText: off leaves binary strings in text", () => {
    expect(run(binaryStringCase, {}).action).toBe("reencode-blob");
    expect(run(binaryStringCase, { reencodeBinaryText: false })).toMatchObject({
      action: "none",
      out: binaryStringCase,
    });
  });

  it("fixMime: off leaves every type alone, but content decisions still happen", () => {
    expect(run(pngCase, { fixMime: false })).toMatchObject({ action: "none", out: pngCase });
    expect(run(textCase, { fixMime: false })).toMatchObject({ action: "none", out: textCase });
    expect(run(unwrapCase, { fixMime: false }).action).toBe("unwrap-blob");
    // A re-encoded binary string keeps its declared type (none here) when fixMime is off.
    expect(run(binaryStringCase, { fixMime: false }).out).toEqual({ uri: "mem://img", blob: png.toString("base64") });
  });

  it("media: off leaves image blocks alone; resource entries are unaffected", () => {
    const result = {
      content: [
        { type: "image", data: png.toString("base64"), mimeType: "image/jpeg" },
        { type: "resource", resource: pngCase },
      ],
    };
    const out = normalizeResult("tools/call", result, testPolicy({ media: false }));
    expect(out.changes.map((r) => [r.path, r.action])).toEqual([["content[1].resource", "fix-mime"]]);
  });
});

describe('charset: "preserve"', () => {
  it("keeps legacy-charset bytes a blob labelled with their charset", () => {
    const out = run(
      { uri: "file:///j.txt", mimeType: "text/plain", blob: sjis.toString("base64") },
      { charset: "preserve" },
    );
    // No charset declared and not UTF-8: nothing to preserve, the blob stays as it was.
    expect(out.action).toBe("none");
    const declared = run(transcodeCase, { charset: "preserve" });
    expect(declared).toMatchObject({ action: "none", out: transcodeCase });
  });

  it("labels BOM-marked UTF-16 with its charset instead of decoding it", () => {
    const out = run(bomCase, { charset: "preserve" });
    expect(out.out).toEqual({ ...bomCase, mimeType: "text/plain; charset=utf-16le" });
  });

  it("keeps a foreign charset on text entries, which transcode mode drops", () => {
    const text = { uri: "mem://t", mimeType: "text/plain; charset=iso-8859-1", text: "café" };
    expect(run(text, {}).out).toEqual({ ...text, mimeType: "text/plain" });
    expect(run(text, { charset: "preserve" }).out).toBe(text);
  });

  it("still unwraps plain UTF-8", () => {
    expect(run(unwrapCase, { charset: "preserve" }).action).toBe("unwrap-blob");
  });
});

describe("maxNormalizeBytes", () => {
  it("passes entries above the limit untouched with skip-too-large; at the limit they are normalized", () => {
    const blob = unwrapCase.blob;
    expect(run(unwrapCase, { maxNormalizeBytes: blob.length - 1 })).toMatchObject({
      action: "skip-too-large",
      out: unwrapCase,
    });
    expect(run(unwrapCase, { maxNormalizeBytes: blob.length }).action).toBe("unwrap-blob");
    expect(run(binaryStringCase, { maxNormalizeBytes: 10 })).toMatchObject({
      action: "skip-too-large",
      out: binaryStringCase,
    });
    expect(run(unwrapCase, { maxNormalizeBytes: 0 }).record.reason).toMatch(/maxNormalizeBytes \(0\)/);
  });

  it("counts a text payload in UTF-8 bytes, not in characters", () => {
    const text = binaryStringCase.text;
    const utf8Bytes = Buffer.byteLength(text, "utf8");
    expect(utf8Bytes).toBeGreaterThan(text.length);
    expect(run(binaryStringCase, { maxNormalizeBytes: text.length })).toMatchObject({
      action: "skip-too-large",
      out: binaryStringCase,
    });
    expect(run(binaryStringCase, { maxNormalizeBytes: text.length }).record.reason).toContain(`${utf8Bytes} bytes`);
    expect(run(binaryStringCase, { maxNormalizeBytes: utf8Bytes }).action).not.toBe("skip-too-large");
  });
});

describe("extraTextualTypes", () => {
  const custom = {
    uri: "mem://c",
    mimeType: "application/x-custom-config",
    blob: Buffer.from("key = value\n").toString("base64"),
  };

  it("makes a type textual, so its UTF-8 blobs unwrap", () => {
    expect(run(custom, {}).action).toBe("none");
    expect(run(custom, { extraTextualTypes: [" Application/X-Custom-Config "] })).toMatchObject({
      action: "unwrap-blob",
      out: { uri: "mem://c", mimeType: "application/x-custom-config", text: "key = value\n" },
    });
  });
});

describe("per-URI and per-type rules", () => {
  it("applies rules whose every condition matches, later rules winning", () => {
    const options: PolicyOptions = {
      rules: [
        { uri: "file:///a/**", set: { unwrapBlobs: false } },
        { uri: "file:///a/keep/*.md", set: { unwrapBlobs: true } },
        { mimeType: "text/*", set: { transcode: false } },
        { uri: "mem://*", mimeType: "application/octet-stream", set: { fixMime: false } },
      ],
    };
    expect(run(unwrapCase, options).action).toBe("fix-mime");
    expect(run({ ...unwrapCase, uri: "file:///a/keep/x.md" }, options).action).toBe("unwrap-blob");
    expect(run({ ...unwrapCase, uri: "file:///a/keep/deeper/x.md" }, options).action).toBe("fix-mime");
    expect(run({ ...unwrapCase, uri: "file:///b/x.md" }, options).action).toBe("unwrap-blob");
    expect(run(transcodeCase, options).out).toBe(transcodeCase);
    expect(run({ ...pngCase, uri: "mem://shot" }, options).action).toBe("none");
    expect(run(pngCase, options).action).toBe("fix-mime");
  });

  it("matches the type by essence, whatever its case and parameters", () => {
    const options: PolicyOptions = { rules: [{ mimeType: "Text/Plain", set: { maxNormalizeBytes: 0 } }] };
    expect(run(transcodeCase, options).action).toBe("skip-too-large");
    expect(run({ ...transcodeCase, mimeType: "TEXT/PLAIN; charset=shift_jis" }, options).action).toBe("skip-too-large");
  });

  it("can turn dryRun on for some URIs only", () => {
    const out = run(unwrapCase, { rules: [{ uri: "**/*.md", set: { dryRun: true } }] });
    expect(out.out).toBe(unwrapCase);
    expect(out.record.applied).toBe(false);
    expect(out.action).toBe("unwrap-blob");
  });
});

describe("dryRun", () => {
  it("computes every record and forwards the original result object itself", () => {
    const result = { contents: [unwrapCase, transcodeCase, pngCase, binaryStringCase] };
    const live = normalizeResult("resources/read", result, testPolicy());
    const dry = normalizeResult("resources/read", result, testPolicy({ dryRun: true }));
    expect(dry.value).toBe(result);
    expect(dry.changes.map((r) => ({ ...r, applied: true }))).toEqual(live.changes);
    expect(dry.changes.every((r) => !r.applied)).toBe(true);
    expect(live.value).not.toBe(result);
  });
});

describe("recordUnchanged: false", () => {
  const plainText = { uri: "file:///a/notes.txt", mimeType: "text/plain", text: 'line "one"\n\ttwo é 🎉' };
  const pngAsIs = { uri: "file:///a/shot.png", mimeType: "image/png", blob: png.toString("base64") };
  const mixed = [plainText, unwrapCase, pngAsIs, transcodeCase, { ...unwrapCase, blob: "not base64!" }];

  it("gives entries left as they were no record; every other record is the same as with records of them", () => {
    const result = { contents: mixed };
    const all = normalizeResult("resources/read", result, testPolicy());
    const changedOnly = normalizeResult("resources/read", result, testPolicy({ recordUnchanged: false }));
    expect(all.changes.filter((r) => r.action === "none").map((r) => r.path)).toEqual(["contents[0]", "contents[2]"]);
    expect(changedOnly.changes).toEqual(all.changes.filter((r) => r.action !== "none"));
    expect(changedOnly.value).toEqual(all.value);
  });

  it("leaves untouched results the very same object, with no records at all", () => {
    const result = { contents: [plainText, pngAsIs] };
    const out = normalizeResult("resources/read", result, testPolicy({ recordUnchanged: false }));
    expect(out.value).toBe(result);
    expect(out.changes).toEqual([]);
  });

  it("still records what is left as it was for a reason (too large, not base64), with its size", () => {
    const big = { uri: "file:///a/big.txt", text: "x".repeat(100) };
    const out = normalizeResourceEntry(big, testPolicy({ recordUnchanged: false, maxNormalizeBytes: 50 }), "c");
    expect(out.entry).toBe(big);
    expect(out.record).toMatchObject({ action: "skip-too-large", bytesBefore: Buffer.byteLength(JSON.stringify(big)) });
  });
});
