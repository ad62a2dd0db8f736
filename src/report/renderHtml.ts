/**
 * The report model as one self-contained HTML file: inline CSS and SVG, no script,
 * and a Content-Security-Policy that forbids every fetch, so it opens the same from disk, from
 * an e-mail or from `GET /report`. Tables carry `data-*` values so what renders can be checked.
 */
import { escapeHtml as esc } from "./escapeHtml.js";
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
import { failedCount, type GroupRow, type ReportModel, type UriRow, unlistedFailures } from "./model.js";
import { auditSectionsHtml, lossyTextHtml, scopeHtml } from "./renderAuditHtml.js";
import { changeCounts } from "./renderMarkdown.js";
import { beforeAfterChart, savingsBar } from "./svgBars.js";

/** Rows of the per-resource table drawn in HTML (the JSON format always has them all). */
export const DEFAULT_HTML_MAX_ROWS = 500;

const CSS = `
:root{--fg:#1d2330;--muted:#5d6575;--line:#e3e6ec;--before:#b9bfca;--after:#2f6fd6;--saved:#1f9d61;--grew:#d0453c;\
--bg:#f6f7f9}
*{box-sizing:border-box}body{margin:0;\
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:0 0 10px}.meta{color:var(--muted);margin:0}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:16px 18px;margin:16px 0}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:12px;background:none;border:0;\
padding:0}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.card .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}\
.card .value{font-size:22px;font-weight:600}
.card .exact{color:var(--muted);font-size:12px}.card.saved .value{color:var(--saved)}\
.card.grew .value{color:var(--grew)}
.charts{display:grid;grid-template-columns:1fr;gap:16px;background:none;border:0;padding:0}.charts section{margin:0}
.legend{color:var(--muted);font-size:12px;margin:0 0 8px}.swatch{display:inline-block;width:10px;height:10px;\
border-radius:2px;margin:0 4px 0 10px;vertical-align:-1px}
.swatch.before{background:var(--before)}.swatch.after{background:var(--after)}.swatch.saved{background:var(--saved)}
svg.chart text{font:12px system-ui,-apple-system,"DejaVu Sans",sans-serif;fill:var(--fg)}\
svg.chart text.value{fill:var(--muted)}
svg.chart text.saved{fill:var(--saved)}svg.chart text.grew{fill:var(--grew)}
.bar.before{fill:var(--before)}.bar.after,.bar.kept{fill:var(--after)}.bar.saved{fill:var(--saved)}\
.bar.grew{fill:var(--grew)}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{padding:6px 8px;border-bottom:1px solid var(--line);\
text-align:left;vertical-align:top}
th{color:var(--muted);font-weight:600;font-size:12px}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;\
white-space:nowrap}
td.uri{font-family:ui-monospace,"DejaVu Sans Mono",monospace;word-break:break-all}td.saved{color:var(--saved);\
font-weight:600}td.grew{color:var(--grew)}
.empty{color:var(--muted)}footer{color:var(--muted);font-size:12px;text-align:center;margin:24px 0}
`;

export function renderHtml(model: ReportModel, options: { maxRows?: number } = {}): string {
  const maxRows = options.maxRows ?? DEFAULT_HTML_MAX_ROWS;
  const t = model.totals;
  const title =
    `${model.kind === "audit" ? "Size audit" : "Size report"}` +
    `${model.source.server === undefined ? "" : `: ${model.source.server}`}`;
  const c = changeCounts(t.actions);
  const cards = [
    card("before", "Bytes before", formatBytes(t.bytesBefore), `${formatCount(t.bytesBefore)} B`),
    card("after", "Bytes after", formatBytes(t.bytesAfter), `${formatCount(t.bytesAfter)} B`),
    card(
      t.saved >= 0 ? "saved" : "grew",
      "Saved",
      formatBytes(t.saved),
      `${formatCount(t.saved)} B · ${formatShare(t.shareSaved)}`,
    ),
    card("entries", "Entries", formatCount(t.entries), `${t.changed} changed · ${t.warned} warned`),
    card(
      "changes",
      "Changes",
      formatCount(c.unwrapped + c.transcoded + c.reencoded + c.mimeFixed),
      `${c.unwrapped} unwrapped · ${c.transcoded} transcoded · ${c.reencoded} re-encoded · ${c.mimeFixed} mime ` +
        `fixed`,
    ),
  ];
  if (model.scope !== undefined)
    cards.push(
      card(
        "resources",
        "Read",
        `${formatCount(model.scope.read)} + ${formatCount(model.scope.called)}`,
        `resources read + tool calls · ${formatCount(failedCount(model))} failed`,
      ),
    );
  else if (model.resources !== undefined)
    cards.push(
      card(
        "resources",
        "Resources",
        formatCount(model.resources.listed),
        `${formatCount(model.resources.failed)} failed to read`,
      ),
    );
  if (model.tokens !== undefined && t.tokensBefore !== undefined && t.tokensAfter !== undefined) {
    cards.push(
      card(
        "tokens",
        `Tokens (${model.tokens.encoding})`,
        `${formatCount(t.tokensBefore)} → ${formatCount(t.tokensAfter)}`,
        `${formatCount(t.tokensBefore - t.tokensAfter)} fewer`,
      ),
    );
  }
  const actions = groupTable("by-action", "action", model.byAction, model.totals.saved);
  const body = [
    `<header><h1>${esc(title)}</h1><p class="meta">${esc(sourceLine(model))}</p>` +
      `<p class="meta">${esc(
        `Time range ${model.timeRange.from ?? "–"} … ${model.timeRange.to ?? "–"} · ` +
          `generated ${model.generatedAt}`,
      )}</p></header>`,
    `<section class="cards" id="summary">${cards.join("")}</section>`,
    t.notApplied > 0
      ? `<p class="meta" id="dry-run">${esc(
          `${formatCountOf(t.notApplied, "change was", "changes were")} logged in dry run (not applied); ` +
            "they are counted as if made.",
        )}</p>`
      : "",
    scopeHtml(model),
    lossyTextHtml(t),
    `<section id="savings"><h2>Savings share: ${esc(formatShare(t.shareSaved))} of ` +
      `${esc(formatBytes(t.bytesBefore))}</h2><p class="legend"><span class="swatch after"></span>kept<span ` +
      `class="swatch saved"></span>saved</p>${savingsBar(t.bytesBefore, t.bytesAfter)}</section>`,
    `<div class="charts">${chartSection("chart-server", "Bytes per server", model.byServer)}` +
      `${chartSection("chart-mime", "Bytes per mime type", model.byMime)}</div>`,
    `<section id="offenders"><h2>Top offenders</h2>${
      model.topOffenders.length === 0
        ? `<p class="empty">${esc(noOffendersText(model))}</p>`
        : uriTable("top-offenders", model.topOffenders, model.topOffenders.length, model.totals.saved)
    }</section>`,
    `<section id="actions"><h2>By action</h2>${actions}</section>`,
  ];
  if (model.kind === "audit") {
    body.push(
      `<section id="resources"><h2>Resources (${model.byUri.length})</h2>${
        model.byUri.length === 0
          ? `<p class="empty">No resources.</p>`
          : uriTable("resource-table", model.byUri, maxRows, model.totals.saved)
      }</section>`,
    );
    body.push(auditSectionsHtml(model, maxRows));
    const moreFailures = unlistedFailures(model);
    body.push(
      `<section id="failures"><h2>Failed reads and tool errors (${formatCount(failedCount(model))})</h2>${
        model.failures.length === 0
          ? `<p class="empty">None.</p>`
          : `<table id="failure-table"><thead><tr><th>uri</th><th>error</th></tr></thead><tbody>${model.failures
              .map((f) => `<tr><td class="uri">${esc(f.uri)}</td><td>${esc(f.error)}</td></tr>`)
              .join("")}</tbody></table>${moreFailures === null ? "" : `<p class="meta">${esc(moreFailures)}</p>`}`
      }</section>`,
    );
  } else {
    const m = model.malformed;
    body.push(
      `<section id="input"><h2>Input</h2><p><span id="malformed-count">${formatCount(m.lines)}</span> malformed ` +
        `lines skipped; ${formatCount(model.ignoredLines)} other JSON lines ignored.</p>${
          m.examples.length === 0
            ? ""
            : `<table id="malformed-table"><thead><tr><th>source</th><th class="num">line</th><th>error</th></tr>` +
              `</thead><tbody>${m.examples
                .map(
                  (e) =>
                    `<tr><td class="uri">${esc(e.source)}</td><td class="num">${e.line}</td>` +
                    `<td>${esc(e.error)}</td></tr>`,
                )
                .join("")}</tbody></table>`
        }</section>`,
    );
  }
  if (model.uriTable.untrackedEntries > 0)
    body.push(
      `<p class="meta">The URI table kept the ${formatCount(model.uriTable.limit)} most significant URIs; ` +
        `${formatCount(model.uriTable.untrackedEntries)} entries of other URIs are not in it ` +
        `(totals are exact; a URI dropped from it and seen again counts from its return: with more URIs ` +
        `than --max-uris, its rows are approximate).</p>`,
    );
  if (model.uriTable.entriesWithoutUri > 0)
    body.push(`<p class="meta">${withoutUriLine(model.uriTable.entriesWithoutUri)}</p>`);
  body.push(`<footer>mcp-normalizer · report schema v${model.schemaVersion}</footer>`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>${CSS}</style></head>
<body><main>
${body.join("\n")}
</main></body></html>
`;
}

function sourceLine(model: ReportModel): string {
  if (model.source.upstream !== undefined) return `Upstream ${model.source.upstream}`;
  if (model.source.files !== undefined) return `Logs: ${model.source.files.join(", ")}`;
  return "Live from this proxy";
}

function card(kind: string, label: string, value: string, exact: string): string {
  return (
    `<div class="card ${kind}" data-metric="${kind}"><div class="label">${esc(label)}</div><div ` +
    `class="value">${esc(value)}</div><div class="exact">${esc(exact)}</div></div>`
  );
}

function chartSection(id: string, title: string, rows: readonly GroupRow[]): string {
  return (
    `<section id="${id}"><h2>${esc(title)}</h2><p class="legend"><span class="swatch before"></span>before<span ` +
    `class="swatch after"></span>after</p>${beforeAfterChart(
      title,
      rows.map((r) => ({ key: r.key, before: r.bytesBefore, after: r.bytesAfter })),
    )}</section>`
  );
}

function num(n: number, cls = ""): string {
  return `<td class="num${cls === "" ? "" : ` ${cls}`}" data-value="${n}">${esc(formatBytes(n))}</td>`;
}

function uriTable(id: string, rows: readonly UriRow[], maxRows: number, totalSaved: number): string {
  const shown = rows.slice(0, maxRows);
  const head =
    `<thead><tr><th>uri</th><th>server</th><th>mime</th><th>changes</th><th class="num">before</th><th ` +
    `class="num">after</th><th class="num">saved</th><th class="num">share</th></tr></thead>`;
  const body = shown
    .map(
      (r) =>
        `<tr data-uri="${esc(r.uri)}"><td class="uri">${esc(r.uri)}</td><td>${esc(r.server)}</td><td>` +
        `${esc(r.mime)}</td><td>${esc(formatActions(r.actions))}</td>` +
        `${num(r.bytesBefore)}${num(r.bytesAfter)}${num(r.saved, r.saved >= 0 ? "saved" : "grew")}<td ` +
        `class="num">${esc(formatShareOfSaved(r.shareOfSaved, totalSaved))}</td></tr>`,
    )
    .join("");
  const more =
    rows.length > shown.length
      ? `<p class="meta">… and ${rows.length - shown.length} more (see --format json).</p>`
      : "";
  return `<table id="${id}">${head}<tbody>${body}</tbody></table>${more}`;
}

function groupTable(id: string, name: string, rows: readonly GroupRow[], totalSaved: number): string {
  if (rows.length === 0) return `<p class="empty">Nothing recorded.</p>`;
  const head =
    `<thead><tr><th>${esc(name)}</th><th class="num">entries</th><th class="num">before</th><th ` +
    `class="num">after</th><th class="num">saved</th><th class="num">share</th></tr></thead>`;
  const body = rows
    .map(
      (r) =>
        `<tr data-key="${esc(r.key)}"><td>${esc(r.key)}</td><td class="num">${formatCount(r.entries)}</td>` +
        `${num(r.bytesBefore)}${num(r.bytesAfter)}${num(r.saved, r.saved >= 0 ? "saved" : "grew")}<td class="num">` +
        `${esc(formatShareOfSaved(r.shareOfSaved, totalSaved))}</td></tr>`,
    )
    .join("");
  return `<table id="${id}">${head}<tbody>${body}</tbody></table>`;
}
