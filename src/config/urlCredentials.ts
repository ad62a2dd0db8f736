/**
 * An upstream URL with a user name or password in it (`https://user:secret@host/mcp`). `fetch`
 * refuses such a URL on every request — the server would be configured but never reached — and
 * the URL would carry a secret into every place a URL is shown. Refused when the config or the
 * flags are read, without quoting it: credentials go in a header or in `auth`.
 */
export function hasUrlCredentials(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(url);
}

export const URL_CREDENTIALS =
  "has a user name or password in it, which is never sent (the URL is not shown): give it as a header " +
  '("Authorization: Basic …" or a token) or use "auth"';
