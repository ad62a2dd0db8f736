/**
 * Pages an upstream's results linked to that this proxy did not make: an mcp-normalizer this one
 * runs in front of cut those results, and reads of its pages go to it. Kept per session (or per
 * stateless client's pool, any of whose upstreams may serve the next read), the last
 * `UPSTREAM_PAGES_KEPT`. A link to a page this proxy holds is not taken from an upstream: the
 * proxy's own pages are read from it, whoever links to them.
 */
import type { SpillStore } from "./spillStore.js";
import { isSpillUri, parseSpillUri } from "./spillUri.js";

/** Page ids remembered (the oldest forgotten first). */
const UPSTREAM_PAGES_KEPT = 256;

export class UpstreamPages {
  private readonly ids = new Set<string>();

  /** Notes the pages `result`'s content links to (`resource_link` blocks) that `own` does not hold. */
  noteLinksIn(result: unknown, own: SpillStore | null): void {
    const content =
      typeof result === "object" && result !== null ? (result as { content?: unknown }).content : undefined;
    if (!Array.isArray(content)) return;
    for (const block of content as unknown[]) {
      if (typeof block !== "object" || block === null) continue;
      const { type, uri } = block as { type?: unknown; uri?: unknown };
      if (type !== "resource_link" || !isSpillUri(uri)) continue;
      const id = parseSpillUri(uri)?.id;
      if (id === undefined || own?.knows(id) === true) continue;
      this.ids.delete(id);
      this.ids.add(id);
      if (this.ids.size > UPSTREAM_PAGES_KEPT) this.ids.delete(this.ids.values().next().value as string);
    }
  }

  /** Whether the page `id` is one an upstream linked to. */
  has(id: string): boolean {
    return this.ids.has(id);
  }
}
