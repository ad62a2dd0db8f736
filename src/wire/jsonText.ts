/**
 * Walking valid JSON text (text `JSON.parse` has already accepted) by its characters: where a
 * value ends, where a string ends, how deep it nests. Used where the proxy keeps the text a
 * message arrived in and needs to know its shape without parsing it again.
 */

/** The first index at or after `at` that is not JSON whitespace. */
export function skipSpace(text: string, at: number): number {
  let i = at;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return i;
    i++;
  }
}

/**
 * Just past the string literal whose opening quote is at `at`. Jumps from quote to quote
 * (`indexOf` runs natively: a megabyte of text is not walked a character at a time); a quote
 * after an odd run of backslashes is escaped.
 */
export function stringEnd(text: string, at: number): number {
  let from = at + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let slash = quote - 1;
    while (slash > at && text.charCodeAt(slash) === 0x5c) slash--;
    if ((quote - 1 - slash) % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** Just past the object or array that opens at an index (containerEnds.ts finds them all at once). */
export type ContainerEndOf = (open: number) => number;

/** Just past the JSON value that starts at `at`; `endOf`, when given, says where containers end. */
export function valueEnd(text: string, at: number, endOf?: ContainerEndOf): number {
  const c = text.charCodeAt(at);
  if (c === 0x22) return stringEnd(text, at);
  if (c === 0x7b || c === 0x5b) {
    if (endOf !== undefined) return endOf(at);
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      const d = text.charCodeAt(i);
      if (d === 0x22) i = stringEnd(text, i) - 1;
      else if (d === 0x7b || d === 0x5b) depth++;
      else if ((d === 0x7d || d === 0x5d) && --depth === 0) return i + 1;
    }
    return text.length;
  }
  // A number, true, false or null: up to the next delimiter.
  let i = at;
  for (; i < text.length; i++) {
    const d = text.charCodeAt(i);
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x09 || d === 0x0a || d === 0x0d) break;
  }
  return i;
}

/** Where a value stands in a JSON text: `text.slice(start, end)` is its text. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** Spans of an object's member values, by name (the last of a name, as `JSON.parse` keeps). */
export function memberSpans(text: string, open: number, endOf?: ContainerEndOf): Map<string, Span> {
  const spans = new Map<string, Span>();
  let at = skipSpace(text, open + 1);
  if (text.charCodeAt(at) === 0x7d) return spans;
  for (;;) {
    const keyEnd = stringEnd(text, at);
    const key = JSON.parse(text.slice(at, keyEnd)) as string;
    const start = skipSpace(text, skipSpace(text, keyEnd) + 1); // past the colon
    const end = valueEnd(text, start, endOf);
    spans.set(key, { start, end });
    at = skipSpace(text, end);
    if (text.charCodeAt(at) !== 0x2c) return spans;
    at = skipSpace(text, at + 1);
  }
}

/** Spans of an array's items, in order. */
export function itemSpans(text: string, open: number, endOf?: ContainerEndOf): Span[] {
  const spans: Span[] = [];
  let at = skipSpace(text, open + 1);
  if (text.charCodeAt(at) === 0x5d) return spans;
  for (;;) {
    const end = valueEnd(text, at, endOf);
    spans.push({ start: at, end });
    at = skipSpace(text, end);
    if (text.charCodeAt(at) !== 0x2c) return spans;
    at = skipSpace(text, at + 1);
  }
}

/**
 * `text` laid out as `JSON.stringify(value, null, indent)` lays out what it writes: each member
 * and item on its own line, `": "` after names, empty containers as `{}` and `[]`; with `indent`
 * 0, on one line with no space at all, as `JSON.stringify(value)` writes it. Every token is kept
 * as written (numbers, escapes), so a value `JSON.parse` cannot carry is shown as it is.
 */
export function indentJsonText(text: string, indent = 2): string {
  const pad = (depth: number): string => (indent > 0 ? `\n${" ".repeat(depth * indent)}` : "");
  const colon = indent > 0 ? ": " : ":";
  let out = "";
  let depth = 0;
  let i = skipSpace(text, 0);
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      const next = skipSpace(text, i + 1);
      const close = text.charCodeAt(next);
      if (close === 0x7d || close === 0x5d) {
        out += text.slice(i, i + 1) + text.slice(next, next + 1);
        i = next + 1;
      } else {
        out += text.slice(i, i + 1) + pad(++depth);
        i = next;
      }
    } else if (c === 0x7d || c === 0x5d) {
      out += pad(--depth) + text.slice(i, i + 1);
      i++;
    } else if (c === 0x2c) {
      out += `,${pad(depth)}`;
      i++;
    } else if (c === 0x3a) {
      out += colon;
      i++;
    } else {
      const end = valueEnd(text, i);
      out += text.slice(i, end);
      i = end;
    }
    i = skipSpace(text, i);
  }
  return out;
}
