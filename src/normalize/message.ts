/**
 * One standalone JSON value — a result, or a whole JSON-RPC message — normalized without
 * knowing the request it answers: the method is inferred from the result's shape. Used by the
 * `normalize` command and `audit`; the proxy knows the method and calls normalizeResult.
 */
import { isJsonObject, rebuild } from "./objects.js";
import type { Policy } from "./policy.js";
import { normalizeRequestParams, normalizeResult, type NormalizedValue } from "./result.js";

export interface NormalizedMessage extends NormalizedValue {
  /** The method whose result shape was recognized, or null when nothing was recognized. */
  readonly method: string | null;
}

const SHAPES: ReadonlyArray<readonly [key: string, method: string]> = [
  ["contents", "resources/read"],
  ["content", "tools/call"],
  ["messages", "prompts/get"],
  ["resources", "resources/list"],
  ["resourceTemplates", "resources/templates/list"],
];

export function inferResultMethod(result: unknown): string | null {
  if (!isJsonObject(result)) return null;
  for (const [key, method] of SHAPES) {
    if (Array.isArray(result[key])) return method;
  }
  return null;
}

export function normalizeMessage(value: unknown, policy: Policy, method?: string): NormalizedMessage {
  if (isJsonObject(value) && value.jsonrpc === "2.0") {
    if (typeof value.method === "string" && "params" in value) {
      const { value: params, changes } = normalizeRequestParams(value.method, value.params, policy);
      return {
        value: params === value.params ? value : rebuild(value, { params }),
        changes,
        method: changes.length > 0 || params !== value.params ? value.method : null,
      };
    }
    if ("result" in value) {
      const resultMethod = method ?? inferResultMethod(value.result);
      if (resultMethod === null) return { value, changes: [], method: null };
      const { value: result, changes } = normalizeResult(resultMethod, value.result, policy);
      return { value: result === value.result ? value : rebuild(value, { result }), changes, method: resultMethod };
    }
    return { value, changes: [], method: null };
  }
  const resultMethod = method ?? inferResultMethod(value);
  if (resultMethod === null) return { value, changes: [], method: null };
  return { ...normalizeResult(resultMethod, value, policy), method: resultMethod };
}
