/**
 * Where a config file goes wrong, in the user's terms: JSON paths (`$.mcpServers.docs.args[0]`)
 * and, for text that is not JSON, the line, column and enclosing field of the first error.
 * Node's own `JSON.parse` message quotes a stretch of the text (often the start of the file) and,
 * for some errors, no position at all. Two things `JSON.parse` lets through are errors here: a
 * key given twice in one object (the parse keeps the last one without a word — a second `auth`
 * would silently replace the first), and nesting deeper than `MAX_DEPTH` (no config needs it,
 * and walking it would exhaust the stack).
 */

/** `true`, `false`, `null` or a number (RFC 8259), read at `lastIndex`. */
const LITERAL = /true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Objects and arrays nested deeper than this are refused. */
export const MAX_DEPTH = 64;

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

/** A JSON text's first problem: a syntax error, a key given twice in one object, or too deep a nesting. */
export interface JsonTextProblem extends JsonSyntaxError {
  readonly kind: "syntax" | "duplicate" | "depth";
}

class Stop {
  constructor(
    readonly offset: number,
    readonly expected: string,
    readonly kind: JsonTextProblem["kind"] = "syntax",
  ) {}
}

/**
 * The first problem of `text` read as a config: a syntax error (RFC 8259), a duplicate key, or
 * nesting past `MAX_DEPTH`; undefined when there is none.
 */
export function checkJsonText(text: string): JsonTextProblem | undefined {
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
  const deeper = (): void => {
    if (path.length >= MAX_DEPTH) throw new Stop(i, `at most ${MAX_DEPTH} levels of nesting`, "depth");
  };
  const object = (): void => {
    deeper();
    i++; // past the '{'
    if (closes("}")) return;
    const keys = new Set<string>();
    do {
      space();
      const at = i;
      const key = string();
      if (keys.has(key)) {
        path.push(key);
        throw new Stop(at, "each key once in an object (JSON keeps only the last one)", "duplicate");
      }
      keys.add(key);
      space();
      if (text[i] !== ":") fail(`':' after the key ${JSON.stringify(key)}`);
      i++;
      path.push(key);
      value();
      path.pop();
    } while (another("}", "',' or '}' after a member (a missing comma, or a trailing one)"));
  };
  const array = (): void => {
    deeper();
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
    // Read where it stands, however long (a number of thousands of digits is JSON too).
    LITERAL.lastIndex = i;
    const match = LITERAL.exec(text);
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
    return { kind: error.kind, line, column, path: formatPath(path), expected: error.expected };
  }
}
