/**
 * Media types parsed into essence and parameters (RFC 9110 §8.3.1), so that types are always
 * compared by essence and never by substring. Parsing is total: a string that is
 * not a media type yields `null`, never an exception.
 */

import { RECORDED_TEXT_CHARS } from "./recordedText.js";

export interface MediaType {
  /** `type/subtype`, lowercased. */
  readonly essence: string;
  readonly type: string;
  readonly subtype: string;
  /** The structured-syntax suffix (`json` for `application/ld+json`), lowercased, or "". */
  readonly suffix: string;
  /** Parameters in their original order; names lowercased, values as given (unquoted). */
  readonly params: ReadonlyArray<readonly [name: string, value: string]>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Types parsed before, by their exact string: servers send the same few `mimeType`s over and
 * over, and every entry's type is read more than once. Bounded (cleared when full; long strings
 * are not kept); the values are frozen, as they are shared.
 */
const PARSED = new Map<string, MediaType | null>();
const PARSED_MAX_ENTRIES = 256;
const PARSED_MAX_CHARS = 200;

/**
 * Longer strings are not read as media types (an entry's `mimeType` is then one that cannot be
 * read). Registered names are at most 127 characters a side (RFC 6838 §4.2) and real parameters a
 * few dozen; a server's megabyte of `; a=b` in every entry held the proxy's one thread while each
 * was read. It is the length a record of a change holds whole.
 */
export const MAX_MEDIA_TYPE_CHARS = RECORDED_TEXT_CHARS;

/**
 * A `mimeType` too long to read: the entry that carries it is left as it is, type included (read
 * as no type at all, it would be rewritten and what it said lost, a charset among it).
 */
export function isOverlongMediaType(input: unknown): input is string {
  return typeof input === "string" && input.length > MAX_MEDIA_TYPE_CHARS;
}

/** The reason recorded for an entry left as it is for its type's length. */
export function overlongMediaTypeReason(input: string): string {
  return `mimeType of ${input.length} characters is over ${MAX_MEDIA_TYPE_CHARS}: not read`;
}

export function parseMediaType(input: unknown): MediaType | null {
  if (typeof input !== "string" || input.length > MAX_MEDIA_TYPE_CHARS) return null;
  const known = PARSED.get(input);
  if (known !== undefined) return known;
  const parsed = parseFresh(input);
  if (input.length <= PARSED_MAX_CHARS) {
    if (PARSED.size >= PARSED_MAX_ENTRIES) PARSED.clear();
    if (parsed !== null) {
      Object.freeze(parsed.params);
      Object.freeze(parsed);
    }
    PARSED.set(input, parsed);
  }
  return parsed;
}

function parseFresh(input: string): MediaType | null {
  const semi = input.indexOf(";");
  const head = (semi === -1 ? input : input.slice(0, semi)).trim();
  const slash = head.indexOf("/");
  if (slash <= 0 || slash === head.length - 1) return null;
  const type = head.slice(0, slash).toLowerCase();
  const subtype = head.slice(slash + 1).toLowerCase();
  if (!TOKEN.test(type) || !TOKEN.test(subtype)) return null;
  const plus = subtype.lastIndexOf("+");
  const suffix = plus === -1 ? "" : subtype.slice(plus + 1);
  const params: Array<[string, string]> = [];
  if (semi !== -1) {
    for (const part of splitParams(input.slice(semi + 1))) {
      const eq = part.indexOf("=");
      if (eq <= 0) continue;
      const name = part.slice(0, eq).trim().toLowerCase();
      let value = part.slice(eq + 1).trim();
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
        value = value.slice(1, -1).replace(/\\(.)/g, "$1");
      }
      if (name !== "" && TOKEN.test(name)) params.push([name, value]);
    }
  }
  return { essence: `${type}/${subtype}`, type, subtype, suffix, params };
}

/** Splits a parameter list on `;`, leaving semicolons inside quoted strings alone. */
function splitParams(text: string): string[] {
  // Cut at each `;` outside quotes; the parts are slices (built a character at a time, a long
  // value became a string of millions of one-character pieces).
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A quoted pair: the character after the backslash is taken as it is.
    if (quoted && c === 0x5c) i++;
    else if (c === 0x22) quoted = !quoted;
    else if (c === 0x3b && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

export function getParam(mt: MediaType, name: string): string | undefined {
  const found = mt.params.find(([n]) => n === name);
  return found?.[1];
}

export function withEssence(mt: MediaType, essence: string): MediaType {
  const parsed = parseMediaType(essence);
  if (parsed === null) return mt;
  return { ...parsed, params: mt.params };
}

export function withoutParam(mt: MediaType, name: string): MediaType {
  return { ...mt, params: mt.params.filter(([n]) => n !== name) };
}

export function withParam(mt: MediaType, name: string, value: string): MediaType {
  return { ...mt, params: [...mt.params.filter(([n]) => n !== name), [name, value]] };
}

export function formatMediaType(mt: MediaType): string {
  let out = mt.essence;
  for (const [name, value] of mt.params) {
    out += `; ${name}=${TOKEN.test(value) ? value : `"${value.replace(/(["\\])/g, "\\$1")}"`}`;
  }
  return out;
}
