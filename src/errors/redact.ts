/**
 * Secret values taken out of text that goes to a host or a log. A server may quote what it was
 * sent (an echoed `Authorization` header in an error page, a token in an OAuth error): the proxy
 * knows the values it sends, so it removes them wherever it quotes a server.
 */

/** What a removed value is replaced with. */
export const REDACTED = "[redacted]";

/** Values shorter than this are left: too common in ordinary text to be anyone's secret. */
const MIN_SECRET_LENGTH = 4;

/** `text` with every occurrence of each secret replaced by `[redacted]`. */
export function redactSecrets(text: string, secrets: Iterable<string | undefined>): string {
  let out = text;
  // Longest first, so a value that contains another is removed whole.
  const values = [...new Set(secrets)].filter((s): s is string => s !== undefined && s.length >= MIN_SECRET_LENGTH);
  values.sort((a, b) => b.length - a.length);
  for (const secret of values) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * The secret parts of configured header values: each value whole, and the credentials of an
 * `Authorization`-style value (`Bearer abc…` → `abc…`) alone, since a server may echo just those.
 */
export function headerSecrets(headers: Readonly<Record<string, string>> | undefined): string[] {
  if (headers === undefined) return [];
  const secrets: string[] = [];
  for (const value of Object.values(headers)) {
    const trimmed = value.trim();
    secrets.push(trimmed);
    const credentials = /^[A-Za-z][\w.+-]*\s+(\S.*)$/.exec(trimmed)?.[1];
    if (credentials !== undefined) secrets.push(credentials);
  }
  return secrets;
}
