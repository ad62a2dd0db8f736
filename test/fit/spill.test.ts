import { describe, expect, it } from "vitest";
import type { ChangeRecord } from "../../src/normalize/change.js";
import { cutContent } from "../../src/fit/spill/cutResult.js";
import { JSONRPC } from "../../src/errors/jsonRpcCodes.js";
import { servePage } from "../../src/fit/spill/servePage.js";
import { SpillBudget } from "../../src/fit/spill/spillBudget.js";
import { SpillStore } from "../../src/fit/spill/spillStore.js";
import { spillUri } from "../../src/fit/spill/spillUri.js";
import { pageReadAnswer } from "../../src/proxy/pageRead.js";

/** Every text entry of every page a link leads to, following the text/uri-list entries. */
function readEntries(store: SpillStore, first: string): string[] {
  return readNamedEntries(store, first).map((entry) => entry.text);
}

/** Every text entry of every page a link leads to, with the fragment its URI ends in (`#block-N`), if any. */
function readNamedEntries(store: SpillStore, first: string): { text: string; name: string; bytes: number }[] {
  const entries: { text: string; name: string; bytes: number }[] = [];
  let uri: string | null = first;
  for (let guard = 0; uri !== null && guard < 100_000; guard++) {
    const answer = servePage(store, uri);
    if (!("result" in answer)) throw new Error(answer.error.message);
    const contents = answer.result.contents as Array<{ uri: string; mimeType: string; text: string }>;
    const bytes = Buffer.byteLength(JSON.stringify(answer.result));
    const next = contents.at(-1)!.mimeType === "text/uri-list" ? contents.pop()! : undefined;
    for (const entry of contents) {
      expect(entry.mimeType).toBe("text/plain");
      expect(entry.uri.startsWith(uri)).toBe(true);
      entries.push({ text: entry.text, name: entry.uri.slice(uri.length), bytes });
    }
    uri = next === undefined ? null : next.text.trim();
  }
  return entries;
}

/** The text of every page a link leads to. */
function readAll(store: SpillStore, first: string): string {
  return readEntries(store, first).join("");
}

describe("cutting a tool result and serving the rest", () => {
  const original = `${"naïve café ".repeat(2000)}😀 end`;

  it("cuts to at most N bytes, links the rest, and the pages rebuild the original exactly", () => {
    const store = new SpillStore(new SpillBudget(1 << 20, 60_000));
    const changes: ChangeRecord[] = [];
    const content = [
      { type: "text", text: original },
      { type: "image", data: "AAAA", mimeType: "image/png" },
    ];
    const out = cutContent(content, { maxBytes: 4096, store, dryRun: false, ttlMs: 60_000 }, changes) as Array<
      Record<string, unknown>
    >;
    expect(out).toHaveLength(3);
    expect(Buffer.byteLength(out[0]!.text as string)).toBeLessThanOrEqual(4096);
    expect(out[1]).toMatchObject({ type: "resource_link", mimeType: "text/plain" });
    expect(out[2]).toBe(content[1]);
    expect((out[0]!.text as string) + readAll(store, out[1]!.uri as string)).toBe(original);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ action: "cut-result", path: "content[0]", applied: true });
    expect(changes[0]!.bytesAfter).toBeLessThan(changes[0]!.bytesBefore);
  });

  it("a dry run's record measures the link that would go out: the same sizes as the cut made", () => {
    for (const holder of ["session", "client"] as const) {
      const store = new SpillStore(new SpillBudget(1 << 20, 60_000), holder);
      const made: ChangeRecord[] = [];
      const dry: ChangeRecord[] = [];
      const content = [
        { type: "text", text: original },
        { type: "text", text: "a later block" },
      ];
      const out = cutContent(content, { maxBytes: 4096, store, dryRun: false, ttlMs: 60_000 }, made);
      expect(out).not.toBe(content);
      const unchanged = cutContent(content, { maxBytes: 4096, store: null, holder, dryRun: true, ttlMs: 60_000 }, dry);
      expect(unchanged).toBe(content);
      expect(dry.map((change) => change.applied)).toEqual([false, false]);
      expect(dry.map((change) => [change.bytesBefore, change.bytesAfter])).toEqual(
        made.map((change) => [change.bytesBefore, change.bytesAfter]),
      );
    }
  });

  it("leaves a result under the budget as the very same list", () => {
    const store = new SpillStore(new SpillBudget(1 << 20, 60_000));
    const content = [{ type: "text", text: "short" }];
    expect(cutContent(content, { maxBytes: 4096, store, dryRun: false, ttlMs: 60_000 }, [])).toBe(content);
  });

  it("shares the budget over text blocks: a later block is replaced by a link to all of it", () => {
    const store = new SpillStore(new SpillBudget(1 << 20, 60_000));
    const a = "a".repeat(3000);
    const b = "b".repeat(3000);
    const changes: ChangeRecord[] = [];
    const c = "c".repeat(100);
    const out = cutContent(
      [
        { type: "text", text: a },
        { type: "text", text: b },
        { type: "text", text: c },
      ],
      { maxBytes: 4096, store, dryRun: false, ttlMs: 60_000 },
      changes,
    ) as Array<Record<string, unknown>>;
    expect(out.map((block) => block.type)).toEqual(["text", "text", "resource_link", "resource_link"]);
    expect(out[0]!.text).toBe(a);
    expect((out[1]!.text as string) + readAll(store, out[2]!.uri as string)).toBe(b);
    expect(readAll(store, out[3]!.uri as string)).toBe(c);
    expect(changes.map((change) => change.path)).toEqual(["content[1]", "content[2]"]);
  });

  it("later blocks with only their text share one link: thousands of short blocks do not become thousands of links", () => {
    const store = new SpillStore(new SpillBudget(1 << 30, 60_000));
    const changes: ChangeRecord[] = [];
    const texts = Array.from({ length: 30_000 }, (_, i) => `item ${String(i).padStart(5, "0")}é\n`);
    const content = texts.map((text) => ({ type: "text", text }));
    const out = cutContent(content, { maxBytes: 4096, store, dryRun: false, ttlMs: 60_000 }, changes) as Array<
      Record<string, unknown>
    >;
    // The blocks that fit, the one cut and its link, then one link for the 29,000-odd after it.
    const links = out.filter((block) => block.type === "resource_link");
    expect(links).toHaveLength(2);
    expect(links[1]!.description).toMatch(/^The next \d+ text blocks of this result were not sent/);
    const keptBlocks = out.filter((block) => block.type === "text");
    // What goes out beyond the blocks kept is the two links: not a link per block.
    expect(Buffer.byteLength(JSON.stringify(out)) - Buffer.byteLength(JSON.stringify(keptBlocks))).toBeLessThan(2000);
    const kept = keptBlocks.map((block) => block.text as string);
    const cutAt = kept.length - 1;
    const first = readEntries(store, links[0]!.uri as string);
    const rest = readNamedEntries(store, links[1]!.uri as string);
    // Exact, and each block's text told apart by the name of its entries (#block-N, the same for
    // a block a page's end cut and the next page goes on with).
    expect(kept.join("") + first.join("") + rest.map((entry) => entry.text).join("")).toBe(texts.join(""));
    const blocks = new Map<string, string>();
    for (const entry of rest) blocks.set(entry.name, (blocks.get(entry.name) ?? "") + entry.text);
    expect([...blocks.keys()]).toEqual(texts.slice(cutAt + 1).map((_, n) => `#block-${n + 1}`));
    expect([...blocks.values()]).toEqual(texts.slice(cutAt + 1));
    // Each page's whole answer stays near the limit, however many entries it holds.
    expect(Math.max(...rest.map((entry) => entry.bytes))).toBeLessThan(4096 + 200);
    expect(changes).toHaveLength(2);
    expect(changes[1]).toMatchObject({ action: "cut-result", path: `content[${cutAt + 1}]` });
    expect(changes[1]!.reason).toMatch(/^\d+ text blocks of \d+ bytes cut at 0/);
  });

  it("a bare block of which nothing fits joins the run after it; a page ending where a block ends is told apart", () => {
    const store = new SpillStore(new SpillBudget(1 << 20, 60_000));
    const t = (c: string, n: number) => ({ type: "text", text: c.repeat(n) });
    // 4096 bytes fill the budget: the "x" block keeps nothing, and shares the link of the run.
    const out = cutContent(
      [t("0", 4096), t("x", 1), t("a", 600), t("b", 3000), t("c", 3000)],
      {
        maxBytes: 4096,
        store,
        dryRun: false,
        ttlMs: 60_000,
      },
      [],
    ) as Array<Record<string, unknown>>;
    expect(out.map((block) => block.type)).toEqual(["text", "resource_link"]);
    const entries = readNamedEntries(store, out[1]!.uri as string);
    const blocks = new Map<string, string>();
    for (const entry of entries) blocks.set(entry.name, (blocks.get(entry.name) ?? "") + entry.text);
    expect([...blocks]).toEqual([
      ["#block-1", "x"],
      ["#block-2", "a".repeat(600)],
      ["#block-3", "b".repeat(3000)],
      ["#block-4", "c".repeat(3000)],
    ]);
  });

  it("a run of bare text blocks ends at any other block: an image keeps its place, a block with _meta its own link", () => {
    const store = new SpillStore(new SpillBudget(1 << 20, 60_000));
    const image = { type: "image", data: "AAAA", mimeType: "image/png" };
    const meta = { type: "text", text: "m".repeat(10), _meta: { k: 1 } };
    const t = (c: string) => ({ type: "text", text: c.repeat(10) });
    const out = cutContent(
      [{ type: "text", text: "x".repeat(5000) }, t("a"), t("b"), image, t("c"), meta, t("d"), t("e")],
      { maxBytes: 4096, store, dryRun: false, ttlMs: 60_000 },
      [],
    ) as Array<Record<string, unknown>>;
    expect(out.map((block) => (block.type === "text" && block._meta ? "meta" : block.type))).toEqual([
      "text",
      "resource_link",
      "resource_link", // a, b
      "image",
      "resource_link", // c
      "meta",
      "resource_link", // m
      "resource_link", // d, e
    ]);
    expect(readNamedEntries(store, out[2]!.uri as string).map(({ text, name }) => [name, text])).toEqual([
      ["#block-1", "a".repeat(10)],
      ["#block-2", "b".repeat(10)],
    ]);
    expect(readNamedEntries(store, out[4]!.uri as string)).toMatchObject([{ name: "", text: "c".repeat(10) }]);
    expect(readEntries(store, out[6]!.uri as string)).toEqual(["m".repeat(10)]);
    expect(readEntries(store, out[7]!.uri as string)).toEqual(["d".repeat(10), "e".repeat(10)]);
  });

  it("a later block with more than its text stays, its text emptied, its _meta, annotations and own fields kept", () => {
    const store = new SpillStore(new SpillBudget(1 << 20, 60_000));
    const b = "b".repeat(3000);
    const later = { type: "text", text: b, _meta: { trace: 7 }, annotations: { priority: 0.5 }, vendor: "x" };
    const out = cutContent(
      [{ type: "text", text: "a".repeat(4096) }, later],
      { maxBytes: 4096, store, dryRun: false, ttlMs: 60_000 },
      [],
    ) as Array<Record<string, unknown>>;
    expect(out.map((block) => block.type)).toEqual(["text", "text", "resource_link"]);
    expect(out[1]).toEqual({ ...later, text: "" });
    expect(readAll(store, out[2]!.uri as string)).toBe(b);
  });

  it("keeps lone surrogates and non-Latin-1 text exact through the pages", () => {
    const store = new SpillStore(new SpillBudget(1 << 20, 60_000));
    const text = `${"日本語\ud800".repeat(1500)}`;
    const out = cutContent(
      [{ type: "text", text }],
      { maxBytes: 1024, store, dryRun: false, ttlMs: 60_000 },
      [],
    ) as Array<Record<string, unknown>>;
    expect((out[0]!.text as string) + readAll(store, out[1]!.uri as string)).toBe(text);
  });

  it("dry run: records the cut, sends the original, holds nothing", () => {
    const changes: ChangeRecord[] = [];
    const content = [{ type: "text", text: original }];
    expect(cutContent(content, { maxBytes: 4096, store: null, dryRun: true, ttlMs: 60_000 }, changes)).toBe(content);
    expect(changes[0]).toMatchObject({ action: "cut-result", applied: false });
  });

  it("sends the text whole with a warning when the memory budget has no room", () => {
    const store = new SpillStore(new SpillBudget(1000, 60_000));
    const changes: ChangeRecord[] = [];
    const content = [{ type: "text", text: original }];
    expect(cutContent(content, { maxBytes: 4096, store, dryRun: false, ttlMs: 60_000 }, changes)).toBe(content);
    expect(changes[0]).toMatchObject({ action: "warn-spill-full" });
  });

  it("sends the whole result, every block, when the first block over the budget finds no room", () => {
    const store = new SpillStore(new SpillBudget(1000, 60_000));
    const changes: ChangeRecord[] = [];
    const content = [
      { type: "text", text: original },
      { type: "text", text: "x".repeat(3000) },
    ];
    expect(cutContent(content, { maxBytes: 4096, store, dryRun: false, ttlMs: 60_000 }, changes)).toBe(content);
    expect(changes.map((c) => c.action)).toEqual(["warn-spill-full"]);
  });

  it("sends the whole result when a later block's pages find no room, and lets the first block's go", () => {
    // Room for the first block's rest, not for the second's: half cut, the result was still over the limit.
    const budget = new SpillBudget(8000, 60_000);
    const store = new SpillStore(budget);
    const changes: ChangeRecord[] = [];
    const content = [
      { type: "text", text: "a".repeat(5000) },
      { type: "text", text: "b".repeat(5000) },
    ];
    expect(cutContent(content, { maxBytes: 2000, store, dryRun: false, ttlMs: 60_000 }, changes)).toBe(content);
    expect(changes.map((c) => [c.action, c.path])).toEqual([["warn-spill-full", "content[1]"]]);
    expect(store.count).toBe(0);
    // What was let go is free again: the first block alone is cut now.
    const alone = [{ type: "text", text: "a".repeat(5000) }];
    expect(cutContent(alone, { maxBytes: 2000, store, dryRun: false, ttlMs: 60_000 }, [])).not.toBe(alone);
  });

  it("answers an expired page and another session's page with a clear resource-not-found error", () => {
    let now = 0;
    const budget = new SpillBudget(1 << 20, 1000, () => now);
    const mine = new SpillStore(budget);
    const theirs = new SpillStore(budget);
    const out = cutContent(
      [{ type: "text", text: original }],
      { maxBytes: 4096, store: mine, dryRun: false, ttlMs: 1000 },
      [],
    ) as Array<Record<string, unknown>>;
    const uri = out[1]!.uri as string;
    const foreign = servePage(theirs, uri);
    expect(foreign).toMatchObject({ error: { code: JSONRPC.RESOURCE_NOT_FOUND, data: { uri } } });
    expect("error" in foreign && foreign.error.message).toMatch(/no such page in this session/);
    expect(budget.usedBytes).toBeGreaterThan(0);
    now = 1001;
    const expired = servePage(mine, uri);
    expect("error" in expired && expired.error.message).toMatch(
      /expired \(pages are kept for 1 s \(limits.spillTtlMs\)\)/,
    );
    expect(budget.usedBytes).toBe(0);
  });

  it("a page's URI in other letter cases is still the proxy's: served, never sent to the server", () => {
    const store = new SpillStore(new SpillBudget(1 << 20, 60_000));
    const out = cutContent(
      [{ type: "text", text: original }],
      { maxBytes: 4096, store, dryRun: false, ttlMs: 60_000 },
      [],
    );
    const uri = (out as Array<Record<string, unknown>>)[1]!.uri as string;
    const rest = original.slice((out as Array<{ text: string }>)[0]!.text.length);
    for (const shown of [
      uri.replace("mcp-normalizer://spill/", "MCP-NORMALIZER://SPILL/"),
      `Mcp-Normalizer${uri.slice(14)}`,
    ]) {
      const answer = pageReadAnswer(store, { id: 1, method: "resources/read", params: { uri: shown } });
      expect(answer).not.toBeNull();
      expect(readAll(store, shown)).toBe(rest);
    }
  });

  it.each([
    [400, "400 ms"],
    [1500, "1500 ms"],
    [30_000, "30 s"],
    [600_000, "10 minutes"],
  ])("a limits.spillTtlMs of %i ms is told as %s, in the link and when a page has expired", (ttlMs, told) => {
    let now = 0;
    const budget = new SpillBudget(1 << 20, ttlMs, () => now);
    const store = new SpillStore(budget);
    const out = cutContent(
      [{ type: "text", text: original }],
      { maxBytes: 4096, store, dryRun: false, ttlMs },
      [],
    ) as Array<Record<string, unknown>>;
    expect(out[1]!.description).toContain(`Available for about ${told}, in this session only.`);
    now = ttlMs + 1;
    const expired = servePage(store, out[1]!.uri as string);
    expect("error" in expired && expired.error.message).toContain(`pages are kept for ${told} (limits.spillTtlMs)`);
  });

  it("tells the host a stateless client's pages are the client's, not a session's", () => {
    const budget = new SpillBudget(1 << 20, 60_000);
    const pool = new SpillStore(budget, "client");
    const out = cutContent(
      [{ type: "text", text: original }],
      { maxBytes: 4096, store: pool, dryRun: false, ttlMs: 60_000 },
      [],
    ) as Array<Record<string, unknown>>;
    expect(out[1]!.description).toMatch(/Available for about 1 minute, to this client only\.$/);
    const missing = servePage(new SpillStore(budget, "client"), out[1]!.uri as string);
    expect("error" in missing && missing.error.message).toMatch(
      /no such page for this client \(.* read only by the client that received the result, until they expire after 1 minute \(limits.spillTtlMs\), or its pooled upstreams all end \(idle for limits.sessionIdleMs\)\)/,
    );
    // A session's link says so.
    const session = cutContent(
      [{ type: "text", text: original }],
      { maxBytes: 4096, store: new SpillStore(budget), dryRun: false, ttlMs: 60_000 },
      [],
    ) as Array<Record<string, unknown>>;
    expect(session[1]!.description).toMatch(/in this session only\.$/);
  });

  it("releases a session's pages when it closes", () => {
    const budget = new SpillBudget(1 << 20, 60_000);
    const store = new SpillStore(budget);
    cutContent([{ type: "text", text: original }], { maxBytes: 4096, store, dryRun: false, ttlMs: 60_000 }, []);
    expect(budget.usedBytes).toBeGreaterThan(0);
    store.close();
    expect(budget.usedBytes).toBe(0);
  });
});

describe("the spill budget and many tiny spills", () => {
  it("counts each spill's own cost: a MiB holds about a thousand one-character spills, not a million", () => {
    const store = new SpillStore(new SpillBudget(1 << 20, 60_000));
    let held = 0;
    while (held < 1_000_000 && store.add("x", [0, 1]) !== null) held++;
    expect(held).toBeGreaterThan(900);
    expect(held).toBeLessThan(1100);
    store.close();
  });

  it("spills let go behind a live one are dropped, not kept until it expires", () => {
    const budget = new SpillBudget(1 << 30, 60_000);
    const live = new SpillStore(budget);
    const kept = live.add("kept", [0, 4])!;
    // A result cut block by block and then sent whole, again and again.
    const churn = new SpillStore(budget);
    for (let round = 0; round < 20; round++) {
      const ids = Array.from({ length: 5000 }, () => churn.add("x", [0, 1])!);
      for (const id of ids) churn.discard(id);
    }
    expect(budget.records).toBeLessThan(3000);
    expect(live.read(spillUri(kept, 1))).toMatchObject({ ok: true, entries: [{ text: "kept" }] });
  });
});
