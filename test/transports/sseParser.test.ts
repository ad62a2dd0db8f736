import { describe, expect, it } from "vitest";
import { SseParser, type SseItem } from "../../src/transports/sseParser.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";

const enc = (s: string): Buffer => Buffer.from(s, "utf8");

function parse(bytes: Buffer, cuts: number[] = [], options?: { maxEventBytes?: number }): SseItem[] {
  const parser = new SseParser({ maxEventBytes: options?.maxEventBytes ?? DEFAULT_LIMITS.maxMessageBytes });
  const out: SseItem[] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    out.push(...parser.push(bytes.subarray(at, cut)));
    at = cut;
  }
  out.push(...parser.end());
  return out;
}

describe("SseParser (WHATWG event stream rules)", () => {
  const stream = enc(
    "\ufeff: keep-alive comment\r\n" +
      "event: message\r\n" +
      'data: {"jsonrpc":"2.0","id":1,"result":{"t":"é😀"}}\r\n' +
      "id: ev-1\r\n\r\n" +
      "data: first\rdata:second\r\rdata:  two spaces\n\n" +
      "event: endpoint\ndata: /messages?sessionId=abc\n\n" +
      "retry: 1500\nretry: soon\n" +
      "data\n\n" +
      "id: with\u0000nul\nunknown: field\ndata: x\n\n" +
      "event: lost\ndata: no blank line at the end",
  );
  const expected: SseItem[] = [
    { event: { type: "message", data: '{"jsonrpc":"2.0","id":1,"result":{"t":"é😀"}}', lastEventId: "ev-1" } },
    { event: { type: "message", data: "first\nsecond", lastEventId: "ev-1" } },
    { event: { type: "message", data: " two spaces", lastEventId: "ev-1" } },
    { event: { type: "endpoint", data: "/messages?sessionId=abc", lastEventId: "ev-1" } },
    { retry: 1500 },
    { event: { type: "message", data: "", lastEventId: "ev-1" } },
    { event: { type: "message", data: "x", lastEventId: "ev-1" } },
  ];

  it("parses fields, comments, CRLF / CR / LF, BOM, retry, id rules", () => {
    expect(parse(stream)).toEqual(expected);
  });

  it("gives the same events at every chunk boundary (CR|LF split, UTF-8 split)", () => {
    for (let cut = 0; cut <= stream.length; cut++) expect(parse(stream, [cut])).toEqual(expected);
  });

  it("gives the same events byte-at-a-time", () => {
    expect(
      parse(
        stream,
        Array.from({ length: stream.length }, (_, i) => i),
      ),
    ).toEqual(expected);
  });

  it("dispatches nothing for an event without data", () => {
    expect(parse(enc("event: ping\nid: 7\n\n: comment\n\n"))).toEqual([]);
  });

  it("reports an event over maxEventBytes with its JSON-RPC id, then goes on", () => {
    const big = `data: {"jsonrpc":"2.0","id":"r-9","result":{"text":"${"z".repeat(10_000)}"}}\n\n`;
    const wire = enc(`${big}data: {"ok":1}\n\n`);
    for (const cut of [3, 200, 5000, 10_050]) {
      const out = parse(wire, [cut], { maxEventBytes: 1000 });
      expect(out[0]?.problem).toMatchObject({ kind: "too-large", type: "message", id: "r-9" });
      expect(out[0]?.problem?.bytes).toBe(big.length - "data: ".length - 2);
      expect(out[1]).toEqual({ event: { type: "message", data: '{"ok":1}', lastEventId: "" } });
    }
  });

  it("counts multi-line data against the limit", () => {
    const out = parse(enc(`data: {"id":5,\ndata: "a":"${"q".repeat(600)}",\ndata: "b":"${"q".repeat(600)}"}\n\n`), [], {
      maxEventBytes: 1000,
    });
    expect(out[0]?.problem).toMatchObject({ kind: "too-large", id: 5 });
  });

  it("keeps an over-limit event's two ends across its data lines: the start tells an answer, the end its id", () => {
    const many = Array.from({ length: 400 }, (_, i) => `data: "k${i}":"${"m".repeat(20)}",`).join("\n");
    const shapes: Array<[string, Record<string, unknown>]> = [
      // The answer's start is in its first lines; its id in its last.
      [`data: {\ndata: "jsonrpc":"2.0",\ndata: "result":{\n${many}\ndata: "z":1},\ndata: "id":"a[1]"}`, { id: "a[1]" }],
      // Its start is a request's: the peer's own, whatever id its end shows.
      [
        `data: {"jsonrpc":"2.0",\ndata: "params":{\n${many}\ndata: "z":1},"method":"x",\ndata: "id":7}`,
        { id: 7, asks: true },
      ],
    ];
    for (const [wire, expected] of shapes)
      for (const cut of [0, 50, 5000]) {
        const out = parse(enc(`${wire}\n\n`), cut === 0 ? [] : [cut], { maxEventBytes: 2000 });
        expect(out[0]?.problem, wire.slice(0, 40)).toMatchObject({ kind: "too-large", ...expected });
        expect(out[0]?.problem?.asks).toBe(expected.asks);
        expect(out[0]?.problem?.excerpt.startsWith("{")).toBe(true);
      }
  });

  it("an over-limit line first on a stream after a BOM, or whose end comes in pieces of a few bytes, is still reported with its id", () => {
    const answer = `{"jsonrpc":"2.0","result":{"t":"${"r".repeat(300)}"},"id":77}`;
    const withBom = enc(`\ufeffdata: ${answer}\n\n`);
    expect(parse(withBom, [], { maxEventBytes: 100 })[0]?.problem).toMatchObject({ kind: "too-large", id: 77 });
    // Over the line limit by three bytes, its last ones read two at a time.
    const wire = enc(`data: ${answer}\n\n`);
    const cuts = [
      wire.length - 12,
      wire.length - 10,
      wire.length - 8,
      wire.length - 6,
      wire.length - 4,
      wire.length - 2,
    ];
    const over = answer.length - 3;
    expect(parse(wire, cuts, { maxEventBytes: over })[0]?.problem).toMatchObject({ kind: "too-large", id: 77 });
  });

  it("reports data that is not UTF-8 rather than replacing it with U+FFFD", () => {
    const wire = Buffer.concat([enc('data: {"t":"'), Buffer.from([0xc3, 0x28]), enc('"}\n\ndata: ok\n\n')]);
    const out = parse(wire);
    expect(out[0]?.problem?.kind).toBe("invalid-utf8");
    expect(out[1]?.event?.data).toBe("ok");
  });

  it("parses a 50 MiB event in 64 KiB chunks with linear work", () => {
    const measure = (mib: number): { ms: number; scanned: number; copied: number; bytes: number } => {
      const body = `{"jsonrpc":"2.0","id":1,"result":{"blob":"${"B".repeat(mib * 1024 * 1024)}"}}`;
      const wire = enc(`event: message\nid: 1\ndata: ${body}\n\n`);
      const parser = new SseParser({ maxEventBytes: DEFAULT_LIMITS.maxMessageBytes });
      const out: SseItem[] = [];
      const started = performance.now();
      for (let at = 0; at < wire.length; at += 64 * 1024) out.push(...parser.push(wire.subarray(at, at + 64 * 1024)));
      const ms = performance.now() - started;
      expect(out).toHaveLength(1);
      expect(out[0]?.event?.data.length).toBe(body.length);
      return { ms, scanned: parser.stats.bytesScanned, copied: parser.stats.bytesCopied, bytes: wire.length };
    };
    const small = measure(5);
    const large = measure(50);
    for (const run of [small, large]) {
      // LF and CR are each searched for once per byte at most.
      expect(run.scanned).toBeLessThanOrEqual(2 * run.bytes);
      expect(run.copied).toBeLessThanOrEqual(run.bytes);
    }
    console.log(`sseParser: 5 MiB ${small.ms.toFixed(0)} ms, 50 MiB ${large.ms.toFixed(0)} ms (64 KiB chunks)`);
    expect(large.ms / Math.max(small.ms, 1)).toBeLessThan(50);
  });
});

describe("SseParser and an event without end", () => {
  // Cut once 10,000 bytes past the limit.
  const max = 10_000;
  const cutPastBytes = 10_000;
  const feed = (parser: SseParser, chunks: Iterable<Buffer>): SseItem[] => {
    const out: SseItem[] = [];
    for (const chunk of chunks) out.push(...parser.push(chunk));
    return out;
  };

  it("one data line run on past the slack: reported at once by its start (its id), then nothing more is read", () => {
    const parser = new SseParser({ maxEventBytes: max, cutPastBytes });
    const start = enc('id: e1\ndata: {"jsonrpc":"2.0","id":7,"result":{"x":"');
    const filler = Buffer.alloc(1000, 0x61);
    const before = feed(parser, [start, ...Array(19).fill(filler)]);
    expect(before).toEqual([]);
    const at = feed(parser, [filler, filler]);
    expect(at).toHaveLength(1);
    expect(at[0]!.problem).toMatchObject({ kind: "too-large", type: "message", id: 7, unended: true });
    expect(at[0]!.problem!.bytes).toBeGreaterThan(2 * max);
    // What comes after — even a whole event — is not read: the stream is over.
    expect(feed(parser, [enc('"}}\n\ndata: {"jsonrpc":"2.0","id":8,"result":{}}\n\n')])).toEqual([]);
    expect(parser.end()).toEqual([]);
  });

  it("many data lines past the slack, no blank line: reported and cut too; a large event that ends is not", () => {
    const line = enc(`data: ${"b".repeat(999)}\n`);
    const ended = new SseParser({ maxEventBytes: max, cutPastBytes });
    const items = feed(ended, [...Array(15).fill(line), enc("\n")]);
    expect(items).toHaveLength(1);
    expect(items[0]!.problem).toMatchObject({ kind: "too-large" });
    expect(items[0]!.problem!.unended).toBeUndefined();
    const endless = new SseParser({ maxEventBytes: max, cutPastBytes });
    const cut = feed(endless, Array(25).fill(line));
    expect(cut.map((item) => item.problem?.unended)).toEqual([true]);
  });

  it("an endless comment line is cut as well: dropping it would go on as long as the server sends", () => {
    const parser = new SseParser({ maxEventBytes: max, cutPastBytes });
    const cut = feed(parser, [enc(": "), ...Array(25).fill(Buffer.alloc(1000, 0x20))]);
    expect(cut).toHaveLength(1);
    expect(cut[0]!.problem).toMatchObject({ kind: "too-large", unended: true });
    expect(cut[0]!.problem!.id).toBeUndefined();
  });
});

describe("SseParser's cutPastBytes (limits.maxSkippedMessageBytes)", () => {
  const chunk = Buffer.alloc(1024 * 1024, 0x61);

  it("an event many times too large that ends within it is skipped and the stream goes on; one running past it is cut", () => {
    const parser = new SseParser({ maxEventBytes: 1000, cutPastBytes: 8 * chunk.length });
    const items: SseItem[] = [...parser.push(enc('data: {"id":3,"result":"'))];
    for (let i = 0; i < 7; i++) items.push(...parser.push(chunk));
    items.push(...parser.push(enc('"}\n\ndata: {"ok":1}\n\n')));
    expect(items.map((item) => item.problem?.unended ?? item.event?.data)).toEqual([undefined, '{"ok":1}']);
    expect(items[0]!.problem).toMatchObject({ kind: "too-large", id: 3 });
    const endless = new SseParser({ maxEventBytes: 1000, cutPastBytes: 8 * chunk.length });
    const cut: SseItem[] = [...endless.push(enc('data: {"id":4,"result":"'))];
    for (let i = 0; i < 9; i++) cut.push(...endless.push(chunk));
    expect(cut.map((item) => item.problem?.unended)).toEqual([true]);
  });

  it("absent: an event is dropped to its end however long it runs", () => {
    const parser = new SseParser({ maxEventBytes: 1000 });
    const items: SseItem[] = [...parser.push(enc('data: {"id":5,"result":"'))];
    for (let i = 0; i < 40; i++) items.push(...parser.push(chunk));
    expect(items).toEqual([]);
    items.push(...parser.push(enc('"}\n\ndata: {"ok":2}\n\n')));
    expect(items.map((item) => item.problem?.unended ?? item.event?.data)).toEqual([undefined, '{"ok":2}']);
  });
});
