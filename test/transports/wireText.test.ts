/**
 * A message forwarded untouched goes out in the text it arrived in; anything else — a rebuilt
 * message, text that would break a line or an SSE field, nesting JSON.stringify refuses — is
 * serialized as before.
 */
import { describe, expect, it } from "vitest";
import { parseJsonText, serializeMessage } from "../../src/transports/lineFraming.js";
import { encodeWire } from "../../src/transports/wireJson.js";
import { messageText, wireTextOf } from "../../src/transports/wireText.js";

const parse = (text: string): unknown => parseJsonText(text, Buffer.byteLength(text)).message;

describe("wire text", () => {
  it("an untouched message is written in the very text it arrived in", () => {
    const text = '{ "jsonrpc":"2.0", "id":7, "method":"resources/read", "params":{"uri":"caf\\u00e9"} }';
    const message = parse(text);
    expect(encodeWire(message)).toBe(text);
    expect(serializeMessage(message)).toBe(`${text}\n`);
    expect(messageText(message)).toBe(text);
  });

  it("a new object built from it is serialized", () => {
    const message = parse('{"jsonrpc":"2.0","id":1,"result":{"a":1}}') as Record<string, unknown>;
    const rebuilt = { ...message, result: { a: 2 } };
    expect(encodeWire(rebuilt)).toBe('{"jsonrpc":"2.0","id":1,"result":{"a":2}}');
  });

  it("text with a line break between tokens is not kept (one stdio line, one SSE data field)", () => {
    const message = parse('{"jsonrpc":"2.0",\n"id":1,\r"result":{}}');
    expect(wireTextOf(message)).toBeUndefined();
    expect(encodeWire(message)).toBe('{"jsonrpc":"2.0","id":1,"result":{}}');
  });

  it("deep nesting is not kept: JSON.stringify's refusal still decides", () => {
    const deep = `{"jsonrpc":"2.0","id":1,"result":{"x":${"[".repeat(6000)}${"]".repeat(6000)}}}`;
    const message = parse(deep);
    expect(wireTextOf(message)).toBeUndefined();
    expect(() => encodeWire(message)).toThrow(RangeError);
    const shallow = parse(`{"jsonrpc":"2.0","id":1,"result":{"x":${"[".repeat(100)}${"]".repeat(100)}}}`);
    expect(wireTextOf(shallow)).toBeDefined();
  });
});
