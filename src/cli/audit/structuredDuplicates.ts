/**
 * Where a tool result's `structuredContent` carries the bytes of its `content` blocks again: a
 * payload string (`text`, an image's `data`, an embedded resource's `text`/`blob`) that is also a
 * string value inside structuredContent, or a text block that is structuredContent serialized as
 * JSON (what the spec recommends for older clients). Reported, never rewritten:
 * structuredContent must keep validating against the tool's outputSchema.
 */
import { jsonStringBytes } from "../../wire/jsonSize.js";
import { isRawJsonString } from "../../wire/rawJson.js";
import type { StructuredDuplicate } from "../../report/auditDetails.js";

/** How deep structuredContent is walked for strings (a hostile result cannot recurse forever). */
const MAX_DEPTH = 64;

type Finding = Omit<StructuredDuplicate, "target">;

export function structuredDuplicates(result: unknown): Finding[] {
  if (!isObject(result) || !Array.isArray(result.content) || !("structuredContent" in result)) return [];
  const structured = result.structuredContent;
  if (structured === null || structured === undefined) return [];
  const strings = new Set<string>();
  collectStrings(structured, strings, 0);
  const findings: Finding[] = [];
  result.content.forEach((block, i) => {
    if (!isObject(block)) return;
    for (const [path, value] of payloads(block, `content[${i}]`)) {
      if (strings.has(value)) findings.push({ path, kind: "repeated", bytes: jsonStringBytes(value) });
      else if (block.type === "text" && serializes(value, structured))
        findings.push({ path, kind: "serialized", bytes: jsonStringBytes(value) });
    }
  });
  return findings;
}

function payloads(block: Record<string, unknown>, path: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const add = (key: string, owner: Record<string, unknown>, at: string): void => {
    const text = asText(owner[key]);
    if (text !== undefined && text.length > 0) out.push([`${at}.${key}`, text]);
  };
  switch (block.type) {
    case "text":
      add("text", block, path);
      break;
    case "image":
    case "audio":
      add("data", block, path);
      break;
    case "resource":
      if (isObject(block.resource)) {
        add("text", block.resource, `${path}.resource`);
        add("blob", block.resource, `${path}.resource`);
      }
      break;
  }
  return out;
}

function collectStrings(value: unknown, into: Set<string>, depth: number): void {
  if (depth > MAX_DEPTH) return;
  const text = asText(value);
  if (text !== undefined) {
    into.add(text);
    return;
  }
  if (Array.isArray(value)) for (const item of value) collectStrings(item, into, depth + 1);
  else if (isObject(value)) for (const item of Object.values(value)) collectStrings(item, into, depth + 1);
}

/** True when `text` is JSON for the same value as `structured`. */
function serializes(text: string, structured: unknown): boolean {
  const start = text.trimStart()[0];
  if (start !== "{" && start !== "[") return false;
  try {
    return sameJson(JSON.parse(text), structured, 0);
  } catch {
    return false;
  }
}

function sameJson(a: unknown, b: unknown, depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  const bText = asText(b);
  if (typeof a === "string" || bText !== undefined) return a === bText;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i], depth + 1));
  if (isObject(a)) {
    if (!isObject(b) || Array.isArray(b)) return false;
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length && keys.every((key) => key in b && sameJson(a[key], b[key], depth + 1))
    );
  }
  return a === b;
}

function asText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  return isRawJsonString(value) ? value.value() : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
