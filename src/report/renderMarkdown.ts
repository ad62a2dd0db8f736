/** The report model as Markdown: readable in a terminal, pasteable into an issue or a PR. */
import {
  formatActions,
  formatBytes,
  formatCount,
  formatCountOf,
  formatShare,
  formatShareOfSaved,
  noOffendersText,
  withoutUriLine,
} from "./format.js";
import { cell, code, table } from "./markdownTable.js";
import { failedCount, type GroupRow, type ReportModel, type Totals, type UriRow, unlistedFailures } from "./model.js";
import { auditSections, lossyTextLines, scopeLines } from "./renderAuditMarkdown.js";

/** Rows of the per-resource table in Markdown (the JSON format always has them all). */
export const DEFAULT_MARKDOWN_MAX_ROWS = 200;

/** The four kinds of rewrite a report counts per row: unwrapped, transcoded, re-encoded, mime fixed. */
export function changeCounts(actions: Readonly<Record<string, number>>): {
  unwrapped: number;
  transcoded: number;
  reencoded: number;
  mimeFixed: number;
} {
  const n = (action: string): number => actions[action] ?? 0;
  return {
    unwrapped: n("unwrap-blob"),
    transcoded: n("transcode"),
    reencoded: n("reencode-blob"),
    mimeFixed: n("fix-mime") + n("fill-mime"),
  };
}

export function renderMarkdown(model: ReportModel, options: { maxRows?: number } = {}): string {
  const maxRows = options.maxRows ?? DEFAULT_MARKDOWN_MAX_ROWS;
  const t = model.totals;
  const out: string[] = [];
  out.push(
    `# ${model.kind === "audit" ? "Size audit" : "Size report"}` +
      `${model.source.server === undefined ? "" : `: ${model.source.server}`}`,
    "",
  );
  if (model.source.upstream !== undefined) out.push(`Upstream: \`${model.source.upstream}\``, "");
  if (model.source.files !== undefined) out.push(`Logs: ${model.source.files.map((f) => `\`${f}\``).join(", ")}`, "");
  out.push(
    `Time range: ${model.timeRange.from ?? "–"} … ${model.timeRange.to ?? "–"} · generated ${model.generatedAt}`,
    "",
  );
  const c = changeCounts(t.actions);
  out.push(
    `**${formatBytes(t.bytesBefore)} → ${formatBytes(t.bytesAfter)}: ${formatBytes(t.saved)} saved ` +
      `(${formatShare(t.shareSaved)})** over ${formatCountOf(t.entries, "entry", "entries")} — ` +
      `${c.unwrapped} unwrapped, ${c.transcoded} transcoded, ${c.reencoded} re-encoded, ${c.mimeFixed} mime fixed, ` +
      `${t.warned} warned.`,
    "",
  );
  if (model.tokens !== undefined && t.tokensBefore !== undefined && t.tokensAfter !== undefined) {
    out.push(
      `Estimated tokens (${model.tokens.encoding}): ${formatCount(t.tokensBefore)} → ${formatCount(t.tokensAfter)} ` +
        `(${formatCount(t.tokensBefore - t.tokensAfter)} fewer). ${model.tokens.note}`,
      "",
    );
  }
  out.push(...lossyTextLines(t));
  if (model.scope !== undefined) out.push(...scopeLines(model));
  else if (model.resources !== undefined)
    out.push(
      `${formatCount(model.resources.listed)} resources listed, ${formatCount(model.resources.failed)} failed to read.`,
      "",
    );
  if (t.notApplied > 0)
    out.push(
      `${formatCountOf(t.notApplied, "change was", "changes were")} logged in dry run (not applied); ` +
        "they are counted as if made.",
      "",
    );

  section(
    out,
    "Top offenders",
    model.topOffenders.length === 0
      ? [noOffendersText(model)]
      : uriTable(model.topOffenders, model.topOffenders.length, model.totals.saved),
  );
  if (model.kind === "audit")
    section(
      out,
      "Resources",
      model.byUri.length === 0 ? ["No resources."] : uriTable(model.byUri, maxRows, model.totals.saved),
    );
  for (const [title, body] of auditSections(model, maxRows)) section(out, title, body);
  section(out, "By server", groupTable(model.byServer, "server", model.totals.saved));
  section(out, "By mime type", groupTable(model.byMime, "mime type", model.totals.saved));
  section(out, "By action", groupTable(model.byAction, "action", model.totals.saved));
  section(out, "By method", groupTable(model.byMethod, "method", model.totals.saved));
  if (model.kind === "audit") {
    const more = unlistedFailures(model);
    section(
      out,
      `Failed reads and tool errors (${formatCount(failedCount(model))})`,
      model.failures.length === 0
        ? ["None."]
        : [
            ...table(
              ["uri", "error"],
              model.failures.map((f) => [code(f.uri), cell(f.error)]),
            ),
            ...(more === null ? [] : ["", more]),
          ],
    );
  } else {
    const m = model.malformed;
    const lines = [
      `${formatCount(m.lines)} malformed lines skipped; ${formatCount(model.ignoredLines)} other JSON lines ` +
        `(operational log) ignored.`,
    ];
    if (m.examples.length > 0)
      lines.push(
        "",
        ...table(
          ["source", "line", "error"],
          m.examples.map((e) => [code(e.source), String(e.line), cell(e.error)]),
        ),
      );
    section(out, "Input", lines);
  }
  if (model.uriTable.untrackedEntries > 0)
    out.push(
      `The URI table kept the ${formatCount(model.uriTable.limit)} most significant URIs; ` +
        `${formatCount(model.uriTable.untrackedEntries)} entries of other URIs are not in it ` +
        `(totals are exact; a URI dropped from it and seen again counts from its return: with more URIs ` +
        `than --max-uris, its rows are approximate).`,
      "",
    );
  if (model.uriTable.entriesWithoutUri > 0) out.push(withoutUriLine(model.uriTable.entriesWithoutUri), "");
  return `${out.join("\n").trimEnd()}\n`;
}

function section(out: string[], title: string, body: string[]): void {
  out.push(`## ${title}`, "", ...body, "");
}

function uriTable(rows: readonly UriRow[], maxRows: number, totalSaved: number): string[] {
  const shown = rows.slice(0, maxRows);
  const lines = table(
    [
      "uri",
      "server",
      "mime",
      "unwrapped",
      "transcoded",
      "re-encoded",
      "mime fixed",
      "warned",
      "before",
      "after",
      "saved",
      "share",
    ],
    shown.map((r) => {
      const c = changeCounts(r.actions);
      return [
        code(r.uri),
        cell(r.server),
        cell(r.mime),
        String(c.unwrapped),
        String(c.transcoded),
        String(c.reencoded),
        String(c.mimeFixed),
        String(r.warned),
        ...sizes(r),
        formatShareOfSaved(r.shareOfSaved, totalSaved),
      ];
    }),
  );
  if (rows.length > shown.length) lines.push("", `… and ${rows.length - shown.length} more (see --format json).`);
  return lines;
}

function groupTable(rows: readonly GroupRow[], name: string, totalSaved: number): string[] {
  if (rows.length === 0) return ["–"];
  return table(
    [name, "entries", "changes", "before", "after", "saved", "share"],
    rows.map((r) => [
      cell(r.key),
      formatCount(r.entries),
      cell(formatActions(r.actions)),
      ...sizes(r),
      formatShareOfSaved(r.shareOfSaved, totalSaved),
    ]),
  );
}

function sizes(t: Totals): string[] {
  return [formatBytes(t.bytesBefore), formatBytes(t.bytesAfter), formatBytes(t.saved)];
}
