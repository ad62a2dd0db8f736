/**
 * `maxResultBytes` on a `tools/call` result: its text blocks, in order, share a budget of N
 * UTF-8 bytes. The first block that does not fit is cut where the budget ends (at a character,
 * preferably grapheme, boundary), and a `resource_link` to the rest follows it; every later text
 * block is replaced by a link to its whole text (a block with more than its text — `_meta`,
 * `annotations` — stays, its text emptied, before its link), and later text blocks one after
 * another with nothing but their text share one link: a result of thousands of short blocks
 * must not become thousands of links, each longer than its text. The rest is held in pages of
 * at most N bytes, which the proxy serves on `resources/read` (each block's text its own entry);
 * the piece kept plus every page, concatenated, is the original text exactly. Other blocks
 * (images, resources, links) are left as they are.
 */
import { describeDuration } from "../../errors/describeDuration.js";
import type { ChangeRecord } from "../../normalize/change.js";
import { isJsonObject, rebuild, type JsonObject } from "../../normalize/objects.js";
import { isRawJsonString } from "../../wire/rawJson.js";
import { fitRecord } from "../records.js";
import { cutEnd, pageBounds, runPageBounds, utf8Bytes } from "./cutText.js";
import type { SpillStore } from "./spillStore.js";
import { DRY_RUN_SPILL_ID, spillUri } from "./spillUri.js";

/**
 * What one entry of a page adds around its text, counted against the page's `maxResultBytes`
 * when blocks share a link: `{"uri":"mcp-normalizer://spill/<id>/<page>#block-<n>",
 * "mimeType":"text/plain","text":""}` and a comma, with room to spare.
 */
const ENTRY_BYTES = 128;

export interface CutOptions {
  readonly maxBytes: number;
  /** Null in dryRun: nothing is held, records say what would happen. */
  readonly store: SpillStore | null;
  /** Who may read the pages back, as the link tells hosts (the store's, or the one a dry run would have). */
  readonly holder?: SpillStore["holder"];
  readonly dryRun: boolean;
  readonly ttlMs: number;
}

/** The content list with over-budget text cut; the original list itself when nothing was cut. */
export function cutContent(
  content: readonly unknown[],
  options: CutOptions,
  changes: ChangeRecord[],
): readonly unknown[] {
  let remaining = options.maxBytes;
  const recordsBefore = changes.length;
  for (let i = 0; i < content.length; i++) {
    const text = textOf(content[i]);
    if (text === null) continue;
    const block = content[i] as JsonObject;
    // Most results are far below the budget: the bytes are counted only when the length says they might not fit.
    const bytes = text.length * 3 <= remaining ? null : utf8Bytes(text);
    if (bytes === null || bytes <= remaining) {
      remaining -= bytes ?? utf8Bytes(text);
      continue;
    }
    const out = content.slice(0, i);
    const held: string[] = [];
    let j = i;
    // A bare block of which nothing fits joins the run after it rather than have a link of its own.
    if (!onlyText(block) || cutEnd(text, 0, remaining) > 0) {
      const first = cutBlock([block], [text], bytes, remaining, options, `content[${i}]`, changes);
      // No room for the rest: the whole result goes out as it was, not cut from a later block on.
      if (first === null) return content;
      held.push(first.id);
      out.push(...first.blocks);
      j = i + 1;
    }
    // The blocks after this one keep their places after the inserted link.
    while (j < content.length) {
      const next = content[j]!;
      const nextText = textOf(next);
      if (nextText === null || nextText.length === 0) {
        out.push(next);
        j++;
        continue;
      }
      // A run of blocks with only their text shares one link; any other text block has its own.
      const run = [next as JsonObject];
      const texts = [nextText];
      for (let k = j + 1; onlyText(next) && k < content.length; k++) {
        const more = textOf(content[k]);
        if (more === null || more.length === 0 || !onlyText(content[k])) break;
        run.push(content[k] as JsonObject);
        texts.push(more);
      }
      const bytes = texts.reduce((sum, piece) => sum + utf8Bytes(piece), 0);
      const cut = cutBlock(run, texts, bytes, 0, options, `content[${j}]`, changes);
      // No room for these pages: half cut, the result would still be over the limit. It goes
      // out whole, as a result that cannot be cut at all does: its pages let go, and only the
      // warning that says why is kept.
      if (cut === null) return uncut(content, held, options, changes, recordsBefore);
      held.push(cut.id);
      out.push(...cut.blocks);
      j += run.length;
    }
    return options.dryRun ? content : out;
  }
  return content;
}

/** A text block's text (a raw one decoded), or null for any other block. */
function textOf(block: unknown): string | null {
  if (!isJsonObject(block) || block.type !== "text") return null;
  return typeof block.text === "string" ? block.text : isRawJsonString(block.text) ? block.text.value() : null;
}

/**
 * Whether a block (one `textOf` read as text) carries nothing but its text: `type` and `text`.
 * Its keys only: the text, which a long raw literal holds as bytes, is not decoded again.
 */
function onlyText(block: unknown): boolean {
  return Object.keys(block as JsonObject).every((key) => key === "type" || key === "text");
}

/** The result as it came, once a later block could not be cut: pages let go, their records taken back. */
function uncut(
  content: readonly unknown[],
  held: readonly string[],
  options: CutOptions,
  changes: ChangeRecord[],
  recordsBefore: number,
): readonly unknown[] {
  for (const id of held) options.store?.discard(id);
  const warning = changes[changes.length - 1]!;
  changes.splice(recordsBefore);
  changes.push(warning);
  return content;
}

/**
 * The blocks that replace one text block — the piece that fits (if any) and a link to the rest —
 * or a run of bare ones (none kept: one link to all their texts), and the id the pages are held
 * under.
 */
function cutBlock(
  run: readonly JsonObject[],
  texts: readonly string[],
  bytes: number,
  budget: number,
  options: CutOptions,
  path: string,
  changes: ChangeRecord[],
): { blocks: JsonObject[]; id: string } | null {
  const block = run[0]!;
  const text = texts.length === 1 ? texts[0]! : texts.join("");
  const end = budget === 0 ? 0 : cutEnd(text, 0, budget);
  const rest = text.slice(end);
  // Where each block's text after the first starts in `rest` (only runs have more than one).
  const parts: number[] = [];
  for (let i = 1, at = texts[0]!.length - end; i < texts.length; at += texts[i]!.length, i++) parts.push(at);
  const bounds =
    parts.length === 0
      ? pageBounds(rest, 0, options.maxBytes)
      : runPageBounds(rest, parts, options.maxBytes, ENTRY_BYTES);
  const pages = bounds.length - 1;
  const restBytes = bytes - utf8Bytes(text, 0, end);
  const firstPageBytes = utf8Bytes(rest, 0, bounds[1]);
  const what = run.length === 1 ? `text of ${bytes} bytes` : `${run.length} text blocks of ${bytes} bytes`;
  const before = run.length === 1 ? block : run;
  let id: string | null = DRY_RUN_SPILL_ID;
  if (options.store !== null) id = options.store.add(rest, bounds, parts);
  if (id === null) {
    changes.push(
      fitRecord({
        action: "warn-spill-full",
        path,
        before,
        after: before,
        reason:
          `${what} over maxResultBytes (${options.maxBytes}) but limits.spillMaxBytes has no room for the rest; ` +
          "sent whole",
        applied: !options.dryRun,
      }),
    );
    return null;
  }
  const kept = end === 0 ? 0 : bytes - restBytes;
  const link = linkBlock(spillUri(id, 1), kept, restBytes, pages, firstPageBytes, run.length, options);
  // Nothing of the text kept: the block goes too, unless it carries more than its text
  // (`_meta`, `annotations`, a field of the server's own), which it keeps, its text emptied.
  const blocks = end === 0 && onlyText(block) ? [link] : [rebuild(block, { text: text.slice(0, end) }), link];
  changes.push(
    fitRecord({
      action: "cut-result",
      path,
      before,
      after: blocks,
      reason:
        `${what} cut at ${bytes - restBytes} (maxResultBytes ${options.maxBytes}); ${restBytes} ` +
        `bytes in ${pages} page(s) at ${spillUri(options.dryRun ? "…" : id, 1)}`,
      applied: !options.dryRun,
    }),
  );
  return { blocks, id };
}

function linkBlock(
  uri: string,
  kept: number,
  restBytes: number,
  pages: number,
  firstPageBytes: number,
  blocks: number,
  options: CutOptions,
): JsonObject {
  const lead =
    blocks > 1
      ? `The next ${blocks} text blocks of this result were not sent: they did not fit the size limit for tool ` +
        "results (in the pages, each block's text is an entry of its own)"
      : kept === 0
        ? "This text was not sent: it did not fit the size limit for tool results"
        : `The text above was cut after ${kept} bytes to fit the size limit for tool results`;
  return {
    type: "resource_link",
    uri,
    name: "rest-of-result",
    title: pages === 1 ? "Rest of this tool result" : `Rest of this tool result (page 1 of ${pages})`,
    description:
      `${lead}. The remaining ${restBytes} bytes are in ${pages} page(s) of at most ${options.maxBytes} ` +
      `bytes: read this resource (resources/read); each page except the last ends with a text/uri-list entry naming ` +
      `the next page. Available for about ${describeDuration(options.ttlMs)}, ` +
      ((options.store?.holder ?? options.holder) === "client" ? "to this client only." : "in this session only."),
    mimeType: "text/plain",
    size: firstPageBytes,
  };
}
