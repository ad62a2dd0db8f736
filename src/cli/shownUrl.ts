/**
 * A refused `--url` as its error quotes it: without what may hold a credential — the user and
 * password before the host (a password may hold `@`, `#`, `?`, even `/`), then the query and the
 * fragment — saying so when something was left out. The host stays the one typed: an `@` in a
 * path (`/@acme/weather`) or a query is no credential.
 */
export function shownUrl(text: string): string {
  // `https:/`, `https://`; with no slash after it (`token:x@host`) the colon is the credentials'.
  const scheme = /^[a-z][\w+.-]*:\/+/i.exec(text)?.[0] ?? "";
  let rest = text.slice(scheme.length);
  const slash = rest.indexOf("/");
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  // A host, an [IPv6] host, a port: nothing else before the path. Anything else holds credentials,
  // which end at the last `@` before the query that follows the first `@`.
  if (!/^[\w.-]*(\[[^\]]*\])?(:\d*)?$/.test(authority)) {
    const first = rest.indexOf("@");
    if (first !== -1) {
      const query = rest.slice(first).search(/[?#]/);
      const upTo = query === -1 ? rest.length : first + query;
      rest = rest.slice(rest.lastIndexOf("@", upTo - 1) + 1);
    }
  }
  const shown = `${scheme}${rest}`.replace(/[?#][\s\S]*$/, "");
  return shown === text ? JSON.stringify(text) : `${JSON.stringify(shown)} (its credentials and query not shown)`;
}
