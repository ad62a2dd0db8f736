/**
 * One session's cut results: the text that did not go out, page boundaries, and what each page
 * links to. Pages belong to the session that made them; another session's URIs are unknown here.
 * Expired ids are remembered (a bounded number) so their reads say "expired", not "unknown".
 */
import type { SpillBudget, SpillHolder } from "./spillBudget.js";
import { newSpillId, parseSpillUri, spillUri } from "./spillUri.js";
import { lowerBound } from "../../wire/lowerBound.js";

/** Expired ids remembered per session to tell "expired" from "never known". */
const EXPIRED_REMEMBERED = 1000;

interface Spill {
  /**
   * The text as its own copy (not a slice that would keep the whole result alive): Latin-1 text
   * one byte per character, other text as UTF-16 code units (a lone surrogate survives exactly).
   */
  readonly held: Buffer;
  readonly encoding: "latin1" | "utf16le";
  /** Page k (1-based) is the text's characters [bounds[k-1], bounds[k]). */
  readonly bounds: readonly number[];
  /** Where the texts of blocks held together start (after the first's), each its own entry of a page. */
  readonly parts: readonly number[];
  readonly release: () => void;
}

export type PageRead =
  | {
      readonly ok: true;
      /**
       * The page's text: one piece, or (blocks held together) one per block whose text it holds
       * part of, with the block's number among them (from 1): a block a page's end cut goes on
       * in the next page under the same number.
       */
      readonly entries: readonly { readonly text: string; readonly block?: number }[];
      readonly page: number;
      readonly pages: number;
      readonly next: string | null;
    }
  | { readonly ok: false; readonly why: "expired" | "unknown" };

/** What one spill costs beyond its text, as the budget counts it. */
const SPILL_OVERHEAD_BYTES = 1024;

export class SpillStore implements SpillHolder {
  private readonly spills = new Map<string, Spill>();
  private readonly expired = new Set<string>();
  private closed = false;

  /**
   * `holder`: who may read the pages back, as the proxy tells hosts — the session they were cut
   * in, or (stateless requests) the client whose pool holds them.
   */
  constructor(
    readonly budget: SpillBudget,
    readonly holder: "session" | "client" = "session",
  ) {}

  /**
   * Holds `text` with pages at `bounds` (character indices from 0 to text.length) — the texts of
   * several blocks joined, `parts` where each after the first starts — and returns the id, or
   * null when the memory budget has no room for it. The budget counts the bytes held, and a fixed
   * share for each spill.
   */
  add(text: string, bounds: readonly number[], parts: readonly number[] = []): string | null {
    if (this.closed) return null;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the class is "anything above Latin-1", from U+0000 on.
    const encoding = /[^\u0000-\u00ff]/.test(text) ? "utf16le" : "latin1";
    // Each spill also costs what holds it (its entry, id, page bounds, the budget's record): counted,
    // so thousands of one-character spills cannot hold far more than the budget says.
    const size =
      (encoding === "latin1" ? text.length : text.length * 2) +
      SPILL_OVERHEAD_BYTES +
      (bounds.length + parts.length) * 8;
    const id = newSpillId();
    const reserved = this.budget.reserve(this, id, size);
    if (reserved === null) return null;
    this.spills.set(id, { held: Buffer.from(text, encoding), encoding, bounds, parts, release: reserved.release });
    return id;
  }

  read(uri: string): PageRead {
    const parsed = parseSpillUri(uri);
    if (parsed === null) return { ok: false, why: "unknown" };
    this.budget.sweep();
    const spill = this.spills.get(parsed.id);
    if (spill === undefined) return { ok: false, why: this.expired.has(parsed.id) ? "expired" : "unknown" };
    const pages = spill.bounds.length - 1;
    if (parsed.page > pages) return { ok: false, why: "unknown" };
    return {
      ok: true,
      entries: pageEntries(spill, parsed.page),
      page: parsed.page,
      pages,
      next: parsed.page < pages ? spillUri(parsed.id, parsed.page + 1) : null,
    };
  }

  /** Whether `id` is of pages this store holds, or held until they expired. */
  knows(id: string): boolean {
    return this.spills.has(id) || this.expired.has(id);
  }

  /** Lets go of pages never handed out (the result they were cut from went out whole). */
  discard(id: string): void {
    this.spills.get(id)?.release();
    this.spills.delete(id);
  }

  expire(id: string): void {
    if (!this.spills.delete(id)) return;
    this.expired.add(id);
    if (this.expired.size > EXPIRED_REMEMBERED) this.expired.delete(this.expired.values().next().value as string);
  }

  /** Session over: every page is released at once. */
  close(): void {
    this.closed = true;
    for (const spill of this.spills.values()) spill.release();
    this.spills.clear();
  }

  get count(): number {
    return this.spills.size;
  }
}

/** Page `page`'s text, cut where a held block's text starts inside it, each piece with its block's number. */
function pageEntries(spill: Spill, page: number): { text: string; block?: number }[] {
  const width = spill.encoding === "latin1" ? 1 : 2;
  const start = spill.bounds[page - 1]!;
  const end = spill.bounds[page]!;
  const text = (from: number, to: number): string => spill.held.toString(spill.encoding, from * width, to * width);
  if (spill.parts.length === 0) return [{ text: text(start, end) }];
  // Blocks started before the page: the first piece's block is one more than that.
  const before = lowerBound(spill.parts, start + 1);
  let block = 1 + before;
  const entries: { text: string; block: number }[] = [];
  let from = start;
  for (let i = before; i < spill.parts.length && spill.parts[i]! < end; i++) {
    entries.push({ text: text(from, spill.parts[i]!), block: block++ });
    from = spill.parts[i]!;
  }
  entries.push({ text: text(from, end), block });
  return entries;
}
