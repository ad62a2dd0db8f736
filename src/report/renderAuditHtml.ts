/**
 * The audit's own sections in HTML (see renderAuditMarkdown.ts): scope and notes, entries, skipped, structuredContent
 * duplicates.
 */
import { escapeHtml as esc } from "./escapeHtml.js";
import { failedSuffix, formatBytes, formatCount, formatCountOf } from "./format.js";
import type { ReportModel, Totals } from "./model.js";

/** How a duplicate whose text is the whole structuredContent is described. */
const DUPLICATE_SERIALIZED = "structuredContent serialized as JSON";

function num(n: number): string {
  return `<td class="num" data-value="${n}">${esc(formatBytes(n))}</td>`;
}

export function lossyTextHtml(totals: Totals): string {
  const n = totals.actions["warn-lossy-text"] ?? 0;
  if (n === 0) return "";
  return (
    `<section id="lossy-text"><h2>Lossy text</h2><p><span data-metric="lossy-text">${formatCount(n)}</span> ` +
    `${n === 1 ? "entry has" : "entries have"} U+FFFD replacement characters (<code>warn-lossy-text</code>): the ` +
    `upstream decoded bytes with the wrong charset and lost them. Passed unchanged; fix the server.</p></section>`
  );
}

export function scopeHtml(model: ReportModel): string {
  const scope = model.scope;
  if (scope === undefined) return "";
  const declared = Object.entries(scope.capabilities)
    .filter(([, on]) => on)
    .map(([name]) => name);
  const leftOut = scope.filteredOut > 0 ? ` (${formatCount(scope.filteredOut)} left out by --uri)` : "";
  const listed = scope.capabilities.resources ? `${formatCount(scope.listed)} resources listed${leftOut} · ` : "";
  const counts =
    `${listed}${formatCount(scope.read)} read${failedSuffix(scope.readFailed)} · ` +
    `${formatCountOf(scope.called, "tool call", "tool calls")}${failedSuffix(scope.callFailed)}`;
  const notes = scope.notes.map((note) => `<p class="note">${esc(note)}</p>`).join("");
  return (
    `<section id="scope"><h2>Scope</h2><p>Capabilities declared: <span id="capabilities">` +
    `${esc(declared.length === 0 ? "none of resources, tools, prompts" : declared.join(", "))}</span> · ` +
    `${esc(counts)}</p>${notes}</section>`
  );
}

export function auditSectionsHtml(model: ReportModel, maxRows: number): string {
  const out: string[] = [];
  if (model.items !== undefined) {
    const items = model.items;
    const shown = items.slice(0, maxRows);
    const rows = shown
      .map(
        (i) =>
          `<tr data-status="${esc(i.status)}" data-action="${esc(i.action)}"><td ` +
          `class="uri">${esc(i.target)}</td><td ` +
          `class="uri">${esc(i.path)}</td><td>${esc(i.status)}</td><td>${esc(i.action)}</td>` +
          `<td>${esc(i.mimeBefore ?? "–")} → ${esc(i.mimeAfter ?? "–")}</td>${num(i.bytesBefore)}` +
          `${num(i.bytesAfter)}` +
          `${num(i.saved)}<td>${esc(i.reason)}</td></tr>`,
      )
      .join("");
    const more =
      items.length > shown.length
        ? `<p class="meta">… and ${items.length - shown.length} more (see --format json).</p>`
        : "";
    out.push(
      `<section id="entries"><h2>Entries (${items.length})</h2>${
        items.length === 0
          ? `<p class="empty">No entries.</p>`
          : `<table id="item-table"><thead><tr><th>target</th><th>path</th><th>status</th><th>action</th><th>mime ` +
            `before → after</th><th class="num">before</th><th class="num">after</th><th ` +
            `class="num">saved</th><th>why</th></tr></thead><tbody>${rows}</tbody></table>${more}`
      }</section>`,
    );
  }
  const skipped = model.skipped ?? [];
  if (skipped.length > 0) {
    const rows = skipped
      .map(
        (s) =>
          `<tr><td class="uri">${esc(s.target)}</td><td ` +
          `class="uri">${esc(s.path ?? "–")}</td>${num(s.bytes)}<td>${esc(s.reason)}</td></tr>`,
      )
      .join("");
    out.push(
      `<section id="skipped"><h2>Skipped over --max-bytes (${skipped.length}, not in the totals)</h2><table ` +
        `id="skipped-table"><thead><tr><th>target</th><th>path</th><th ` +
        `class="num">bytes</th><th>why</th></tr></thead><tbody>${rows}</tbody></table></section>`,
    );
  }
  const duplicates = model.duplicates ?? [];
  if (duplicates.length > 0) {
    const bytes = duplicates.reduce((sum, d) => sum + d.bytes, 0);
    const rows = duplicates
      .map(
        (d) =>
          `<tr><td class="uri">${esc(d.target)}</td><td class="uri">${esc(d.path)}</td>` +
          `<td>${d.kind === "repeated" ? "same string inside structuredContent" : DUPLICATE_SERIALIZED}</td>` +
          `${num(d.bytes)}</tr>`,
      )
      .join("");
    out.push(
      `<section id="duplicates"><h2>structuredContent duplicates (${esc(formatBytes(bytes))})</h2><p ` +
        `class="legend">Bytes a tool result carries twice. Reported only: structuredContent is forwarded ` +
        `byte-identical (it must validate against the tool's outputSchema).</p><table ` +
        `id="duplicate-table"><thead><tr><th>target</th><th>content path</th><th>how</th><th ` +
        `class="num">bytes</th></tr></thead><tbody>${rows}</tbody></table></section>`,
    );
  }
  return out.join("\n");
}
