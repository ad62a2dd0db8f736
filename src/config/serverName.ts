/**
 * What a server name may be. Desktop hosts allow any text as an `mcpServers` key ("Brave
 * Search", "my.server", unicode), and `serve` puts the name in a URL path segment, percent-
 * encoded (`/mcp/Brave%20Search`). Refused only what cannot be one path segment.
 */

/** Why `name` cannot be a server name, or undefined when it can. */
export function serverNameProblem(name: string): string | undefined {
  if (name === "") return "a server name cannot be empty (it is the last segment of the server's URL path)";
  if (name.includes("/"))
    return (
      "a server name cannot contain '/' (it is one segment of the server's URL path, and proxies in front may " +
      "decode %2F)"
    );
  if (name === "." || name === "..") return `a server name cannot be "${name}" (URL paths resolve it away)`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(name))
    return "a server name cannot contain control characters (line breaks, " + "tabs…)";
  return undefined;
}

/** The path segment the name is served at: `Brave Search` → `Brave%20Search`. */
export function serverPathSegment(name: string): string {
  return encodeURIComponent(name);
}
