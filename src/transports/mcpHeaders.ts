/**
 * The one rule for which of a host's HTTP headers an upstream gets: the `mcp-*` ones
 * (`mcp-protocol-version`, `mcp-method`, `mcp-name`, …, including names MCP adds later),
 * lowercased and verbatim, except `mcp-session-id`, which names the host↔proxy session and not
 * the proxy↔upstream one. Every other host header stays here: `authorization` and cookies are the
 * host's credentials for the proxy, never the upstream's.
 */

/** Whether a header (its lowercased name) goes on to the upstream. */
export function isForwardedMcpHeader(lowerName: string): boolean {
  return lowerName.startsWith("mcp-") && lowerName !== "mcp-session-id";
}

/** The headers an upstream gets, names lowercased, list values joined; undefined when there are none. */
export function forwardableMcpHeaders(
  headers: Readonly<Record<string, string | readonly string[] | undefined>>,
): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (!isForwardedMcpHeader(lower)) continue;
    out ??= {};
    out[lower] = typeof value === "string" ? value : value.join(", ");
  }
  return out;
}
