/** What a stateless host (protocol 2026-07-28: no session) sends with every POST to `/mcp`. */
export const STATELESS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2026-07-28",
});
