/**
 * Where a config file goes wrong, in the user's terms: JSON paths (`$.mcpServers.docs.args[0]`)
 * and, for text that is not JSON, the line, column and enclosing field of the first error.
 * Node's own `JSON.parse` message quotes a stretch of the text (often the start of the file) and,
 * for some errors, no position at all.
 */

/** `$.a.b[0]["odd key"]`: dots for identifier-like keys, brackets for the rest. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "$";
  for (const key of path)
    out +=
      typeof key === "number"
        ? `[${key}]`
        : /^[A-Za-z_$][\w$]*$/.test(String(key))
          ? `.${String(key)}`
          : `[${JSON.stringify(String(key))}]`;
  return out;
}

export interface JsonSyntaxError {
  /** 1-based line and column of the first offending character (or the end of the text). */
  readonly line: number;
  readonly column: number;
  /** The member or element being read when it went wrong. */
  readonly path: string;
  /** What was expected there, in words. */
  readonly expected: string;
}

class Stop {
  constructor(
    readonly offset: number,
    readonly expected: string,
  ) {}
}

/** The first syntax error of `text` (RFC 8259), or undefined when it is valid JSON. */
export function locateJsonError(text: string): JsonSyntaxError | undefined {
  const path: Array<string | number> = [];
  let i = 0;
  const space = (): void => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  };
  const fail = (expected: string): never => {
    throw new Stop(i, expected);
  };
  const string = (): string => {
    if (text[i] !== '"') fail("a string in double quotes");
    const start = i++;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail("no control character inside a string (escape it, e.g. \\n)");
      if (text[i] === "\\") {
        i++;
        if (text[i] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail("four hex digits after \\u");
          i += 5;
          continue;
        }
        if (!'"\\/bfnrt'.includes(text[i] ?? "x")) fail('a valid escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)');
      }
      i++;
    }
    if (i >= text.length) fail("the closing double quote of the string");
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  /** Past `close` (and true) when it comes next: an empty object or array. */
  const closes = (close: string): boolean => {
    space();
    if (text[i] !== close) return false;
    i++;
    return true;
  };
  /** After a member or element: true past a `,` (another follows), false past `close`; anything else is the error. */
  const another = (close: string, expected: string): boolean => {
    space();
    if (text[i] === ",") {
      i++;
      return true;
    }
    if (!closes(close)) fail(expected);
    return false;
  };
  const object = (): void => {
    i++; // past the '{'
    if (closes("}")) return;
    do {
      space();
      const key = string();
      space();
      if (text[i] !== ":") fail(`':' after the key ${JSON.stringify(key)}`);
      i++;
      path.push(key);
      value();
      path.pop();
    } while (another("}", "',' or '}' after a member (a missing comma, or a trailing one)"));
  };
  const array = (): void => {
    i++; // past the '['
    if (closes("]")) return;
    let index = 0;
    do {
      path.push(index++);
      value();
      path.pop();
    } while (another("]", "',' or ']' after an element"));
  };
  const literal = (): void => {
    const match = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (match === null || /[\w.]/.test(text[i + match[0].length] ?? ""))
      fail("a value (a string in double quotes, a number, true, false, null, an object or an array)");
    i += match![0].length;
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === "{") object();
    else if (c === "[") array();
    else if (c === '"') string();
    else literal();
  };
  try {
    value();
    space();
    if (i < text.length) fail("the end of the file after the top-level value");
    return undefined;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    const before = text.slice(0, error.offset);
    const line = before.split("\n").length;
    const column = error.offset - before.lastIndexOf("\n");
    return { line, column, path: formatPath(path), expected: error.expected };
  }
}
