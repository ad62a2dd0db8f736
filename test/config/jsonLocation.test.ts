/**
 * The JSON locator behind config parse errors: where the first syntax error is (line, column),
 * in which member or element, and what was expected there; nothing for valid JSON.
 */
import { describe, expect, it } from "vitest";
import { formatPath, locateJsonError } from "../../src/config/jsonLocation.js";

describe("locateJsonError", () => {
  it.each([
    "{}",
    "[]",
    " { } ",
    "[ ]",
    '{"a":[1,{"b":null}],"c":"x\\u00e9\\n"}',
    "[[], {}, [{}], -0.5e+3, true, false]",
    '"just a string"',
  ])("finds nothing wrong in %s", (text) => {
    expect(locateJsonError(text)).toBeUndefined();
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
  ] as const)("%s: line %i, column %i, in %s", (text, line, column, path, expected) => {
    expect(locateJsonError(text)).toEqual({ line, column, path, expected });
    expect(() => JSON.parse(text)).toThrow();
  });
});

describe("formatPath", () => {
  it("writes identifier keys with dots, other keys and indexes in brackets", () => {
    expect(formatPath(["mcpServers", "my server", "args", 0])).toBe('$.mcpServers["my server"].args[0]');
  });
});
