/**
 * `idKeyOf`: the key a request is known by in the proxy's tables — its id, or for an integer
 * past 2^53 its exact value as written, read from the message's own text or, for a message the
 * engine rebuilt, from the text of the one it was built from.
 */
import { describe, expect, it } from "vitest";
import { idKeyOf } from "../../src/transports/idAsWritten.js";
import { parseJsonText } from "../../src/transports/lineFraming.js";
import { rememberOrigin } from "../../src/transports/wireOrigin.js";

function parsed(text: string): { id: string | number } {
  const framed = parseJsonText(text, Buffer.byteLength(text));
  if (!("message" in framed)) throw new Error("not parsed");
  return framed.message as { id: string | number };
}

describe("idKeyOf", () => {
  it("is the id itself for strings, safe integers and fractions", () => {
    for (const text of ['{"id":"9007199254740993"}', '{"id":42}', '{"id":-0}', '{"id":1.5}']) {
      const message = parsed(text);
      expect(idKeyOf(message), text).toBe(message.id);
    }
  });

  it("is the exact value of an integer past 2^53, as written", () => {
    expect(idKeyOf(parsed('{"jsonrpc":"2.0", "id" : 9007199254740993,"result":{}}'))).toBe(9007199254740993n);
    expect(idKeyOf(parsed('{"id":-12345678901234567891}'))).toBe(-12345678901234567891n);
  });

  it("reads it from the message a rebuilt one came from", () => {
    const original = parsed('{"id":9007199254740993,"result":{"a":1}}');
    const rebuilt = { ...original, result: { a: 2 } };
    rememberOrigin(rebuilt, original);
    expect(idKeyOf(rebuilt)).toBe(9007199254740993n);
  });

  it("is the rounded number when no text says more (built here, or written with an exponent)", () => {
    expect(idKeyOf({ id: 2 ** 60 })).toBe(2 ** 60);
    expect(idKeyOf(parsed('{"id":9.007199254740993e15}'))).toBe(9007199254740992);
  });
});
