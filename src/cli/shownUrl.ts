/**
 * A refused `--url` as its error quotes it: without what may hold a credential — everything up to
 * the last `@` after what reads as a scheme (a password may hold `#` or `?`), then the query and
 * the fragment — saying so when something was left out.
 */
export function shownUrl(text: string): string {
  const at = text.lastIndexOf("@");
  // `https:/`, `https://`; with no slash after it (`token:x@host`) the colon is the credentials'.
  const scheme = /^[a-z][\w+.-]*:\/+/i.exec(text)?.[0] ?? "";
  const shown = (at === -1 ? text : `${scheme}${text.slice(at + 1)}`).replace(/[?#][\s\S]*$/, "");
  return shown === text ? JSON.stringify(text) : `${JSON.stringify(shown)} (its credentials and query not shown)`;
}
