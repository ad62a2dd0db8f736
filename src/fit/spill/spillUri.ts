/**
 * URIs of the pages of a cut tool result. The proxy answers `resources/read` of these itself —
 * but for those its upstream linked to (another mcp-normalizer's, in front of which this one
 * runs); the id is random (128 bits), so one session cannot guess another's.
 */
import { randomBytes } from "node:crypto";

export const SPILL_PREFIX = "mcp-normalizer://spill/";

export function newSpillId(): string {
  return randomBytes(16).toString("base64url");
}

export function spillUri(id: string, page: number): string {
  return `${SPILL_PREFIX}${id}/${page}`;
}

export function isSpillUri(uri: unknown): uri is string {
  return typeof uri === "string" && uri.startsWith(SPILL_PREFIX);
}

/** The id and page (1-based) a spill URI names; null when it is not one of ours in shape. */
export function parseSpillUri(uri: string): { id: string; page: number } | null {
  const match = /^([A-Za-z0-9_-]{1,64})\/([1-9][0-9]{0,8})$/.exec(uri.slice(SPILL_PREFIX.length));
  return match === null ? null : { id: match[1]!, page: Number(match[2]) };
}

/** The ids of the page URIs `result`'s content links to (`resource_link` blocks). */
export function pageIdsLinkedIn(result: unknown): string[] {
  const content = typeof result === "object" && result !== null ? (result as { content?: unknown }).content : undefined;
  if (!Array.isArray(content)) return [];
  const ids: string[] = [];
  for (const block of content as unknown[]) {
    if (typeof block !== "object" || block === null) continue;
    const { type, uri } = block as { type?: unknown; uri?: unknown };
    if (type !== "resource_link" || !isSpillUri(uri)) continue;
    const parsed = parseSpillUri(uri);
    if (parsed !== null) ids.push(parsed.id);
  }
  return ids;
}
