/**
 * Inline SVG bar charts for the HTML report: no script, no fonts, no network (one
 * self-contained file). Each bar carries `data-key`/`data-bytes` so tests and tools can read
 * what was drawn.
 */
import { escapeHtml } from "./escapeHtml.js";
import { formatBytes, formatShare } from "./format.js";

export interface BarRow {
  key: string;
  before: number;
  after: number;
}

/** Most rows one chart draws; the rest are summed into one `(N more)` row. */
export const DEFAULT_CHART_MAX_ROWS = 12;

const WIDTH = 760;
const LABEL_W = 220;
const VALUE_W = 180;
const ROW_H = 36;
const BAR_H = 12;
/** Longest label drawn whole (about what fits LABEL_W at 12px); longer ones end in `…`. */
const LABEL_CHARS = 30;

/** Bytes before (grey) and after (blue) per row, on one scale. */
export function beforeAfterChart(title: string, rows: readonly BarRow[], maxRows = DEFAULT_CHART_MAX_ROWS): string {
  const shown = foldRows(rows, maxRows);
  const max = Math.max(1, ...shown.map((r) => Math.max(r.before, r.after)));
  const barSpace = WIDTH - LABEL_W - VALUE_W;
  const scale = (n: number): number => (n <= 0 ? 0 : Math.max(1, (n / max) * barSpace));
  const height = Math.max(1, shown.length) * ROW_H + 8;
  const parts: string[] = [];
  shown.forEach((row, i) => {
    const y = 4 + i * ROW_H;
    const label = row.key.length > LABEL_CHARS ? `${row.key.slice(0, LABEL_CHARS - 1)}…` : row.key;
    const saved = row.before - row.after;
    parts.push(
      `<g class="row" data-key="${escapeHtml(row.key)}"><title>` +
        `${escapeHtml(`${row.key}: ${formatBytes(row.before)} → ${formatBytes(row.after)}`)}</title>`,
      `<text class="label" x="${LABEL_W - 8}" y="${y + BAR_H + 5}" text-anchor="end">${escapeHtml(label)}</text>`,
      `<rect class="bar before" data-key="${escapeHtml(row.key)}" data-bytes="${row.before}" x="${LABEL_W}" y="${y}" ` +
        `width="${scale(row.before).toFixed(1)}" height="${BAR_H}" rx="2"/>`,
      `<rect class="bar after" data-key="${escapeHtml(row.key)}" data-bytes="${row.after}" x="${LABEL_W}" ` +
        `y="${y + BAR_H + 2}" width="${scale(row.after).toFixed(1)}" height="${BAR_H}" rx="2"/>`,
      `<text class="value" x="${WIDTH - VALUE_W + 10}" ` +
        `y="${y + BAR_H - 1}">${escapeHtml(`${formatBytes(row.before)} → ${formatBytes(row.after)}`)}</text>`,
      saved === 0
        ? ""
        : `<text class="value ${saved > 0 ? "saved" : "grew"}" x="${WIDTH - VALUE_W + 10}" y="${y + 2 * BAR_H + 1}">` +
            `${escapeHtml(saved > 0 ? `saved ${formatBytes(saved)}` : `grew ${formatBytes(-saved)}`)}</text>`,
      "</g>",
    );
  });
  if (shown.length === 0) parts.push(`<text class="label" x="8" y="24">nothing recorded</text>`);
  return (
    `<svg class="chart" role="img" aria-label="${escapeHtml(title)}" viewBox="0 0 ${WIDTH} ${height}" ` +
    `width="100%" preserveAspectRatio="xMinYMin meet">${parts.join("")}</svg>`
  );
}

/** One stacked bar: what is kept and what is saved of all bytes before. */
export function savingsBar(before: number, after: number): string {
  const kept = Math.max(0, Math.min(before, after));
  const saved = Math.max(0, before - after);
  const total = Math.max(1, before, after);
  const w = (n: number): number => (n / total) * WIDTH;
  const share = before > 0 ? (before - after) / before : 0;
  return (
    `<svg class="chart savings" role="img" aria-label="savings share ${escapeHtml(formatShare(share))}" viewBox="0 0 ` +
    `${WIDTH} 28" width="100%" preserveAspectRatio="xMinYMin meet">` +
    `<rect class="bar kept" data-bytes="${kept}" x="0" y="2" width="${w(kept).toFixed(1)}" height="24" rx="3"/>` +
    `<rect class="bar saved" data-bytes="${saved}" x="${w(kept).toFixed(1)}" y="2" width="${w(saved).toFixed(1)}" ` +
    `height="24" rx="3"/>` +
    (after > before
      ? `<rect class="bar grew" data-bytes="${after - before}" x="${w(before).toFixed(1)}" y="2" ` +
        `width="${w(after - before).toFixed(1)}" height="24" rx="3"/>`
      : "") +
    `</svg>`
  );
}

function foldRows(rows: readonly BarRow[], maxRows: number): BarRow[] {
  if (rows.length <= maxRows) return [...rows];
  const head = rows.slice(0, maxRows - 1);
  const rest = rows.slice(maxRows - 1);
  return [
    ...head,
    {
      key: `(${rest.length} more)`,
      before: rest.reduce((s, r) => s + r.before, 0),
      after: rest.reduce((s, r) => s + r.after, 0),
    },
  ];
}
