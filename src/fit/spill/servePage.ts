/**
 * The answer to `resources/read` of a page URI, made by the proxy (never forwarded): the page's
 * text (one entry per block whose text it holds part of, named `#block-N`), then — when another page follows — a
 * `text/uri-list` entry naming it. A URI this session does not hold (another session's, expired,
 * or never made) gets error -32002 (resource not found) saying which, and why pages go away.
 */
import { describeDuration } from "../../errors/describeDuration.js";
import { JSONRPC } from "../../errors/jsonRpcCodes.js";
import type { SpillStore } from "./spillStore.js";

export type PageAnswer =
  | { readonly result: Record<string, unknown> }
  | { readonly error: { code: number; message: string; data: { uri: string } } };

export function servePage(store: SpillStore | null, uri: string): PageAnswer {
  const read = store?.read(uri) ?? { ok: false as const, why: "unknown" as const };
  if (!read.ok) {
    const ttl = store === null ? "" : `${describeDuration(store.budget.ttlMs)} (limits.spillTtlMs)`;
    // Whose pages they are: a session's, or (stateless requests) the client's.
    const [here, only] =
      store?.holder === "client" ? ["for this client", "by the client"] : ["in this session", "in the session"];
    // A client's pages also go with its pool's last upstream (idle for sessionIdleMs).
    const orPool =
      store?.holder === "client" ? ", or its pooled upstreams all end (idle for limits.sessionIdleMs)" : "";
    const message =
      read.why === "expired"
        ? `${uri}: this page of a cut tool result has expired (pages are kept for ${ttl}); call the tool again`
        : `${uri}: no such page ${here} (pages of a cut tool result can be read only ${only} that received the ` +
          `result, until they expire${ttl === "" ? "" : ` after ${ttl}`}${orPool}); ` +
          "call the tool again if it was yours";
    return { error: { code: JSONRPC.RESOURCE_NOT_FOUND, message, data: { uri } } };
  }
  // Blocks held together: each entry names its block (`#block-N`), so where one ends is known.
  const contents: Record<string, unknown>[] = read.entries.map(({ text, block }) => ({
    uri: block === undefined ? uri : `${uri}#block-${block}`,
    mimeType: "text/plain",
    text,
  }));
  if (read.next !== null) contents.push({ uri: `${uri}#next`, mimeType: "text/uri-list", text: `${read.next}\r\n` });
  return { result: { contents } };
}
