/**
 * Secret values taken out of text that goes to a host or a log. A server may quote what it was
 * sent (an echoed `Authorization` header in an error page, a token in an OAuth error): the proxy
 * knows the values it sends, so it removes them wherever it quotes a server.
 */

/** Query values shorter than this are not taken for credentials. */
const MIN_QUERY_SECRET_LENGTH = 8;

/** What a removed value is replaced with. */
export const REDACTED = "[redacted]";

/** Values shorter than this are left: too common in ordinary text to be anyone's secret. */
const MIN_SECRET_LENGTH = 4;

/** A way a secret can stand in quoted text, and whether it is found in any case. */
interface SecretForm {
  readonly text: string;
  /** Its letters in any case: a server may quote a header lower-cased (base64's case is its value). */
  readonly anyCase: boolean;
  /** `text` upper-cased, for the search that comes before the case-blind one. */
  readonly upper: string;
  /** Its start (in any case, for a form found so) is also its end: two copies can share letters. */
  readonly selfOverlaps: boolean;
}

/** Whether a proper start of `text` is also its end (the prefix function's last value, in one pass). */
function overlapsItself(text: string): boolean {
  const longest = new Int32Array(text.length);
  for (let i = 1, k = 0; i < text.length; i++) {
    while (k > 0 && text[i] !== text[k]) k = longest[k - 1]!;
    if (text[i] === text[k]) k++;
    longest[i] = k;
  }
  return text.length > 0 && longest[text.length - 1]! > 0;
}

function formOf(text: string, anyCase: boolean): SecretForm {
  const upper = anyCase ? text.toUpperCase() : text;
  return { text, anyCase, upper, selfOverlaps: overlapsItself(upper) };
}

/**
 * The ways a secret can stand in quoted text: as it is, and as a JSON string literal's body
 * writes it (`"` and `\` escaped, `/` as `\/` as PHP writes it, non-ASCII as `\uXXXX`),
 * percent-encoded — each in any case — and in base64 (plain and URL-safe, padded or not: a server
 * may echo a header as it was encoded, or encode what it was sent).
 */
function secretForms(secrets: Iterable<string | undefined>): SecretForm[] {
  const anyCase = new Set<string>();
  const exact = new Set<string>();
  for (const secret of secrets) {
    if (secret === undefined || secret.length < MIN_SECRET_LENGTH) continue;
    const json = JSON.stringify(secret).slice(1, -1);
    const ascii = json.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    for (const form of [secret, json, json.replaceAll("/", "\\/"), ascii, ascii.replaceAll("/", "\\/")])
      anyCase.add(form);
    // As a URL or a form body would carry it (a form writes a space as `+` and leaves `*` alone).
    anyCase.add(encodeURIComponent(secret));
    anyCase.add(new URLSearchParams({ s: secret }).toString().slice(2));
    const base64 = Buffer.from(secret, "utf8").toString("base64");
    exact.add(base64);
    exact.add(base64.replace(/=+$/, ""));
    exact.add(Buffer.from(secret, "utf8").toString("base64url"));
    for (const form of base64Inside(secret)) exact.add(form);
  }
  const forms = [
    ...[...anyCase].map((text) => formOf(text, true)),
    ...[...exact].filter((text) => !anyCase.has(text)).map((text) => formOf(text, false)),
  ];
  // Longest first, so a value that contains another is removed whole.
  return forms.sort((a, b) => b.text.length - a.text.length);
}

/** The shortest stretch of base64 taken for a secret's: shorter ones are too likely by chance. */
const MIN_BASE64_STRETCH = 12;

/**
 * What a secret always looks like inside a longer base64 text (an encoded JSON body that holds
 * it): at each of the three byte offsets it can start at, the characters that depend on its
 * bytes alone — its first and last groups, shared with its neighbours, left out.
 */
function base64Inside(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const stretches: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    // The first group holds the filler (offset > 0); the last may hold what follows the secret.
    const start = offset === 0 ? 0 : 4;
    const end = Math.floor((offset + bytes.length) / 3) * 4;
    const middle = encoded.slice(start, end);
    if (middle.length >= MIN_BASE64_STRETCH) stretches.push(middle, middle.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return stretches;
}

/**
 * `text` with every stretch any form covers replaced by `[redacted]`. With more than one form in
 * it, the stretches are found in the text as it came and joined where they overlap, so two
 * secrets that overlap (one quoted in another case) are removed together, whatever the order of
 * the forms. A text may be a server's error of hundreds of megabytes: each form is searched
 * natively, its places kept as numbers.
 */
function replaceForms(text: string, forms: readonly SecretForm[]): string {
  let upper: string | undefined;
  const found: SecretForm[] = [];
  for (const form of forms) {
    if (!form.anyCase) {
      if (text.includes(form.text)) found.push(form);
      continue;
    }
    // Upper-cased, the text holds the form's upper case wherever the case-blind pattern would
    // match it (that pattern compares characters by their upper case): a native search first.
    upper ??= text.toUpperCase();
    if (upper.includes(form.upper)) found.push(form);
  }
  if (found.length === 0) return text;
  // One exact form whose copies cannot share letters: natively, in one pass.
  const [only] = found as [SecretForm];
  if (found.length === 1 && !only.anyCase && !only.selfOverlaps) return text.split(only.text).join(REDACTED);
  // Where upper-casing kept every character one character long, a place in the upper-cased text
  // is the same place in the text: searched there natively, letters compared by their upper case
  // (ſ as S, ı as I). Elsewhere (a text holding ß, a ligature…) by the case-blind pattern, which
  // compares them so too, but for those few whose upper case is ASCII or beyond 16 bits.
  const aligned = upper !== undefined && upper.length === text.length ? upper : undefined;
  const lists = found.map((form) => placesOf(text, aligned, form));
  upper = undefined;
  // Joined a few thousand pieces at a time: millions of short pieces held at once cost far more
  // than the text.
  const chunks: string[] = [];
  let pieces: string[] = [];
  const flush = (): void => {
    chunks.push(pieces.join(""));
    pieces = [];
  };
  const next = new Int32Array(lists.length);
  let kept = 0;
  let start = -1;
  let end = -1;
  for (;;) {
    // The list whose next place comes first (the forms found are few).
    let first = -1;
    for (let i = 0; i < lists.length; i++)
      if (next[i]! < lists[i]!.count && (first === -1 || lists[i]!.at[next[i]!]! < lists[first]!.at[next[first]!]!))
        first = i;
    if (first === -1) break;
    const from = lists[first]!.at[next[first]!++]!;
    const to = from + lists[first]!.length;
    if (from < end) {
      end = Math.max(end, to);
      continue;
    }
    if (end !== -1) pieces.push(text.slice(kept, start), REDACTED);
    if (pieces.length >= 8192) flush();
    kept = end === -1 ? 0 : end;
    start = from;
    end = to;
  }
  pieces.push(text.slice(kept, start), REDACTED, text.slice(end));
  flush();
  return chunks.join("");
}

/** Where a form stands in a text, in order (copies that share letters each): each `length` long. */
interface Places {
  at: Int32Array;
  count: number;
  readonly length: number;
}

function placesOf(text: string, aligned: string | undefined, form: SecretForm): Places {
  const places: Places = { at: new Int32Array(16), count: 0, length: form.text.length };
  const add = (at: number): void => {
    if (places.count === places.at.length) {
      const grown = new Int32Array(places.at.length * 2);
      grown.set(places.at);
      places.at = grown;
    }
    places.at[places.count++] = at;
  };
  const [within, sought] = !form.anyCase
    ? [text, form.text]
    : aligned !== undefined && form.upper.length === form.text.length
      ? [aligned, form.upper]
      : [undefined, undefined];
  const step = form.selfOverlaps ? 1 : form.text.length;
  if (within !== undefined && sought !== undefined) {
    for (let at = within.indexOf(sought); at !== -1; at = within.indexOf(sought, at + step)) add(at);
    return places;
  }
  // A literal pattern matches as many characters as it has, one each.
  const pattern = new RegExp(escapeRegExp(form.text), "gi");
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    add(match.index);
    pattern.lastIndex = match.index + step;
  }
  return places;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Whether `text` ends in `start`, in any case when the form is found in any case. */
function endsInStart(text: string, start: string, anyCase: boolean): boolean {
  return anyCase ? text.slice(-start.length).toUpperCase() === start.toUpperCase() : text.endsWith(start);
}

/** `text` with every occurrence of each secret (in any of its quoted forms) replaced by `[redacted]`. */
export function redactSecrets(text: string, secrets: Iterable<string | undefined>): string {
  return secretRedactor(secrets).redact(text);
}

/** A JSON-RPC id a peer sent, for a log line: a string holding a secret is redacted, a number kept. */
export function redactedId<T>(id: T, secrets: Iterable<string | undefined>): T | string {
  return typeof id === "string" ? redactSecrets(id, secrets) : id;
}

/** The forms of a set of secrets worked out once, for many strings (the strings of one message). */
export interface SecretRedactor {
  /** False when there is nothing to look for. */
  readonly any: boolean;
  /** `text` with the secrets replaced by `[redacted]` (the very string when it holds none). */
  redact(text: string): string;
}

export function secretRedactor(secrets: Iterable<string | undefined>): SecretRedactor {
  const forms = secretForms(secrets);
  return { any: forms.length > 0, redact: (text) => replaceForms(text, forms) };
}

/**
 * The first `max` characters of `text`, secrets redacted first; when it ends in the start of a
 * secret (four characters or more: the text was cut there, here or before), that start is
 * redacted too.
 */
export function redactedExcerpt(text: string, max: number, secrets: Iterable<string | undefined>): string {
  const forms = secretForms(secrets);
  let out = replaceForms(text, forms);
  // The text may have been cut before (a body read up to a limit), and is cut here.
  if (out.length > max) out = out.slice(0, max);
  for (const form of forms)
    for (let k = Math.min(form.text.length - 1, out.length); k >= MIN_SECRET_LENGTH; k--)
      if (endsInStart(out, form.text.slice(0, k), form.anyCase)) return `${out.slice(0, -k)}${REDACTED}`;
  return out;
}

/**
 * The `Authorization: Basic` credentials a client id and secret are sent as (`client_secret_basic`):
 * base64 of `id:secret`, as the SDK writes it, and with both parts form-encoded first, as RFC 6749
 * asks. A server quoting the header it got quotes these, not the secret.
 */
export function basicCredentials(clientId: string | undefined, secret: string | undefined): string[] {
  if (clientId === undefined || secret === undefined || secret.length < MIN_SECRET_LENGTH) return [];
  const form = (value: string): string => new URLSearchParams({ s: value }).toString().slice(2);
  return [`${clientId}:${secret}`, `${form(clientId)}:${form(secret)}`].flatMap((pair) => [
    Buffer.from(pair, "utf8").toString("base64"),
    Buffer.from(pair, "latin1").toString("base64"),
  ]);
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
    // Basic credentials are a user name and password in base64: a server that failed the login
    // may quote them decoded (the whole pair, or the password alone).
    if (credentials !== undefined && /^basic$/i.test(trimmed.split(/\s/, 1)[0]!)) {
      const pair = Buffer.from(credentials, "base64").toString("utf8");
      const colon = pair.indexOf(":");
      if (colon > 0 && !pair.includes("\uFFFD")) secrets.push(pair, pair.slice(colon + 1));
    }
  }
  return secrets;
}

/**
 * The secret parts of a server's URL: its userinfo and its query values (an `api_key=…`), as
 * written and decoded. URLs are shown without them anyway; a server may still echo them.
 */
export function urlSecrets(url: string | URL): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const secrets: string[] = [];
  const both = (value: string): void => {
    if (value === "") return;
    secrets.push(value);
    try {
      secrets.push(decodeURIComponent(value));
    } catch {
      // not percent-encoded validly: the written form is enough
    }
  };
  both(parsed.username);
  both(parsed.password);
  // Query values as short as `json` or `2025` are settings, not keys: only longer ones are taken.
  for (const pair of parsed.search.slice(1).split("&")) {
    const value = pair.slice(pair.indexOf("=") + 1 || pair.length);
    if (value.length >= MIN_QUERY_SECRET_LENGTH) both(value);
  }
  return secrets;
}
