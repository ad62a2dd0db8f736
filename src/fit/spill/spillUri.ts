/**
 * URIs of the pages of a cut tool result. The proxy answers `resources/read` of these itself
 * (but of those another mcp-normalizer upstream made: upstreamPages.ts); the id is random (128
 * bits), so one session cannot guess another's.
 */
import { randomBytes } from "node:crypto";

export const SPILL_PREFIX = "mcp-normalizer://spill/";

export function newSpillId(): string {
  return randomBytes(16).toString("base64url");
}

/**
 * The id a dry run's link shows (nothing is held): as long as a real one, so the link measured
 * in its record is as long as the one that would go out.
 */
export const DRY_RUN_SPILL_ID = "dry-run".padEnd(newSpillId().length, "-");

export function spillUri(id: string, page: number): string {
  return `${SPILL_PREFIX}${id}/${page}`;
}

/** In any letter case: the prefix is a scheme and a host, which URIs compare case-blind (RFC 3986 §6.2.2.1). */
export function isSpillUri(uri: unknown): uri is string {
  return typeof uri === "string" && uri.slice(0, SPILL_PREFIX.length).toLowerCase() === SPILL_PREFIX;
}

/** The id and page (1-based) a spill URI names; null when it is not one of ours in shape. */
export function parseSpillUri(uri: string): { id: string; page: number } | null {
  const match = /^([A-Za-z0-9_-]{1,64})\/([1-9][0-9]{0,8})$/.exec(uri.slice(SPILL_PREFIX.length));
  return match === null ? null : { id: match[1]!, page: Number(match[2]) };
}
