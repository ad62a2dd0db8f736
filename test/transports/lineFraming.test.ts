import { describe, expect, it } from "vitest";
import {
  JsonLineReader,
  jsonRpcIdHint,
  parseJsonMessage,
  parseJsonPieces,
  parseJsonText,
  serializeMessage,
  type Framed,
} from "../../src/transports/lineFraming.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";

const enc = (s: string): Buffer => Buffer.from(s, "utf8");

/** Feeds `bytes` cut at every position in `cuts` and returns everything framed. */
function frame(bytes: Buffer, cuts: number[], options?: { maxMessageBytes?: number }): Framed[] {
  const reader = new JsonLineReader({ maxMessageBytes: options?.maxMessageBytes ?? DEFAULT_LIMITS.maxMessageBytes });
  const out: Framed[] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    out.push(...reader.push(bytes.subarray(at, cut)));
    at = cut;
  }
  out.push(...reader.end());
  return out;
}

describe("JsonLineReader", () => {
  const messages = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "é✓😀", arguments: { text: "multi\u00a0byte 😀" } },
    },
    { jsonrpc: "2.0", method: "notifications/progress", params: { unknownKey: [1, 2, { deep: true }] } },
    { jsonrpc: "2.0", id: "x", result: { contents: [{ uri: "a", text: "\u2028line sep" }] } },
  ];
  const wire = enc(messages.map(serializeMessage).join(""));

  it("frames the same messages at every chunk boundary, including inside multi-byte UTF-8", () => {
    for (let cut = 0; cut <= wire.length; cut++) {
      expect(frame(wire, [cut]).map((f) => f.message)).toEqual(messages);
    }
  });

  it("frames byte-at-a-time", () => {
    const cuts = Array.from({ length: wire.length }, (_, i) => i);
    expect(frame(wire, cuts).map((f) => f.message)).toEqual(messages);
  });

  it("accepts CRLF, skips blank lines, frames an unterminated last line at end()", () => {
    const out = frame(enc('{"a":1}\r\n\r\n\n   \n{"b":2}\r\n{"c":3}'), [8]);
    expect(out).toEqual([{ message: { a: 1 } }, { message: { b: 2 } }, { message: { c: 3 } }]);
    // However long a line of whitespace is: still blank (not a parse error).
    const long = frame(enc(`${" ".repeat(65)}\n${"\t ".repeat(5000)}\r\n\ufeff  \n{"d":4}\n`), [30, 4000]);
    expect(long).toEqual([{ message: { d: 4 } }]);
  });

  it("delivers messages untouched (unknown keys, key order, arrays as batches)", () => {
    const line =
      '{"z":1,"jsonrpc":"2.0","id":7,"result":{"_meta":{"k":null},"b":[],"a":"\\u0000"}}\n[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n';
    const out = frame(enc(line), []);
    expect(JSON.stringify(out[0]?.message)).toBe(line.split("\n")[0]);
    expect(out[1]?.message).toEqual([{ jsonrpc: "2.0", id: 1, method: "ping" }]);
  });

  it("reports a banner line on stdout as invalid JSON and goes on", () => {
    const out = frame(enc('Server v1.2 listening on stdio\n{"jsonrpc":"2.0","id":1,"result":{}}\n'), [5]);
    expect(out[0]?.problem).toEqual({ kind: "invalid-json", bytes: 30, excerpt: "Server v1.2 listening on stdio" });
    expect(out[1]?.message).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
  });

  it("reports valid JSON that is not an object as not-jsonrpc", () => {
    const out = frame(enc('42\n"hello"\nnull\n'), []);
    expect(out.map((f) => f.problem?.kind)).toEqual(["not-jsonrpc", "not-jsonrpc", "not-jsonrpc"]);
  });

  it("reports invalid UTF-8 instead of decoding it lossily", () => {
    const bad = Buffer.concat([enc('{"text":"'), Buffer.from([0xff, 0xfe]), enc('"}\n{"ok":true}\n')]);
    const out = frame(bad, [10]);
    expect(out[0]?.problem?.kind).toBe("invalid-json");
    expect(out[0]?.problem?.bytes).toBe(13);
    expect(out[1]?.message).toEqual({ ok: true });
  });

  it("names the id of an answer that is not UTF-8 (it can be answered), never of a request", () => {
    const bad = (json: string): Buffer => Buffer.from(json.replace("BAD", "\u00ff"), "latin1");
    const lines = Buffer.concat([
      bad('{"jsonrpc":"2.0","id":7,"result":{"text":"BAD"}}\n'),
      bad('{"jsonrpc":"2.0","method":"sampling/createMessage","params":{"x":"BAD"},"id":7}\n'),
      bad('{"jsonrpc":"2.0","id":"e","error":{"code":1,"message":"BAD"}}\n'),
      bad('{"jsonrpc":"2.0","id":8,"result":BAD}\n'),
    ]);
    const out = frame(lines, [lines.length]);
    expect(out.map((framed) => framed.problem?.id)).toEqual([7, undefined, "e", undefined]);
    expect(out.every((framed) => framed.problem?.kind === "invalid-json")).toBe(true);
  });

  it("skips a line over maxMessageBytes, names its id (first or last key), keeps going", () => {
    const big = "x".repeat(5000);
    const wire = enc(
      `{"jsonrpc":"2.0","id":41,"result":{"text":"${big}"}}\n` +
        `{"method":"tools/call","params":{"text":"${big}"},"jsonrpc":"2.0","id":"req-42"}\n` +
        `{"jsonrpc":"2.0","id":43,"result":{}}\n`,
    );
    for (const cut of [1, 100, 3000, 5040, 5100, 10_000]) {
      const out = frame(wire, [cut], { maxMessageBytes: 1000 });
      expect(out.map((f) => f.problem?.kind ?? "message")).toEqual(["too-large", "too-large", "message"]);
      expect(out[0]?.problem).toMatchObject({ bytes: 5000 + 46, id: 41 });
      expect(out[0]?.problem?.excerpt.startsWith('{"jsonrpc":"2.0","id":41')).toBe(true);
      expect(out[1]?.problem).toMatchObject({ id: "req-42" });
      expect(out[2]?.message).toEqual({ jsonrpc: "2.0", id: 43, result: {} });
      // A request's id answers nothing of the reader's: it says it asks; an answer does not.
      expect(out[0]?.problem?.asks).toBeUndefined();
      expect(out[1]?.problem?.asks).toBe(true);
    }
  });

  it("accepts a line of exactly maxMessageBytes", () => {
    const line = `{"a":"${"y".repeat(93)}"}`;
    expect(line.length).toBe(101);
    expect(frame(enc(`${line}\n`), [50], { maxMessageBytes: 101 })[0]?.message).toEqual({ a: "y".repeat(93) });
    expect(frame(enc(`${line}\n`), [50], { maxMessageBytes: 100 })[0]?.problem?.kind).toBe("too-large");
    // Ended with CRLF: the CR is the line break's, whether the line comes whole or in pieces.
    for (const cuts of [[50], [], [101], [102]])
      expect(frame(enc(`${line}\r\n`), cuts, { maxMessageBytes: 101 })[0]?.message, `${cuts}`).toEqual({
        a: "y".repeat(93),
      });
  });

  it("does linear work: every byte scanned once, each line copied at most once", () => {
    const measure = (mib: number): { scanned: number; copied: number; bytes: number } => {
      const payload = enc(serializeMessage({ jsonrpc: "2.0", id: 1, result: { blob: "A".repeat(mib * 1024 * 1024) } }));
      const reader = new JsonLineReader({ maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes });
      const out: Framed[] = [];
      for (let at = 0; at < payload.length; at += 64 * 1024)
        out.push(...reader.push(payload.subarray(at, at + 64 * 1024)));
      expect(out).toHaveLength(1);
      expect((out[0]!.message as { result: { blob: string } }).result.blob.length).toBe(mib * 1024 * 1024);
      return { scanned: reader.stats.bytesScanned, copied: reader.stats.bytesCopied, bytes: payload.length };
    };
    const small = measure(5);
    const large = measure(50);
    for (const run of [small, large]) {
      expect(run.scanned).toBe(run.bytes);
      expect(run.copied).toBeLessThanOrEqual(run.bytes);
    }
    // The counters are the proof (every byte scanned once, none copied twice): a time ratio moved
    // with the machine's load and failed a loaded run with linear code.
  });

  it("discards an oversized line without holding it", () => {
    const reader = new JsonLineReader({ maxMessageBytes: 1024 * 1024 });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 200; i++) expect(reader.push(chunk)).toEqual([]); // 12.5 MiB, nothing buffered
    const out = reader.push(enc('"}\n{"ok":1}\n'));
    expect(out[0]?.problem).toMatchObject({ kind: "too-large", bytes: 200 * 64 * 1024 + 2 });
    expect(out[1]?.message).toEqual({ ok: 1 });
    expect(reader.stats.bytesCopied).toBeLessThan(1024 * 1024);
  });
});

describe("a UTF-8 byte order mark before a message", () => {
  it("is skipped, in one buffer and in pieces; the message's own text is what follows it", () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const one = parseJsonMessage(Buffer.concat([bom, Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}')]));
    expect(one?.message).toEqual({ jsonrpc: "2.0", id: 1, method: "ping" });
    const pieces = [Buffer.concat([bom, Buffer.from('{"jsonrpc":"2.0",')]), Buffer.from('"id":2,"method":"ping"}')];
    const joined = parseJsonPieces(pieces, pieces[0]!.length + pieces[1]!.length);
    expect(joined?.message).toEqual({ jsonrpc: "2.0", id: 2, method: "ping" });
    // Only at the start: inside a message it is not whitespace.
    expect(parseJsonMessage(Buffer.from('{"id":1,\ufeff"x":2}'))?.problem?.kind).toBe("invalid-json");
    // One, not a run: 100 000 of them are a parse error (skipping each by recursion overflowed the stack).
    const run = Buffer.concat([Buffer.alloc(300_000, Buffer.from(bom)), Buffer.from('{"id":1}')]);
    expect(parseJsonMessage(run)?.problem?.kind).toBe("invalid-json");
    expect(parseJsonPieces([run, Buffer.from(" ")], run.length + 1)?.problem?.kind).toBe("invalid-json");
    // A WebSocket text frame, decoded first, has it as U+FEFF. Two marks are one too many.
    expect(parseJsonText('\ufeff{"id":3}', 9).message).toEqual({ id: 3 });
    expect(parseJsonText('\ufeff\ufeff{"id":3}', 9).problem?.kind).toBe("invalid-json");
    const twice = Buffer.concat([bom, bom, Buffer.from('{"id":4}')]);
    expect(parseJsonMessage(twice)?.problem?.kind).toBe("invalid-json");
    expect(parseJsonPieces([twice.subarray(0, 5), twice.subarray(5)], twice.length)?.problem?.kind).toBe(
      "invalid-json",
    );
  });
});

describe("jsonRpcIdHint", () => {
  it("reads ids only where they are unambiguous", () => {
    expect(jsonRpcIdHint('{"jsonrpc":"2.0","id":"a\\"b","result":{', "")?.id).toBe('a"b');
    expect(jsonRpcIdHint('{"result":{"id":3', '"id":9}}}')?.id).toBeUndefined();
    expect(jsonRpcIdHint("xx", 'aaa","jsonrpc":"2.0","id":-5}')?.id).toBe(-5);
    // As written too, for the answers built under it: the number past 2^53 parses rounded.
    expect(jsonRpcIdHint('{"id":12345678901234567890,"result":{', "")).toEqual({
      id: 12345678901234567000,
      idText: "12345678901234567890",
    });
    expect(jsonRpcIdHint("", 'text \\"id\\":5}"}')?.id).toBeUndefined();
  });

  it("reads a number id whole, and an id before a trailing jsonrpc (sorted keys)", () => {
    expect(jsonRpcIdHint('{"jsonrpc":"2.0","id":1.5,"result":{', "")?.id).toBe(1.5);
    expect(jsonRpcIdHint('{"id":1e3,"result":{', "")?.id).toBe(1000);
    expect(jsonRpcIdHint("", 'x"},"id":-2.5E+1}')?.id).toBe(-25);
    expect(jsonRpcIdHint("", 'x"},"id":"s[1]","jsonrpc":"2.0"}')?.id).toBe("s[1]");
    expect(jsonRpcIdHint("", 'x"},"id":4,"jsonrpc":"1.0"}')?.id).toBeUndefined();
  });

  it("takes no part of a number for the id: one not followed by , or }, cut short, or past what a double holds", () => {
    for (const head of [
      '{"id":1.,"result":{',
      '{"id":1e,"result":{',
      '{"jsonrpc":"2.0","id":123',
      '{"id":1E400,"result":{',
    ])
      expect(jsonRpcIdHint(head, "")?.id, head).toBeUndefined();
    // A string is whole once its closing quote is in, wherever the start ends.
    expect(jsonRpcIdHint('{"id":"a]b"', "")?.id).toBe("a]b");
  });
});

describe("JsonLineReader and a line without end", () => {
  const fill = Buffer.alloc(1000, 0x61);
  const start = Buffer.from('{"jsonrpc":"2.0","id":9,"result":{"x":"');

  it("an upstream's (cutPastBytes): reported by its start once cutPastBytes past the limit, then nothing more is read", () => {
    const reader = new JsonLineReader({ maxMessageBytes: 5_000, cutPastBytes: 5_000 });
    const out = [...reader.push(start)];
    for (let i = 0; i < 9; i++) out.push(...reader.push(fill));
    expect(out).toEqual([]);
    out.push(...reader.push(fill), ...reader.push(fill));
    expect(out).toHaveLength(1);
    expect(out[0]!.problem).toMatchObject({ kind: "too-large", id: 9, unended: true });
    expect(reader.push(Buffer.from('"}}\n{"jsonrpc":"2.0","id":10,"result":{}}\n'))).toEqual([]);
    expect(reader.end()).toEqual([]);
  });

  it("a host's (no cutPastBytes): dropped to its end, and the next line read", () => {
    const reader = new JsonLineReader({ maxMessageBytes: 5_000 });
    const out = [...reader.push(start)];
    for (let i = 0; i < 100; i++) out.push(...reader.push(fill));
    out.push(...reader.push(Buffer.from('"}}\n{"jsonrpc":"2.0","id":10,"result":{}}\n')));
    expect(out.map((framed) => framed.problem?.kind ?? (framed.message as { id: number }).id)).toEqual([
      "too-large",
      10,
    ]);
  });
});
