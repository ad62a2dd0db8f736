/**
 * A message the proxy rebuilt goes out with what it did not change as the text that arrived:
 * numbers `JSON.parse` cannot carry (2^53 + 1, 20 digits, `-0`, `1.10`, `1e400`), key order and
 * escapes, in `structuredContent`, `_meta`, unknown fields and the entries left as they were. A
 * big message read with its payloads as bytes and forwarded untouched goes out as it came too.
 */
import { describe, expect, it } from "vitest";
import { parseJsonMessage, parseJsonText } from "../../src/transports/lineFraming.js";
import { encodeWire, messageText, WirePieces } from "../../src/transports/wireJson.js";
import { rememberOrigin, withOriginText } from "../../src/transports/wireOrigin.js";
import { rebuild } from "../../src/normalize/objects.js";

type Obj = Record<string, unknown>;
const parse = (text: string): Obj => parseJsonText(text, Buffer.byteLength(text)).message as Obj;

const STRUCTURED = '{"orderId":9007199254740993,"amount":1.10,"big":12345678901234567890,"z":-0,"b":1,"10":2}';
const META = '{"n":1e400,"s":"caf\\u00e9"}';

describe("a rebuilt message", () => {
  it("keeps the text of every member and item it did not change; what changed is written anew", () => {
    const text =
      '{"jsonrpc":"2.0","id":12345678901234567890,"result":{"content":[' +
      '{"type":"text","text":"kept \\u00e9","x":1.50},' +
      '{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","blob":"aGk="}}],' +
      `"structuredContent":${STRUCTURED},"_meta":${META},"__proto__":{"p":1.0}}}`;
    const original = parse(text);
    const result = original.result as Obj;
    const content = result.content as Obj[];
    const rebuilt = {
      ...original,
      result: {
        ...result,
        content: [content[0], { type: "resource", resource: { uri: "file:///a.txt", text: "hi" } }],
      },
    };
    rememberOrigin(rebuilt, original);
    expect(encodeWire(rebuilt)).toBe(
      '{"jsonrpc":"2.0","id":12345678901234567890,"result":{"content":[' +
        '{"type":"text","text":"kept \\u00e9","x":1.50},' +
        '{"type":"resource","resource":{"uri":"file:///a.txt","text":"hi"}}],' +
        `"structuredContent":${STRUCTURED},"_meta":${META},"__proto__":{"p":1.0}}}`,
    );
  });

  it("keeps the text of a string beside what changed, escaped otherwise than JSON.stringify would; not in the entry rewritten", () => {
    const text =
      '{"jsonrpc":"2.0","id":1,"result":{"note":"caf\\u00e9 a\\/b","plain":"caf\u00e9","quote":"a\\"b",' +
      '"contents":[{"uri":"file:///a.txt","mimeType":"text/plain","blob":"aGk=","label":"\\u0041"}]}}';
    const original = parse(text);
    const result = original.result as Obj;
    const entry = (result.contents as Obj[])[0]!;
    const rebuilt = {
      ...original,
      result: { ...result, contents: [{ uri: entry.uri, mimeType: entry.mimeType, text: "hi", label: entry.label }] },
    };
    rememberOrigin(rebuilt, original);
    // Each as the server wrote it; the entry, the engine's, as JSON.stringify writes it (as its record counts it).
    expect(encodeWire(rebuilt)).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{"note":"caf\\u00e9 a\\/b","plain":"caf\u00e9","quote":"a\\"b",' +
        '"contents":[{"uri":"file:///a.txt","mimeType":"text/plain","text":"hi","label":"A"}]}}',
    );
  });

  it("built again from a rebuilt one (the stateless pool's new id) still keeps the text of the first", () => {
    const original = parse(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":${STRUCTURED}}}`);
    const rewritten = { ...original, result: { ...(original.result as Obj), content: [{ type: "text", text: "x" }] } };
    rememberOrigin(rewritten, original);
    const renumbered = { ...rewritten, id: 7 };
    rememberOrigin(renumbered, rewritten);
    expect(messageText(renumbered)).toBe(
      `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":${STRUCTURED}}}`,
    );
  });

  it("a container that moved keeps its own text; numbers of items that moved are not taken from another's place", () => {
    const text =
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"long"},' +
      '{"type":"resource_link","uri":"a","_meta":{"rowId":1234567890123456789,"score":1.50}},' +
      '{"type":"resource_link","uri":"b","_meta":{"rowId":1234567890123456790}}],' +
      '"pair":{"x":{"n":1234567890123456789},"y":{"n":1234567890123456790}},"list":[1.50,2.50]}}';
    const original = parse(text);
    const result = original.result as Obj;
    const [first, a, b] = result.content as Obj[];
    const pair = result.pair as Obj;
    // The fit layer's cut: the text shortened, a link inserted after it; the rest moves up.
    const rebuilt = {
      ...original,
      result: {
        ...result,
        content: [{ ...first, text: "lo" }, { type: "resource_link", uri: "full" }, a, b],
        pair: { x: pair.y, y: pair.x },
        list: [2.5, 1.5],
      },
    };
    rememberOrigin(rebuilt, original);
    expect(encodeWire(rebuilt)).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"lo"},' +
        '{"type":"resource_link","uri":"full"},' +
        '{"type":"resource_link","uri":"a","_meta":{"rowId":1234567890123456789,"score":1.50}},' +
        '{"type":"resource_link","uri":"b","_meta":{"rowId":1234567890123456790}}],' +
        '"pair":{"x":{"n":1234567890123456790},"y":{"n":1234567890123456789}},"list":[2.5,1.5]}}',
    );
  });

  it("a block rebuilt where items moved keeps the text of the members it shares with the block it came from", () => {
    const text =
      '{"jsonrpc":"2.0","id":1,"result":{"content":[' +
      '{"type":"text","text":"long text","_meta":{"trace":12345678901234567890},"annotations":{"priority":0.50}},' +
      '{"type":"text","text":"next","n":1.50}]}}';
    const original = parse(text);
    const [long, next] = (original.result as Obj).content as Obj[];
    // The fit layer's cut: the block rebuilt with its text shortened, a link inserted after it.
    const rebuilt = {
      ...original,
      result: { content: [{ ...long, text: "long" }, { type: "resource_link", uri: "rest" }, next] },
    };
    rememberOrigin(rebuilt, original);
    expect(encodeWire(rebuilt)).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{"content":[' +
        '{"type":"text","text":"long","_meta":{"trace":12345678901234567890},"annotations":{"priority":0.50}},' +
        '{"type":"resource_link","uri":"rest"},{"type":"text","text":"next","n":1.50}]}}',
    );
  });

  it("an embedded resource rebuilt where items moved keeps the text its entry's members share, however deep", () => {
    let deep = "1.10";
    for (let i = 0; i < 20_000; i++) deep = `[${deep}]`;
    const text =
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"long text"},' +
      `{"type":"resource","resource":{"uri":"a://x","mimeType":"text/plain","blob":"aGk=","_meta":{"n":1.50},"x":${deep}}}]}}`;
    const original = parse(text);
    const [long, embedded] = (original.result as Obj).content as Obj[];
    const entry = (embedded as { resource: Obj }).resource;
    // The engine unwrapped the entry (a new block around a new entry), the fit layer cut the text before it.
    const resource = { uri: entry.uri, mimeType: entry.mimeType, text: "hi", _meta: entry._meta, x: entry.x };
    const rebuilt = {
      ...original,
      result: {
        content: [
          { ...long, text: "long" },
          { type: "resource_link", uri: "rest" },
          { type: "resource", resource },
        ],
      },
    };
    rememberOrigin(rebuilt, original);
    expect(encodeWire(rebuilt)).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"long"},{"type":"resource_link","uri":"rest"},' +
        `{"type":"resource","resource":{"uri":"a://x","mimeType":"text/plain","text":"hi","_meta":{"n":1.50},"x":${deep}}}]}}`,
    );
  });

  it("an embedded resource inlined as a text block keeps its entry's _meta as written, a level up", () => {
    const meta = '{"note":"caf\\u00e9","n":1.10,"trace":12345678901234567890}';
    const text =
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"before"},' +
      `{"type":"resource","resource":{"uri":"a://x","mimeType":"text/plain","text":"hi","_meta":${meta}}}]}}`;
    const original = parse(text);
    const [first, embedded] = (original.result as Obj).content as Obj[];
    const entry = (embedded as { resource: Obj }).resource;
    // The fit layer's inlining: the entry's text as a text block carrying its _meta, a link to it first.
    const rebuilt = {
      ...original,
      result: {
        content: [first, { type: "resource_link", uri: "a://x" }, { type: "text", text: "hi", _meta: entry._meta }],
      },
    };
    rememberOrigin(rebuilt, original);
    expect(encodeWire(rebuilt)).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"before"},' +
        `{"type":"resource_link","uri":"a://x"},{"type":"text","text":"hi","_meta":${meta}}]}}`,
    );
  });

  it("a block of plain values rebuilt where items moved keeps its numbers' text: found by what it was rebuilt from", () => {
    const text =
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"long text"},' +
      '{"type":"text","text":"tail","x-n":12345678901234567891,"x-f":1.10}]}}';
    const original = parse(text);
    const [long, tail] = (original.result as Obj).content as Obj[];
    // The fit layer's cut: both blocks rebuilt (rebuild, as the engine and the fit layer make them), a link between.
    const rebuilt = {
      ...original,
      result: {
        content: [
          rebuild(long!, { text: "long" }),
          { type: "resource_link", uri: "rest" },
          rebuild(tail!, { text: "" }),
        ],
      },
    };
    rememberOrigin(rebuilt, original);
    expect(encodeWire(rebuilt)).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"long"},{"type":"resource_link","uri":"rest"},' +
        '{"type":"text","text":"","x-n":12345678901234567891,"x-f":1.10}]}}',
    );
  });

  it("nested deeper than JSON.stringify recurses, with no text to take it from, is still written", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const message = { jsonrpc: "2.0", id: 1, result: { content: [], x: deep } };
    expect(encodeWire(message)).toBe(
      `{"jsonrpc":"2.0","id":1,"result":{"content":[],"x":${"[".repeat(20_000)}1${"]".repeat(20_000)}}}`,
    );
  });

  it("a value with its own toJSON put in by the rebuild is written as it writes itself", () => {
    const original = parse('{"jsonrpc":"2.0","id":1,"result":{"when":{"a":1},"n":1.50}}');
    const when = new Date(0);
    const rebuilt = { ...original, result: { ...(original.result as Obj), when } };
    rememberOrigin(rebuilt, original);
    expect(encodeWire(rebuilt)).toBe('{"jsonrpc":"2.0","id":1,"result":{"when":"1970-01-01T00:00:00.000Z","n":1.50}}');
  });

  it("from text JSON.stringify writes back as it was is not walked; one differing number deep inside is", () => {
    const rebuild = (original: Obj): Obj => {
      const result = original.result as Obj;
      const rebuilt = { ...original, result: { ...result, contents: [{ uri: "a", text: "hi" }] } };
      rememberOrigin(rebuilt, original);
      return rebuilt;
    };
    const plain = '{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"a","blob":"aGk="}],"_meta":{"n":[1,2.5]}}}';
    const canonical = rebuild(parse(plain));
    expect(withOriginText(canonical)).toBeUndefined();
    expect(encodeWire(canonical)).toBe(JSON.stringify(canonical));
    const odd = rebuild(parse(plain.replace("2.5", "2.50")));
    expect(withOriginText(odd)).toBeDefined();
    expect(encodeWire(odd)).toBe(
      '{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"a","text":"hi"}],"_meta":{"n":[1,2.50]}}}',
    );
  });

  it("with no text behind it is serialized as before", () => {
    const rebuilt = { jsonrpc: "2.0", id: 1, result: { n: 1.5 } };
    rememberOrigin(rebuilt, { jsonrpc: "2.0", id: 1, result: { n: 2 } });
    expect(encodeWire(rebuilt)).toBe('{"jsonrpc":"2.0","id":1,"result":{"n":1.5}}');
  });
});

describe("a big message read with its payloads as bytes, then rebuilt", () => {
  it("keeps the text around what changed, and writes its untouched payloads as their bytes", () => {
    const payload = "y".repeat(5000);
    const line =
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"old"},' +
      `{"type":"text","text":"${payload}","_meta":{"n":1.10}}],"structuredContent":${STRUCTURED}}}`;
    const original = parseJsonMessage(Buffer.from(line), 1024)?.message as Obj;
    const result = original.result as Obj;
    const content = result.content as Obj[];
    const rebuilt = { ...original, result: { ...result, content: [{ type: "text", text: "new" }, content[1]] } };
    rememberOrigin(rebuilt, original);
    expect(messageText(rebuilt)).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"new"},' +
        `{"type":"text","text":"${payload}","_meta":{"n":1.10}}],"structuredContent":${STRUCTURED}}}`,
    );
  });

  it("nested hundreds deep: rebuilt in time of the order of parsing it, not of depth × size", () => {
    // Each level holds 30 KB of small tokens; the payload, read as bytes, sits at the bottom.
    let deep = `{"text":"${"y".repeat(5000)}","n":1.10}`;
    for (let i = 0; i < 300; i++) deep = `{"f":[${"1,".repeat(15_000)}1],"n":1.10,"d":${deep}}`;
    const line = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"old"}],"structuredContent":${deep}}}`;
    let parseMs = Number.POSITIVE_INFINITY;
    let rebuildMs = Number.POSITIVE_INFINITY;
    let out = "";
    for (let round = 0; round < 3; round++) {
      const parseStart = performance.now();
      JSON.parse(line);
      parseMs = Math.min(parseMs, performance.now() - parseStart);
      const original = parseJsonMessage(Buffer.from(line), 1024)?.message as Obj;
      const rebuilt = {
        ...original,
        result: { ...(original.result as Obj), content: [{ type: "text", text: "new" }] },
      };
      rememberOrigin(rebuilt, original);
      const rebuildStart = performance.now();
      out = messageText(rebuilt);
      rebuildMs = Math.min(rebuildMs, performance.now() - rebuildStart);
    }
    expect(out).toBe(line.replace('"text":"old"', '"text":"new"'));
    // Walking each level's subtree again at every level took dozens of times as long as parsing.
    expect(rebuildMs).toBeLessThan(parseMs * 8);
  });
});

describe("a big message read with its payloads as bytes, forwarded untouched", () => {
  it("goes out as the bytes it came in, numbers and spacing included (a line break becomes a space)", () => {
    const payload = "x".repeat(5000);
    const line = `{"jsonrpc":"2.0", "id":9007199254740993,\r"result":{"content":[{"type":"text","text":"${payload}"}],"structuredContent":${STRUCTURED}}}`;
    const framed = parseJsonMessage(Buffer.from(line), 1024);
    const wire = encodeWire(framed?.message);
    expect(wire).toBeInstanceOf(WirePieces);
    expect((wire as WirePieces).join().toString("utf8")).toBe(line.replace("\r", " "));
  });
});
