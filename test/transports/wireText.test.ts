/**
 * A message forwarded untouched goes out in the text it arrived in, however deep it nests, and so
 * does each item of a batch; a rebuilt message is serialized (keeping what it shares: wireOrigin).
 */
import { describe, expect, it } from "vitest";
import { parseJsonMessage, parseJsonText, serializeMessage } from "../../src/transports/lineFraming.js";
import { encodeWire, messageText, WirePieces } from "../../src/transports/wireJson.js";

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

  it("kept however deep it nests: past a few hundred levels written again it would lose its numbers", () => {
    for (const depth of [520, 3000, 6000, 100_000]) {
      const deep = `{"jsonrpc":"2.0","id":1,"result":{"x":${"[".repeat(depth)}1e400,-0,12345678901234567890,1.0${"]".repeat(depth)}}}`;
      expect(encodeWire(parse(deep)), `depth ${depth}`).toBe(deep);
    }
  });

  it("each item of a batch keeps its own text: split, or forwarded without the items refused", () => {
    const items = [
      '{"jsonrpc":"2.0","id":2,"method":"x/echo","params":{"n":[1e400,-0,12345678901234567890,1.0]}}',
      '{"jsonrpc":"1.0","id":3,"method":"ping"}',
      '{ "jsonrpc":"2.0", "id":"x\\/y", "method":"ping" }',
    ];
    const batch = parse(`[${items.join(" ,\n")}]`) as unknown[];
    for (const [i, item] of items.entries()) expect(encodeWire(batch[i])).toBe(item);
    expect(encodeWire([batch[0], batch[2]])).toBe(`[${items[0]},${items[2]}]`);
    expect(encodeWire([batch[0], { jsonrpc: "2.0", id: 9, result: {} }])).toBe(
      `[${items[0]},{"jsonrpc":"2.0","id":9,"result":{}}]`,
    );
  });

  it("each item of a big batch read with its payloads as bytes keeps its text and its own payloads", () => {
    const big = (n: number): string => `"${String(n).repeat(3000)}"`;
    const items = [
      `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"a","text":${big(1)}},{"uri":"b","text":${big(2)}}],"n":1.10}}`,
      '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":1e400}}',
      `{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"c","blob":${big(3)}}],"z":-0}}`,
    ];
    const batch = parseJsonMessage(Buffer.from(`[${items.join(",")}]`), 1024)?.message as unknown[];
    const written = (wire: unknown): string =>
      wire instanceof WirePieces ? wire.join().toString("utf8") : (wire as string);
    for (const [i, item] of items.entries()) expect(written(encodeWire(batch[i])), `item ${i}`).toBe(item);
    expect(written(encodeWire([batch[2], batch[0]]))).toBe(`[${items[2]},${items[0]}]`);
  });

  it("many brackets that do not nest deep are kept (a long list), brackets inside strings never count", () => {
    const items = Array.from({ length: 2000 }, (_, i) => `{"name":"t${i}","n":${i}.0}`).join(",");
    const list = `{"jsonrpc":"2.0","id":2,"result":{"tools":[${items}],"big":12345678901234567890}}`;
    expect(encodeWire(parse(list))).toBe(list);
    const quoted = `{"jsonrpc":"2.0","id":3,"result":{"s":"${"[{".repeat(3000)}","n":1.50}}`;
    expect(encodeWire(parse(quoted))).toBe(quoted);
  });
});
