/**
 * Text and attribute values into HTML: URIs and mime types come from upstream servers. Control
 * characters become visible symbols first: an HTML report printed to a terminal must not carry
 * a server's escape sequences to it.
 */
import { visible } from "../errors/visible.js";

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return visible(text).replace(/[&<>"']/g, (ch) => ENTITIES[ch] as string);
}
