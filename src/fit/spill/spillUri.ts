/**
 * URIs of the pages of a cut tool result. The proxy answers `resources/read` of these itself;
 * the id is random (128 bits), so one session cannot guess another's. Each id starts with a mark
 * of the process that made it: a page URI without this process's mark was made by another
 * proxy — an mcp-normalizer in front of which this one runs — and its read goes upstream.
 */
import { randomBytes } from "node:crypto";

export const SPILL_PREFIX = "mcp-normalizer://spill/";

/** This process's mark, the start of every page id it makes. */
const OWN_MARK = randomBytes(6).toString("base64url");

export function newSpillId(): string {
  return OWN_MARK + randomBytes(16).toString("base64url");
}

/** A page URI this process made (whether or not its pages are still held). */
export function isOwnSpillUri(uri: unknown): uri is string {
  return typeof uri === "string" && uri.startsWith(SPILL_PREFIX + OWN_MARK);
}

export function spillUri(id: string, page: number): string {
  return `${SPILL_PREFIX}${id}/${page}`;
}

/** The id and page (1-based) a spill URI names; null when it is not one of ours in shape. */
export function parseSpillUri(uri: string): { id: string; page: number } | null {
  const match = /^([A-Za-z0-9_-]{1,64})\/([1-9][0-9]{0,8})$/.exec(uri.slice(SPILL_PREFIX.length));
  return match === null ? null : { id: match[1]!, page: Number(match[2]) };
}
