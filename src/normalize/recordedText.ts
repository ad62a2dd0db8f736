/**
 * Strings an upstream chooses (URIs, mimeTypes) as the records of what changed hold them: whole
 * when short, else their first `RECORDED_TEXT_CHARS` characters, their length and a hash of the
 * whole (so two long URIs that share a start stay two rows). The log, the live report and the
 * metrics keep these records; a server sending endless megabyte-long URIs must not grow them
 * by megabytes each.
 */

/** Longest upstream string a record holds whole. */
export const RECORDED_TEXT_CHARS = 1024;

/** `text` as a record holds it. */
export function recordedText(text: string): string;
export function recordedText(text: string | null): string | null;
export function recordedText(text: string | null): string | null {
  if (text === null || text.length <= RECORDED_TEXT_CHARS) return text;
  return `${copied(text.slice(0, RECORDED_TEXT_CHARS))}…[${text.length} chars, fnv1a ${fnv1a(text)}]`;
}

/**
 * `head` in memory of its own: V8 keeps a slice of a long string as a view of the whole, so a
 * record holding the first 1024 characters of a megabyte-long URI would hold the megabyte.
 */
function copied(head: string): string {
  return Buffer.from(head, "utf16le").toString("utf16le");
}

/** FNV-1a over the UTF-16 code units, 32 bits, as 8 hex digits: a tag, not a secret. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}
