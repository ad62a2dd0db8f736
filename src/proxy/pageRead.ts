/**
 * A read of a page of a cut tool result (`mcp-normalizer://spill/…`): the proxy's own URI,
 * answered by the proxy from the pages it holds, never by the server — unless the server linked
 * to it (an mcp-normalizer this proxy runs in front of made it): its read goes upstream.
 */
import { servePage } from "../fit/spill/servePage.js";
import type { SpillStore } from "../fit/spill/spillStore.js";
import { isSpillUri, parseSpillUri } from "../fit/spill/spillUri.js";
import type { UpstreamPages } from "../fit/spill/upstreamPages.js";
import type { JsonObject } from "../normalize/objects.js";
import { idAsWritten } from "../transports/idAsWritten.js";
import { isObj, type RequestId } from "../transports/jsonrpc.js";

/**
 * The answer to `msg` when it reads a page (from `store`; none there: the error saying why), else
 * null — also for a page `store` does not hold that the upstream linked to (`upstreamPages`).
 */
export function pageReadAnswer(
  store: SpillStore | null,
  msg: { id: RequestId; method: string; params?: unknown },
  upstreamPages?: UpstreamPages,
): JsonObject | null {
  if (msg.method !== "resources/read" || !isObj(msg.params) || !isSpillUri(msg.params.uri)) return null;
  const id = upstreamPages === undefined ? undefined : parseSpillUri(msg.params.uri)?.id;
  if (id !== undefined && upstreamPages?.has(id) === true && store?.knows(id) !== true) return null;
  return { jsonrpc: "2.0", id: idAsWritten(msg), ...servePage(store, msg.params.uri) };
}
