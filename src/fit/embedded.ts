/**
 * `embeddedResources: "inline"`: an embedded resource in a tool result or prompt message becomes
 * the block hosts do show — a text resource a `text` block with its text, an `image/*` blob an
 * `image` block with its data. The block's own other fields stay (annotations, _meta, unknown
 * ones), and the resource's _meta where the block has none; the resource's URI and other fields
 * go (the new block has no place for them). Other blobs stay embedded resources.
 */
import type { ChangeRecord } from "../normalize/change.js";
import { isJsonObject, type JsonObject } from "../normalize/objects.js";
import { isRawJsonString } from "../wire/rawJson.js";
import { fitRecord } from "./records.js";

/** The block's own keys that do not carry over: what the inline block replaces. */
const REPLACED_BLOCK_KEYS = new Set(["type", "resource"]);

/**
 * The inline form of an embedded-resource block, or null when it stays as it is. `before`: what
 * the record measures the block at, when the caller handed in a form of it made on the way (an
 * SVG's text as a blob).
 */
export function inlineResource(
  block: JsonObject,
  path: string,
  dryRun: boolean,
  changes: ChangeRecord[],
  before: JsonObject = block,
): JsonObject | null {
  const resource = block.resource;
  if (!isJsonObject(resource)) return null;
  const isString = (value: unknown): boolean => typeof value === "string" || isRawJsonString(value);
  let next: JsonObject;
  let what: string;
  if (isString(resource.text) && !isString(resource.blob)) {
    next = { type: "text", text: resource.text };
    what = "text";
  } else if (
    isString(resource.blob) &&
    !isString(resource.text) &&
    typeof resource.mimeType === "string" &&
    /^\s*image\//i.test(resource.mimeType)
  ) {
    next = { type: "image", data: resource.blob, mimeType: resource.mimeType };
    what = "image";
  } else {
    return null;
  }
  // Everything else on the block stays on it (annotations, _meta, fields the proxy does not
  // know), unless the new block has a field of that name; a member named __proto__ stays a member.
  for (const [key, value] of Object.entries(block))
    if (!REPLACED_BLOCK_KEYS.has(key) && !Object.hasOwn(next, key))
      Object.defineProperty(next, key, { value, enumerable: true, writable: true, configurable: true });
  // The resource's own _meta, where the block has none to keep.
  if (!Object.hasOwn(next, "_meta") && resource._meta !== undefined) next._meta = resource._meta;
  const uri = typeof resource.uri === "string" ? resource.uri : null;
  changes.push(
    fitRecord({
      action: "inline-resource",
      path,
      uri,
      before,
      after: next,
      mimeBefore: resource.mimeType,
      reason: `embedded resource → ${what} block`,
      applied: !dryRun,
    }),
  );
  return next;
}
