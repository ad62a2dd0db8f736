/**
 * What an audit reports besides sums (all part of the `--format json` model, schemaVersion 1):
 * what it looked at and why (the server's capabilities, notes), every entry it read with its
 * before/after, entries it skipped as too large (outside the totals), and where a tool's
 * `structuredContent` carries the same bytes as its `content` blocks (a finding: the proxy never
 * rewrites structuredContent, which must keep validating against the tool's outputSchema).
 */

/** One entry the engine saw: a resource entry, an image/audio block, a flagged text block. */
export interface AuditItem {
  /** What was read: the resource URI, or `tools/call NAME`. */
  target: string;
  method: string;
  /** Where the entry sits in the result (`contents[0]`, `content[1].resource`). */
  path: string;
  uri: string | null;
  /** `changed` (a rewrite), `unchanged` (already right), `warned` (left alone, with a warning). */
  status: "changed" | "unchanged" | "warned";
  action: string;
  mimeBefore: string | null;
  mimeAfter: string | null;
  bytesBefore: number;
  bytesAfter: number;
  saved: number;
  reason: string;
  /** The charset the engine detected for bytes that declared none. */
  detected?: { charset: string; confidence: number };
}

/** An entry over `--max-bytes` (or a listed resource whose declared size is): not in the totals. */
export interface SkippedEntry {
  target: string;
  /** Null when skipped from the listing, before any read. */
  path: string | null;
  bytes: number;
  reason: string;
}

/** Bytes of a tool result's `content` that its `structuredContent` carries again. */
export interface StructuredDuplicate {
  target: string;
  /** The content block's payload (`content[0].resource.blob`, `content[0].text`). */
  path: string;
  /**
   * `repeated`: the same string is a value inside structuredContent; `serialized`: the text is structuredContent as
   * JSON.
   */
  kind: "repeated" | "serialized";
  /** UTF-8 bytes of the payload's JSON string. */
  bytes: number;
}

export interface AuditScope {
  /** The capabilities the server declared in its initialize result. */
  capabilities: { resources: boolean; tools: boolean; prompts: boolean };
  /** Resources listed by resources/list (0 when not called), and how many `--uri` filtered out. */
  listed: number;
  filteredOut: number;
  /** Resources read (listed and kept, plus `--read`), and tool calls made (`--call`). */
  read: number;
  called: number;
  /** How many of those failed (every one counted: `failures` lists at most 1,000). */
  readFailed: number;
  callFailed: number;
  /** Why something was or was not done (no resources capability, templates to read, …). */
  notes: string[];
}

export function itemStatus(action: string, warning: boolean): AuditItem["status"] {
  if (action === "none") return "unchanged";
  return warning ? "warned" : "changed";
}
