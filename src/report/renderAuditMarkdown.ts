/**
 * The audit's own sections in Markdown: scope and notes, every entry, skipped entries, structuredContent duplicates.
 */
import { failedSuffix, formatBytes, formatCount, formatCountOf } from "./format.js";
import { cell, code, table } from "./markdownTable.js";
import type { ReportModel, Totals } from "./model.js";

/** Lines about lossy text, for audits and log reports alike (empty when there is none). */
export function lossyTextLines(totals: Totals): string[] {
  const n = totals.actions["warn-lossy-text"] ?? 0;
  if (n === 0) return [];
  return [
    `**${formatCount(n)} ${n === 1 ? "entry has" : "entries have"} lossy text** (\`warn-lossy-text\`): U+FFFD ` +
      `replacement characters — the upstream decoded bytes with the wrong charset and lost them. Passed unchanged; ` +
      `fix the server.`,
    "",
  ];
}

export function scopeLines(model: ReportModel): string[] {
  const scope = model.scope;
  if (scope === undefined) return [];
  const declared = Object.entries(scope.capabilities)
    .filter(([, on]) => on)
    .map(([name]) => name);
  const parts = [
    `Capabilities declared: ${declared.length === 0 ? "none of resources, tools, prompts" : declared.join(", ")}.`,
  ];
  if (scope.capabilities.resources)
    parts.push(
      `${formatCountOf(scope.listed, "resource", "resources")} ` +
        `listed${scope.filteredOut > 0 ? ` (${formatCount(scope.filteredOut)} left out by --uri)` : ""}.`,
    );
  // Asked for, and how many of those failed: a failed read is in the failures below, not a read.
  parts.push(
    `${formatCountOf(scope.read, "resource", "resources")} read${failedSuffix(scope.readFailed)}, ` +
      `${formatCountOf(scope.called, "tool call", "tool calls")}${failedSuffix(scope.callFailed)}.`,
  );
  return [parts.join(" "), "", ...scope.notes.flatMap((note) => [`> ${note}`, ""])];
}

export function auditSections(model: ReportModel, maxRows: number): Array<[title: string, body: string[]]> {
  const sections: Array<[string, string[]]> = [];
  const items = model.items ?? [];
  if (model.items !== undefined) {
    const shown = items.slice(0, maxRows);
    const body =
      items.length === 0
        ? ["No entries."]
        : table(
            ["target", "path", "status", "action", "mime before → after", "before", "after", "saved", "why"],
            shown.map((i) => [
              code(i.target),
              code(i.path),
              i.status,
              i.action,
              cell(
                i.mimeBefore === i.mimeAfter
                  ? (i.mimeAfter ?? "–")
                  : `${i.mimeBefore ?? "–"} → ` + `${i.mimeAfter ?? "–"}`,
              ),
              formatBytes(i.bytesBefore),
              formatBytes(i.bytesAfter),
              formatBytes(i.saved),
              cell(i.reason),
            ]),
          );
    if (items.length > shown.length) body.push("", `… and ${items.length - shown.length} more (see --format json).`);
    sections.push([`Entries (${items.length})`, body]);
  }
  const skipped = model.skipped ?? [];
  if (skipped.length > 0) {
    sections.push([
      `Skipped over --max-bytes (${skipped.length}, not in the totals)`,
      table(
        ["target", "path", "bytes", "why"],
        skipped.map((s) => [
          code(s.target),
          s.path === null ? "–" : code(s.path),
          formatBytes(s.bytes),
          cell(s.reason),
        ]),
      ),
    ]);
  }
  const duplicates = model.duplicates ?? [];
  if (duplicates.length > 0) {
    const bytes = duplicates.reduce((sum, d) => sum + d.bytes, 0);
    sections.push([
      `structuredContent duplicates (${formatBytes(bytes)})`,
      [
        "Bytes a tool result carries twice: once in a content block, again in structuredContent. Reported only — " +
          "structuredContent is forwarded byte-identical (it must validate against the tool's outputSchema).",
        "",
        ...table(
          ["target", "content path", "how", "bytes"],
          duplicates.map((d) => [
            code(d.target),
            code(d.path),
            d.kind === "repeated" ? "same string inside structuredContent" : "structuredContent serialized as JSON",
            formatBytes(d.bytes),
          ]),
        ),
      ],
    ]);
  }
  return sections;
}
