/**
 * The content corpus through every pure entry point: the per-entry function,
 * `normalizeContents`, `normalizeResult` for each method a resource entry travels in, and
 * `normalizeMessage` on a whole JSON-RPC response — all with the same expected entry.
 */
import { testPolicy } from "../helpers/policy.js";
import { describe, expect, it } from "vitest";
import { loadCorpus, resultWithEntry, type EntryMethod } from "../fixtures/corpus/index.js";
import {
  normalizeContents,
  normalizeMessage,
  normalizeResourceEntry,
  normalizeResult,
  WARNING_ACTIONS,
} from "../../src/normalize/index.js";

const corpus = loadCorpus();
const ROWS = [
  "blob-invalid-base64",
  "blob-signature",
  "blob-bom-or-charset",
  "blob-detected-charset",
  "blob-utf8-textual",
  "blob-other",
  "text-ordinary",
  "text-binary-string",
  "text-lone-surrogates",
];

/** Same values and same key order: JSON text equality (lone surrogates are escaped, so visible). */
function expectSameJson(actual: unknown, expected: unknown): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) expect(a.length > 4000 ? `${a.slice(0, 2000)}…` : a).toBe(e.length > 4000 ? `${e.slice(0, 2000)}…` : e);
}

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8");

describe("corpus manifest", () => {
  it("has one case or more for every decision-table row", () => {
    for (const row of ROWS) expect(corpus.filter((c) => c.row === row).length, row).toBeGreaterThan(0);
    expect(new Set(corpus.map((c) => c.row))).toEqual(new Set(ROWS));
  });

  it("has unique case names", () => {
    expect(new Set(corpus.map((c) => c.name)).size).toBe(corpus.length);
  });

  it("generates the multi-MB text deterministically", () => {
    const big = corpus.find((c) => c.name === "big-multi-mb-text-blob")!;
    expect((big.expected.text as string).length).toBeGreaterThan(2_000_000);
    expect(loadCorpus().find((c) => c.name === "big-multi-mb-text-blob")!.input.blob).toBe(big.input.blob);
  });
});

describe.each(corpus)("corpus case $name", (c) => {
  const policy = testPolicy(c.policy);

  it("normalizes to the expected entry and action, with exact byte counts", () => {
    const before = JSON.stringify(c.input);
    const { entry, record } = normalizeResourceEntry(c.input, policy, "contents[0]");
    expectSameJson(entry, c.expected);
    expect(record).not.toBeNull();
    expect(record!.action).toBe(c.action);
    expect(record!.path).toBe("contents[0]");
    expect(record!.uri).toBe(typeof c.input.uri === "string" ? c.input.uri : null);
    expect(record!.mimeBefore).toBe(typeof c.input.mimeType === "string" ? c.input.mimeType : null);
    expect(record!.mimeAfter).toBe(typeof c.expected.mimeType === "string" ? c.expected.mimeType : null);
    expect(record!.bytesBefore).toBe(jsonBytes(c.input));
    expect(record!.bytesAfter).toBe(jsonBytes(c.expected));
    expect(record!.saved).toBe(record!.bytesBefore - record!.bytesAfter);
    expect(record!.applied).toBe(true);
    // The input is never mutated, and an entry that does not change keeps its identity.
    expect(JSON.stringify(c.input)).toBe(before);
    if (c.action === "none" || WARNING_ACTIONS.has(c.action)) expect(entry).toBe(c.input);
  });

  it("is idempotent: the output normalizes to itself", () => {
    const once = normalizeResourceEntry(c.input, policy, "contents[0]").entry;
    const twice = normalizeResourceEntry(once, policy, "contents[0]");
    expectSameJson(twice.entry, once);
    expect(twice.entry).toBe(once);
    if (!WARNING_ACTIONS.has(c.action)) expect(twice.record!.action).toBe("none");
  });

  it("in dryRun computes the same record and forwards the original", () => {
    const dry = testPolicy({ ...c.policy, dryRun: true });
    const { entry, record } = normalizeResourceEntry(c.input, dry, "contents[0]");
    expect(entry).toBe(c.input);
    expect(record!.action).toBe(c.action);
    expect(record!.bytesAfter).toBe(jsonBytes(c.expected));
    expect(record!.applied).toBe(false);
  });

  it.each(["resources/read", "tools/call", "prompts/get"] satisfies EntryMethod[])(
    "gives the same entry inside a %s result",
    (method) => {
      const { result, path, pick } = resultWithEntry(method, c.input);
      const out = normalizeResult(method, result, policy);
      expectSameJson(pick(out.value), c.expected);
      expect(out.changes.map((r) => [r.path, r.action])).toEqual([[path, c.action]]);
      if (c.action === "none" || WARNING_ACTIONS.has(c.action)) expect(out.value).toBe(result);
    },
  );

  it("gives the same entry in a whole JSON-RPC response (method inferred)", () => {
    const message = { jsonrpc: "2.0", id: 7, result: { contents: [c.input], _meta: { page: 1 } } };
    const out = normalizeMessage(message, policy);
    expect(out.method).toBe("resources/read");
    expectSameJson((out.value as { result: { contents: unknown[] } }).result.contents[0], c.expected);
    expect(Object.keys(out.value as object)).toEqual(["jsonrpc", "id", "result"]);
  });
});

describe("normalizeContents", () => {
  it("normalizes the whole corpus as one contents[] array, one record per entry, in order", () => {
    const plain = corpus.filter((c) => Object.keys(c.policy).length === 0);
    const { contents, changes } = normalizeContents(
      plain.map((c) => c.input),
      testPolicy(),
    );
    expect(changes.map((r) => r.path)).toEqual(plain.map((_, i) => `contents[${i}]`));
    expect(changes.map((r) => r.action)).toEqual(plain.map((c) => c.action));
    expectSameJson(
      contents,
      plain.map((c) => c.expected),
    );
  });

  it("returns the very same array when nothing changes, and passes non-arrays and non-entries through", () => {
    const same = [{ uri: "mem://a", mimeType: "text/plain", text: "a" }];
    expect(normalizeContents(same, testPolicy()).contents).toBe(same);
    expect(normalizeContents("nope", testPolicy())).toEqual({ contents: "nope", changes: [] });
    const odd = [
      null,
      3,
      "s",
      [],
      { uri: "mem://both", text: "a", blob: "YQ==" },
      { uri: "mem://neither" },
      { uri: "mem://n", text: 5 },
    ];
    const out = normalizeContents(odd, testPolicy());
    expect(out.contents).toBe(odd);
    expect(out.changes).toEqual([]);
  });
});
