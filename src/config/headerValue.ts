/**
 * Whether a configured header value is one HTTP can carry: no line break, NUL or other control
 * character but tab. A value `fetch` refuses would be quoted in its error message, so such a
 * value is refused when the config or the flags are read — by name, never quoted.
 */
export function isHeaderValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return false;
  }
  return true;
}

/** Why a value is refused, for an error that names the header (the value is not shown). */
export const NOT_A_HEADER_VALUE =
  "holds a line break or another control character no HTTP header may carry (the value is not shown)";

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Whether `name` is an HTTP header name (a token): anything else fails every request. */
export function isHeaderName(name: string): boolean {
  return TOKEN.test(name);
}

/** Why a header name is refused. */
export const NOT_A_HEADER_NAME = "is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)";
