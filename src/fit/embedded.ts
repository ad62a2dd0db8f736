/**
 * `embeddedResources: "inline"`: an embedded resource in a tool result or prompt message becomes
 * the block hosts do show — a text resource a `text` block with its text, an `image/*` blob an
 * `image` block with its data. The block's own `annotations` and `_meta` stay; the resource's
 * URI and other fields go (hosts that inline resources show only the content). Other blobs stay
 * embedded resources.
 */
import type { ChangeRecord } from "../normalize/change.js";
import { isJsonObject, type JsonObject } from "../normalize/objects.js";
import { isRawJsonString } from "../wire/rawJson.js";
import { fitRecord } from "./records.js";

const KEPT_BLOCK_KEYS = ["annotations", "_meta"] as const;

/** The inline form of an embedded-resource block, or null when it stays as it is. */
export function inlineResource(
  block: JsonObject,
  path: string,
  dryRun: boolean,
  changes: ChangeRecord[],
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
  for (const key of KEPT_BLOCK_KEYS) if (block[key] !== undefined) next[key] = block[key];
  const uri = typeof resource.uri === "string" ? resource.uri : null;
  changes.push(
    fitRecord({
      action: "inline-resource",
      path,
      uri,
      before: block,
      after: next,
      mimeBefore: resource.mimeType,
      reason: `embedded resource → ${what} block`,
      applied: !dryRun,
    }),
  );
  return next;
}
