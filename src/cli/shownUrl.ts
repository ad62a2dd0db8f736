/**
 * A refused `--url` as its error quotes it: without what may hold a credential — the user and
 * password before the host (a password may hold `#`, `?`, even `/`), then the query and the
 * fragment — saying so when something was left out. The host stays the one typed.
 */
export function shownUrl(text: string): string {
  // `https:/`, `https://`; with no slash after it (`token:x@host`) the colon is the credentials'.
  const scheme = /^[a-z][\w+.-]*:\/+/i.exec(text)?.[0] ?? "";
  let rest = text.slice(scheme.length);
  // The user and password end at the last `@` before the path; with none there, at an `@` before
  // the query (a password holding `/`).
  const slash = rest.indexOf("/");
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const inAuthority = authority.lastIndexOf("@");
  if (inAuthority !== -1) rest = rest.slice(inAuthority + 1);
  else {
    const beforeQuery = rest.split(/[?#]/, 1)[0]!;
    const at = beforeQuery.lastIndexOf("@");
    if (at !== -1) rest = rest.slice(at + 1);
  }
  const shown = `${scheme}${rest}`.replace(/[?#][\s\S]*$/, "");
  return shown === text ? JSON.stringify(text) : `${JSON.stringify(shown)} (its credentials and query not shown)`;
}
