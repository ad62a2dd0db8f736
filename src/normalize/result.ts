/**
 * Where contents appear in MCP messages: the result of
 * a request, by method, or the params of a server→client request. Everything not listed here
 * is returned as the very same object.
 */
import type { ChangeRecord } from "./change.js";
import type { DetectionBudget } from "./charsetDetection.js";
import { normalizeContents } from "./contents.js";
import { normalizeResourceEntry } from "./entry.js";
import { fillListedMime, normalizeMediaBlock, normalizeResourceLink } from "./media.js";
import { isJsonObject, mapChanged, rebuild, type JsonObject } from "./objects.js";
import type { Policy } from "./policy.js";
import { lossyTextBlockRecord } from "./textBlock.js";

export interface NormalizedValue {
  /** The original value itself when nothing changed. */
  readonly value: unknown;
  readonly changes: ChangeRecord[];
}

/** Methods whose results the engine rewrites. */
export const RESULT_METHODS: ReadonlySet<string> = new Set([
  "resources/read",
  "tools/call",
  "prompts/get",
  "resources/list",
  "resources/templates/list",
]);

/** Server→client requests whose params the engine rewrites. */
export const REQUEST_METHODS: ReadonlySet<string> = new Set(["sampling/createMessage"]);

/** The result of a `method` request, normalized. */
export function normalizeResult(method: string, result: unknown, policy: Policy): NormalizedValue {
  if (!isJsonObject(result)) return { value: result, changes: [] };
  switch (method) {
    case "resources/read": {
      const { contents, changes } = normalizeContents(result.contents, policy);
      return { value: contents === result.contents ? result : rebuild(result, { contents }), changes };
    }
    case "tools/call": {
      const budget = policy.detectionBudget();
      return field(result, "content", (list, changes) =>
        mapChanged(list, (block, i) => contentBlock(block, policy, budget, `content[${i}]`, changes)),
      );
    }
    case "prompts/get": {
      const budget = policy.detectionBudget();
      return field(result, "messages", (list, changes) =>
        mapChanged(list, (message, i) => messageContent(message, policy, budget, `messages[${i}]`, changes)),
      );
    }
    case "resources/list":
      return field(result, "resources", (list, changes) =>
        mapChanged(list, (item, i) => listed(item, policy, `resources[${i}]`, changes)),
      );
    case "resources/templates/list":
      return field(result, "resourceTemplates", (list, changes) =>
        mapChanged(list, (item, i) => listed(item, policy, `resourceTemplates[${i}]`, changes)),
      );
    default:
      return { value: result, changes: [] };
  }
}

/** The params of a server→client `method` request, normalized (sampling messages' media blocks). */
export function normalizeRequestParams(method: string, params: unknown, policy: Policy): NormalizedValue {
  if (method !== "sampling/createMessage" || !isJsonObject(params)) return { value: params, changes: [] };
  const budget = policy.detectionBudget();
  return field(params, "messages", (list, changes) =>
    mapChanged(list, (message, i) => messageContent(message, policy, budget, `params.messages[${i}]`, changes)),
  );
}

function field(
  obj: JsonObject,
  key: string,
  map: (list: readonly unknown[], changes: ChangeRecord[]) => readonly unknown[],
): NormalizedValue {
  const list = obj[key];
  if (!Array.isArray(list)) return { value: obj, changes: [] };
  const changes: ChangeRecord[] = [];
  const next = map(list, changes);
  return { value: next === list ? obj : rebuild(obj, { [key]: next }), changes };
}

/** One content block of a tool result or prompt/sampling message. */
function contentBlock(
  block: unknown,
  policy: Policy,
  budget: DetectionBudget,
  path: string,
  changes: ChangeRecord[],
): unknown {
  if (!isJsonObject(block)) return block;
  switch (block.type) {
    case "resource": {
      const result = normalizeResourceEntry(block.resource, policy, `${path}.resource`, budget);
      if (result.record !== null) changes.push(result.record);
      return result.entry === block.resource ? block : rebuild(block, { resource: result.entry });
    }
    case "image":
    case "audio": {
      const result = normalizeMediaBlock(block, policy, path);
      if (result.record !== null) changes.push(result.record);
      return result.block;
    }
    case "text": {
      const record = lossyTextBlockRecord(block, policy, path);
      if (record !== null) changes.push(record);
      return block;
    }
    case "resource_link": {
      const result = normalizeResourceLink(block, policy, path);
      if (result.record !== null) changes.push(result.record);
      return result.block;
    }
    default:
      return block;
  }
}

/** A prompt or sampling message: `content` is one block (or, in newer revisions, a list). */
function messageContent(
  message: unknown,
  policy: Policy,
  budget: DetectionBudget,
  path: string,
  changes: ChangeRecord[],
): unknown {
  if (!isJsonObject(message)) return message;
  const content = message.content;
  const next = Array.isArray(content)
    ? mapChanged(content, (block, i) => contentBlock(block, policy, budget, `${path}.content[${i}]`, changes))
    : contentBlock(content, policy, budget, `${path}.content`, changes);
  return next === content ? message : rebuild(message, { content: next });
}

function listed(item: unknown, policy: Policy, path: string, changes: ChangeRecord[]): unknown {
  if (!isJsonObject(item)) return item;
  const result = fillListedMime(item, policy, path);
  if (result.record !== null) changes.push(result.record);
  return result.block;
}
