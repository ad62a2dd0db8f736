/** Number formatting shared by the md and html renderers (the json one keeps raw numbers). */

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"] as const;

/** `1536` → `1.5 KiB`; exact below 1 KiB; keeps the sign (a negative saving is growth). */
export function formatBytes(bytes: number): string {
  const sign = bytes < 0 ? "−" : "";
  let n = Math.abs(bytes);
  let unit = 0;
  while (n >= 1024 && unit < UNITS.length - 1) {
    n /= 1024;
    unit++;
  }
  const digits = unit === 0 ? 0 : n < 10 ? 2 : n < 100 ? 1 : 0;
  return `${sign}${n.toFixed(digits)} ${UNITS[unit]}`;
}

/** `0.3333` → `33.3%`; a negative share (growth) signed as `formatBytes` signs it. */
export function formatShare(share: number): string {
  if (!Number.isFinite(share)) return "–";
  // A real but tiny share must not read as nothing.
  if (share > 0 && share < 0.0005) return "<0.1%";
  const percent = (Math.abs(share) * 100).toFixed(1);
  return share < 0 && percent !== "0.0" ? `−${percent}%` : `${percent}%`;
}

/**
 * A row's share of all bytes saved; "–" when nothing was saved overall (growth outweighed the
 * savings), where a share of the total means nothing — a row that saved is not "0%" of it.
 */
export function formatShareOfSaved(share: number, totalSaved: number): string {
  return totalSaved > 0 ? formatShare(share) : "–";
}

/** `1234567` → `1,234,567` (fixed locale so reports and tests read the same everywhere). */
export function formatCount(n: number): string {
  const sign = n < 0 ? "−" : "";
  return (
    sign +
    Math.abs(Math.round(n))
      .toString()
      .replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  );
}

/** `1 entry`, `1,024 entries`: a count with its noun. */
export function formatCountOf(n: number, singular: string, plural: string): string {
  return `${formatCount(n)} ${n === 1 ? singular : plural}`;
}

/** `" (3 failed)"` after a count of what was asked for; "" when none failed. */
export function failedSuffix(count: number): string {
  return count === 0 ? "" : ` (${formatCount(count)} failed)`;
}

/**
 * What "Top offenders" says when it lists none: nothing saved anywhere, rows with savings that
 * `--top 0` left out, or savings on entries that have no URI row (a tool's blocks, or URIs the
 * bounded table did not keep) — then it says where they are, not that there was nothing to save.
 */
export function noOffendersText(model: {
  readonly byUri: ReadonlyArray<{ saved: number }>;
  readonly totals: { saved: number };
  readonly uriTable: { untrackedEntries: number; entriesWithoutUri: number };
}): string {
  if (model.byUri.some((row) => row.saved > 0)) return "None shown (--top 0).";
  if (model.totals.saved <= 0) return "Nothing to save.";
  const { entriesWithoutUri, untrackedEntries } = model.uriTable;
  const where =
    untrackedEntries === 0
      ? "entries without a URI (a tool's blocks)"
      : entriesWithoutUri === 0
        ? "entries of URIs the table did not keep (--max-uris)"
        : "entries without a URI (a tool's blocks) or of URIs the table did not keep (--max-uris)";
  return `No URI row saved anything: the ${formatBytes(model.totals.saved)} saved were on ${where}.`;
}

/** What the URI table says of entries that have no URI (a tool's blocks): counted, just not listed. */
export function withoutUriLine(entries: number): string {
  const count = formatCountOf(entries, "entry has", "entries have");
  return `${count} no URI (a tool's blocks): in every total, in no row here.`;
}

/** `{unwrap-blob: 3, fix-mime: 1}` → `unwrap-blob 3, fix-mime 1` (most frequent first; `none` left out). */
export function formatActions(actions: Readonly<Record<string, number>>): string {
  const list = Object.entries(actions)
    .filter(([action]) => action !== "none")
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  return list.length === 0 ? "–" : list.map(([action, n]) => `${action} ${n}`).join(", ");
}
