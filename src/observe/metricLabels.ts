/**
 * Label values for /metrics with bounded cardinality: a label set that grows with what
 * upstreams send would grow Prometheus without bound. Mime essences outside a fixed list fold
 * into `other`; so do methods and actions this version does not know.
 */
import { CHANGE_ACTIONS } from "../normalize/change.js";
import { parseMediaType } from "../normalize/mediaType.js";
import { RECORDED_TEXT_CHARS } from "../normalize/recordedText.js";
import { REQUEST_METHODS, RESULT_METHODS } from "../normalize/result.js";

/** The essences that get their own label value: what MCP servers commonly send. */
export const METRIC_MIME_TYPES: ReadonlySet<string> = new Set([
  "text/plain",
  "text/markdown",
  "text/html",
  "text/css",
  "text/csv",
  "text/xml",
  "text/javascript",
  "text/x-python",
  "text/x-typescript",
  "application/json",
  "application/xml",
  "application/yaml",
  "application/toml",
  "application/sql",
  "application/javascript",
  "application/pdf",
  "application/zip",
  "application/gzip",
  "application/octet-stream",
  "application/wasm",
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/svg+xml",
  "image/bmp",
  "image/tiff",
  "image/x-icon",
  "audio/mpeg",
  "audio/wav",
  "audio/ogg",
  "audio/flac",
  "video/mp4",
  "video/webm",
]);

const ACTIONS: ReadonlySet<string> = new Set<string>(CHANGE_ACTIONS);

/**
 * Distinct media type strings whose label is remembered (a server sends a handful; the cap bounds one that sends many).
 */
const MIME_LABEL_CACHE_ENTRIES = 256;
const mimeLabels = new Map<string, string>();

/** The mime label of an entry: the type it went out with (else came with); `none` when missing. */
export function mimeLabel(mimeAfter: string | null, mimeBefore: string | null): string {
  const raw = mimeAfter ?? mimeBefore;
  if (raw === null) return "none";
  // A long one is not kept as a key: 256 of a server's megabyte-long types would hold 256 MB.
  if (raw.length > RECORDED_TEXT_CHARS) return labelOf(raw);
  // Parsed once per distinct string, not once per entry (every entry is counted).
  let label = mimeLabels.get(raw);
  if (label === undefined) {
    label = labelOf(raw);
    if (mimeLabels.size >= MIME_LABEL_CACHE_ENTRIES) mimeLabels.clear();
    mimeLabels.set(raw, label);
  }
  return label;
}

function labelOf(mimeType: string): string {
  const essence = parseMediaType(mimeType)?.essence;
  return essence !== undefined && METRIC_MIME_TYPES.has(essence) ? essence : "other";
}

export function methodLabel(method: string): string {
  return RESULT_METHODS.has(method) || REQUEST_METHODS.has(method) || method === "tasks/result" ? method : "other";
}

export function actionLabel(action: string): string {
  return ACTIONS.has(action) ? action : "other";
}
