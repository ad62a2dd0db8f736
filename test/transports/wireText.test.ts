/**
 * A message forwarded untouched goes out in the text it arrived in; anything else — a rebuilt
 * message, text that would break a line or an SSE field, nesting JSON.stringify refuses — is
 * serialized as before.
 */
import { describe, expect, it } from "vitest";
import { parseJsonText, serializeMessage } from "../../src/transports/lineFraming.js";
import { encodeWire, messageText } from "../../src/transports/wireJson.js";
import { wireTextOf } from "../../src/transports/wireText.js";

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

  it("a line break between tokens is kept as a space (one stdio line, one SSE data field), every value as it came", () => {
    const text =
      '{"jsonrpc":"2.0",\r\n"id": 9007199254740995,\n"result":{"n": 12345678901234567890,\r"z":-0, "f":1.10}}';
    const message = parse(text);
    const wire = '{"jsonrpc":"2.0",  "id": 9007199254740995, "result":{"n": 12345678901234567890, "z":-0, "f":1.10}}';
    expect(encodeWire(message)).toBe(wire);
    expect(serializeMessage(message)).toBe(`${wire}\n`);
  });

  it("deep nesting is not kept: JSON.stringify's refusal still decides", () => {
    const deep = `{"jsonrpc":"2.0","id":1,"result":{"x":${"[".repeat(6000)}${"]".repeat(6000)}}}`;
    const message = parse(deep);
    expect(wireTextOf(message)).toBeUndefined();
    expect(() => encodeWire(message)).toThrow(RangeError);
    const shallow = parse(`{"jsonrpc":"2.0","id":1,"result":{"x":${"[".repeat(100)}${"]".repeat(100)}}}`);
    expect(wireTextOf(shallow)).toBeDefined();
  });

  it("many brackets that do not nest deep are kept (a long list), brackets inside strings never count", () => {
    const items = Array.from({ length: 2000 }, (_, i) => `{"name":"t${i}","n":${i}.0}`).join(",");
    const list = `{"jsonrpc":"2.0","id":2,"result":{"tools":[${items}],"big":12345678901234567890}}`;
    expect(encodeWire(parse(list))).toBe(list);
    const quoted = `{"jsonrpc":"2.0","id":3,"result":{"s":"${"[{".repeat(3000)}","n":1.50}}`;
    expect(encodeWire(parse(quoted))).toBe(quoted);
  });
});
