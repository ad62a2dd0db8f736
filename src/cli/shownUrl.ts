/**
 * A refused `--url` as its error quotes it: without what may hold a credential — the user and
 * password before the host, then the query and the fragment — saying so when something was left
 * out. A refused URL is not well formed, so which `@` ends a password is a guess: where in doubt
 * (a password may hold `@`, `#`, `?`, `/`), more is cut — never a credential shown, at worst a
 * host shown short. An `@` in the path of a plain host (`/@acme/weather`) or in a query is none.
 */
export function shownUrl(text: string): string {
  // `https:/`, `https://`; with no slash after it (`token:x@host`) the colon is the credentials'.
  const scheme = /^[a-z][\w+.-]*:\/+/i.exec(text)?.[0] ?? "";
  let rest = text.slice(scheme.length);
  if (holdsCredentials(rest)) {
    // They end at the last `@` before the query that follows the first `@`.
    const first = rest.indexOf("@");
    const query = rest.slice(first).search(/[?#]/);
    const upTo = query === -1 ? rest.length : first + query;
    rest = rest.slice(rest.lastIndexOf("@", upTo - 1) + 1);
  }
  const shown = `${scheme}${rest}`.replace(/[?#][\s\S]*$/, "");
  return shown === text ? JSON.stringify(text) : `${JSON.stringify(shown)} (its credentials and query not shown)`;
}

/** Whether what follows the scheme may hold a user or password (an `@` that is not a path's or a query's). */
function holdsCredentials(rest: string): boolean {
  const first = rest.indexOf("@");
  if (first === -1) return false;
  const beforeAt = rest.slice(0, first);
  // A query or fragment before it, and no `user:`: the `@` is the query's.
  if (/[?#]/.test(beforeAt) && !beforeAt.includes(":")) return false;
  const slash = rest.indexOf("/");
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  // A host (any script), an [IPv6] host, no port: an `@` after it is in the path. With a port,
  // `admin:8472/Xk9@…` may be a password of digits and `/`: cut.
  return !/^[^\s/?#@:[\]]*(\[[^\]]*\])?$/u.test(authority);
}
