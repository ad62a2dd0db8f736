/**
 * The JSON locator behind config parse errors: where the first syntax error is (line, column),
 * in which member or element, and what was expected there; a key given twice; nesting too deep;
 * nothing for valid JSON.
 */
import { describe, expect, it } from "vitest";
import { checkJsonText, formatPath, MAX_DEPTH } from "../../src/config/jsonLocation.js";

describe("checkJsonText: syntax errors", () => {
  it.each([
    "{}",
    "[]",
    " { } ",
    "[ ]",
    '{"a":[1,{"b":null}],"c":"x\\u00e9\\n"}',
    "[[], {}, [{}], -0.5e+3, true, false]",
    '"just a string"',
  ])("finds nothing wrong in %s", (text) => {
    expect(checkJsonText(text)).toBeUndefined();
    expect(() => JSON.parse(text)).not.toThrow();
  });

  it.each([
    // an object's members
    ['{"a": 1 "b": 2}', 1, 9, "$", "',' or '}' after a member (a missing comma, or a trailing one)"],
    ['{"a": 1,}', 1, 9, "$", "a string in double quotes"],
    ['{"a": {"b": 1', 1, 14, "$.a", "',' or '}' after a member (a missing comma, or a trailing one)"],
    ['{"a" 1}', 1, 6, "$", "':' after the key \"a\""],
    // an array's elements
    ["[1 2]", 1, 4, "$", "',' or ']' after an element"],
    ["[1,]", 1, 4, "$[1]", "a value (a string in double quotes, a number, true, false, null, an object or an array)"],
    ['{"args": ["x",\n  "y" "z"]}', 2, 7, "$.args", "',' or ']' after an element"],
    ["[[1], [2}", 1, 9, "$[1]", "',' or ']' after an element"],
    // neither
    ['{"a": 1} x', 1, 10, "$", "the end of the file after the top-level value"],
    // a number of 500 digits is a number: the fault is after it
    [
      `{"n": 1${"0".repeat(500)}, "c": [}]`,
      1,
      516,
      "$.c[0]",
      "a value (a string in double quotes, a number, true, false, null, an object or an array)",
    ],
  ] as const)("%s: line %i, column %i, in %s", (text, line, column, path, expected) => {
    expect(checkJsonText(text)).toEqual({ kind: "syntax", line, column, path, expected });
    expect(() => JSON.parse(text)).toThrow();
  });
});

describe("formatPath", () => {
  it("writes identifier keys with dots, other keys and indexes in brackets", () => {
    expect(formatPath(["mcpServers", "my server", "args", 0])).toBe('$.mcpServers["my server"].args[0]');
  });
});

describe("checkJsonText", () => {
  it("finds a key given twice in one object, at its second place", () => {
    expect(checkJsonText('{"a": {"b": 1, "c": 2,\n "b": 3}}')).toMatchObject({
      kind: "duplicate",
      line: 2,
      column: 2,
      path: "$.a.b",
    });
    // The same key in two objects is no problem.
    expect(checkJsonText('{"a": {"b": 1}, "c": {"b": 1}, "d": [{"b": 1}, {"b": 2}]}')).toBeUndefined();
  });

  it("refuses nesting past MAX_DEPTH, and takes it up to there", () => {
    const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    expect(checkJsonText(nested(MAX_DEPTH))).toBeUndefined();
    expect(checkJsonText(nested(MAX_DEPTH + 1))).toMatchObject({ kind: "depth" });
    expect(checkJsonText(nested(100_000))).toMatchObject({ kind: "depth", line: 1, column: MAX_DEPTH + 1 });
  });
});
