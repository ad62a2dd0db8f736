/**
 * Lossy text: text that already carries U+FFFD replacement characters (≥ 3 and ≥ 1% of the
 * characters) passes unchanged with a `warn-lossy-text` record — resource text entries and
 * `{type:"text"}` blocks alike; below either bound nothing is recorded for it.
 */
import { testPolicy } from "../helpers/policy.js";
import { describe, expect, it } from "vitest";
import { normalizeResourceEntry, normalizeResult } from "../../src/normalize/index.js";
import { LOSSY_MIN_REPLACEMENTS, LOSSY_MIN_SHARE, lossyCount, lossyCountOf } from "../../src/normalize/lossyText.js";
import { RawJsonString } from "../../src/wire/rawJson.js";

const policy = testPolicy();
const R = "\ufffd";
/** What Node's UTF-8 decoder makes of Latin-1 "Grüße aus Köln, café": one U+FFFD per lost byte. */
const mangled = Buffer.from("Grüße aus Köln, café und Bäckerei", "latin1").toString("utf8");

describe("lossy text", () => {
  it("the bounds: 3 replacements and 1% of the characters", () => {
    expect(LOSSY_MIN_REPLACEMENTS).toBe(3);
    expect(LOSSY_MIN_SHARE).toBe(0.01);
    expect(lossyCount(`ab${R}${R}`)).toBeNull();
    expect(lossyCount(`ab${R}${R}${R}`)).toEqual({ replacements: 3, characters: 5 });
    expect(lossyCount(`${"x".repeat(297)}${R}${R}${R}`)).toEqual({ replacements: 3, characters: 300 });
    expect(lossyCount(`${"x".repeat(298)}${R}${R}${R}`)).toBeNull(); // 3 of 301 < 1%
    expect(lossyCount("no replacement at all")).toBeNull();
  });

  it("a text entry with replacement characters passes unchanged with a warn-lossy-text record", () => {
    expect(mangled.split(R).length - 1).toBe(5);
    const entry = { uri: "file:///docs/koeln.txt", mimeType: "text/plain", text: mangled };
    const out = normalizeResourceEntry(entry, policy, "contents[0]");
    expect(out.entry).toBe(entry);
    expect(out.record).toMatchObject({
      action: "warn-lossy-text",
      path: "contents[0]",
      uri: "file:///docs/koeln.txt",
      mimeBefore: "text/plain",
      mimeAfter: "text/plain",
      saved: 0,
      applied: true,
    });
    expect(out.record!.bytesBefore).toBe(Buffer.byteLength(JSON.stringify(entry)));
    expect(out.record!.reason).toContain(`5 U+FFFD replacement characters in ${mangled.length}`);
  });

  it("a lossy entry with a missing type is not given one: it passes exactly as it came", () => {
    const entry = { uri: "file:///docs/koeln.txt", text: mangled };
    const out = normalizeResourceEntry(entry, policy, "contents[0]");
    expect(out.entry).toBe(entry);
    expect(out.record?.action).toBe("warn-lossy-text");
  });

  it("in dry run the warning is recorded as not applied", () => {
    const out = normalizeResourceEntry(
      { uri: "a.txt", mimeType: "text/plain", text: mangled },
      testPolicy({ dryRun: true }),
      "contents[0]",
    );
    expect(out.record).toMatchObject({ action: "warn-lossy-text", applied: false });
  });

  it("tool text blocks: a record at the block's path; the result is the same object", () => {
    const result = {
      content: [
        { type: "text", text: "fine" },
        { type: "text", text: mangled },
      ],
      isError: false,
    };
    const out = normalizeResult("tools/call", result, policy);
    expect(out.value).toBe(result);
    expect(out.changes).toHaveLength(1);
    expect(out.changes[0]).toMatchObject({
      action: "warn-lossy-text",
      path: "content[1]",
      uri: null,
      mimeBefore: null,
      mimeAfter: null,
      saved: 0,
    });
    expect(out.changes[0]!.bytesBefore).toBe(Buffer.byteLength(JSON.stringify(result.content[1])));
  });

  it("prompt messages' text blocks are flagged too", () => {
    const result = { messages: [{ role: "user", content: { type: "text", text: mangled } }] };
    const out = normalizeResult("prompts/get", result, policy);
    expect(out.value).toBe(result);
    expect(out.changes.map((c) => [c.action, c.path])).toEqual([["warn-lossy-text", "messages[0].content"]]);
  });

  it("a raw literal (a big text read as bytes) is counted from its bytes, a sequence cut between two pieces included", () => {
    const literal = Buffer.from(JSON.stringify(mangled), "utf8");
    const cutAt = literal.indexOf(Buffer.from(R, "utf8")) + 1; // inside the first U+FFFD
    const raw = RawJsonString.ofLiteral([literal.subarray(0, cutAt), literal.subarray(cutAt)], false);
    expect(lossyCountOf(raw)).toEqual({ replacements: 5, characters: mangled.length });
    const escaped = RawJsonString.ofLiteral([Buffer.from(JSON.stringify(`${mangled}\n`), "utf8")], true);
    expect(lossyCountOf(escaped)).toEqual({ replacements: 5, characters: mangled.length + 1 });
    const result = { content: [{ type: "text", text: raw }] };
    const out = normalizeResult("tools/call", result, policy);
    expect(out.changes[0]).toMatchObject({
      action: "warn-lossy-text",
      bytesBefore: Buffer.byteLength(JSON.stringify({ type: "text", text: mangled })),
    });
  });

  it("a raw literal of millions of replacement characters is counted in a pass, not a search per character", () => {
    const text = `${"a".repeat(1000)}${R.repeat(4_000_000)}\u00e9`;
    const body = Buffer.from(JSON.stringify(text), "utf8");
    // Pieces cut inside sequences, as a socket's reads come.
    const pieces = [body.subarray(0, 2_000_001), body.subarray(2_000_001, 7_000_000), body.subarray(7_000_000)];
    const raw = RawJsonString.ofLiteral(pieces, false);
    const started = performance.now();
    expect(lossyCountOf(raw)).toEqual({ replacements: 4_000_000, characters: text.length });
    // A search per character took half a second for these 12 MB.
    expect(performance.now() - started).toBeLessThan(200);
  });

  it("astral characters count as two code units in the raw count, as in the string's length", () => {
    const text = `🎉🎉${R}${R}${R}`;
    const raw = RawJsonString.ofLiteral([Buffer.from(JSON.stringify(text), "utf8")], false);
    expect(lossyCountOf(raw)).toEqual(lossyCount(text));
  });
});
