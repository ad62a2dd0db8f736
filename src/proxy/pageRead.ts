/**
 * A read of a page of a cut tool result (`mcp-normalizer://spill/…`) this proxy made: answered by
 * the proxy from the pages it holds, never by the server. A page URI another proxy made (one
 * this proxy runs in front of) is the server's to answer: it goes upstream like any read.
 */
import { servePage } from "../fit/spill/servePage.js";
import type { SpillStore } from "../fit/spill/spillStore.js";
import { isOwnSpillUri } from "../fit/spill/spillUri.js";
import type { JsonObject } from "../normalize/objects.js";
import { idAsWritten } from "../transports/idAsWritten.js";
import { isObj, type RequestId } from "../transports/jsonrpc.js";

/** The answer to `msg` when it reads a page (from `store`; none there: the error saying why), else null. */
export function pageReadAnswer(
  store: SpillStore | null,
  msg: { id: RequestId; method: string; params?: unknown },
): JsonObject | null {
  if (msg.method !== "resources/read" || !isObj(msg.params) || !isOwnSpillUri(msg.params.uri)) return null;
  return { jsonrpc: "2.0", id: idAsWritten(msg), ...servePage(store, msg.params.uri) };
}
