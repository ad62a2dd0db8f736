/**
 * Big payloads read, normalized and written as bytes (src/transports/rawStringParse.ts,
 * src/wire/rawJson.ts, src/transports/wireJson.ts). The contract: with raw strings on, what
 * the host receives and every change record are exactly what the plain path (JSON.parse →
 * engine → JSON.stringify) gives — for the whole corpus, for random messages cut into random
 * pieces, and for invalid input, which must be reported exactly as before.
 */
import { testPolicy } from "../helpers/policy.js";
import { isUtf8 } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeStrictBase64, decodeStrictBase64Ascii } from "../../src/normalize/base64.js";
import { normalizeResult, type Policy } from "../../src/normalize/index.js";
import { jsonUtf8Bytes, nextJsonSpecial } from "../../src/wire/jsonSize.js";
import { allocWithEscapeRoom, isRawJsonString, RawJsonString } from "../../src/wire/rawJson.js";
import { JsonLineReader, type Framed } from "../../src/transports/lineFraming.js";
import { isUtf8Pieces } from "../../src/transports/rawStringParse.js";
import { encodeWire } from "../../src/transports/wireJson.js";
import { loadCorpus, loadMediaCorpus, resultWithEntry, type EntryMethod } from "../fixtures/corpus/index.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";

/** Frames `line` (with its LF) fed in pieces of the given sizes (cycled). */
function frame(line: Buffer, sizes: readonly number[], rawStringBytes?: number): Framed[] {
  const reader = new JsonLineReader({ rawStringBytes, maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes });
  const out: Framed[] = [];
  let at = 0;
  for (let k = 0; at < line.length; k++) {
    const size = sizes[k % sizes.length]!;
    out.push(...reader.push(Buffer.from(line.subarray(at, at + size))));
    at += size;
  }
  out.push(...reader.end());
  return out;
}

const wireText = (value: unknown): string => {
  const wire = encodeWire(value);
  return typeof wire === "string" ? wire : wire.join().toString("utf8");
};

/** Raw path and plain path of one message through the engine: the wire text and the records. */
function bothPaths(
  message: { result: unknown },
  method: string,
  policy: Policy,
  sizes: readonly number[],
  minBytes: number,
) {
  const line = Buffer.from(`${JSON.stringify(message)}\n`, "utf8");
  const [rawFramed] = frame(line, sizes, minBytes);
  const [plainFramed] = frame(line, sizes);
  const raw = normalizeResult(method, (rawFramed!.message as { result: unknown }).result, policy);
  const plain = normalizeResult(method, (plainFramed!.message as { result: unknown }).result, policy);
  return {
    raw: { wire: wireText(raw.value), changes: raw.changes },
    plain: { wire: JSON.stringify(plain.value), changes: plain.changes },
    rawMessage: rawFramed!.message,
  };
}

function containsRaw(value: unknown): boolean {
  if (isRawJsonString(value)) return true;
  if (typeof value !== "object" || value === null) return false;
  return Object.values(value).some(containsRaw);
}

describe("raw strings: the corpus", () => {
  const methods: EntryMethod[] = ["resources/read", "tools/call", "prompts/get"];
  it.each(methods)(
    "every resource case in a %s result: same wire bytes and records as the plain path, in pieces of every size",
    (method) => {
      const corpus = loadCorpus();
      expect(corpus.length).toBeGreaterThan(100);
      let sawRaw = 0;
      for (const c of corpus) {
        const policy = testPolicy(c.policy);
        const { result } = resultWithEntry(method, c.input);
        // Byte-sized pieces for every small case; the few multi-megabyte cases in pipe-sized ones.
        const small = JSON.stringify(c.input).length < 100_000;
        for (const sizes of small ? [[1], [7, 3, 64]] : [[65_536, 1021]]) {
          const both = bothPaths({ result }, method, policy, sizes, 2);
          if (containsRaw(both.rawMessage)) sawRaw++;
          expect(both.raw.wire, c.name).toBe(both.plain.wire);
          expect(both.raw.changes, c.name).toEqual(both.plain.changes);
        }
      }
      expect(sawRaw).toBeGreaterThan(corpus.length);
    },
  );

  it("every media case: same wire bytes and records", () => {
    const media = loadMediaCorpus();
    expect(media.length).toBeGreaterThan(50);
    for (const c of media) {
      const both = bothPaths({ result: { content: [c.input] } }, "tools/call", testPolicy(c.policy), [5, 11], 2);
      expect(containsRaw(both.rawMessage), c.name).toBe(true);
      expect(both.raw.wire, c.name).toBe(both.plain.wire);
      expect(both.raw.changes, c.name).toEqual(both.plain.changes);
    }
  });
});

describe("raw strings: random messages in random pieces", () => {
  const payload = fc.oneof(
    fc.string({ unit: "binary", maxLength: 60 }),
    fc.string({ unit: "grapheme", maxLength: 60 }),
    fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b).toString("base64")),
    fc.string({ unit: "grapheme", maxLength: 60 }).map((s) => Buffer.from(s, "utf8").toString("base64")),
    fc.string({ maxLength: 60 }).map((s) =>
      Buffer.from(s, "utf8")
        .toString("base64")
        .replace(/(.{8})/g, "$1\n"),
    ),
  );
  const mime = fc.constantFrom(
    undefined,
    "text/plain",
    "application/octet-stream",
    "image/png",
    "text/plain; charset=utf-16",
    "application/json",
  );
  const entry = fc
    .record({
      uri: fc.constantFrom("file:///a.txt", "file:///b.png", "x:y"),
      mimeType: mime,
      kind: fc.constantFrom("blob", "text"),
      payload,
    })
    .map(({ uri, mimeType, kind, payload: p }) => ({
      uri,
      ...(mimeType === undefined ? {} : { mimeType }),
      [kind]: p,
    }));

  it("resources/read: the raw path equals the plain path (wire bytes, records)", () => {
    fc.assert(
      fc.property(
        fc.array(entry, { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 2, max: 30 }),
        (contents, sizes, minBytes) => {
          const both = bothPaths(
            { result: { contents, _meta: { note: "kept" } } },
            "resources/read",
            testPolicy(),
            sizes,
            minBytes,
          );
          expect(both.raw.wire).toBe(both.plain.wire);
          expect(both.raw.changes).toEqual(both.plain.changes);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("tool results with text, image and resource blocks: the raw path equals the plain path", () => {
    const block = fc.oneof(
      payload.map((text) => ({ type: "text", text })),
      fc
        .record({ mimeType: mime, data: payload })
        .map(({ mimeType, data }) => ({ type: "image", data, ...(mimeType === undefined ? {} : { mimeType }) })),
      entry.map((resource) => ({ type: "resource", resource })),
    );
    fc.assert(
      fc.property(
        fc.array(block, { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 5 }),
        (content, sizes) => {
          const both = bothPaths({ result: { content, isError: false } }, "tools/call", testPolicy(), sizes, 2);
          expect(both.raw.wire).toBe(both.plain.wire);
          expect(both.raw.changes).toEqual(both.plain.changes);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("raw strings: what is not cut out", () => {
  it("only blob/text/data member values at least minBytes long are raw; names, ids, methods and other members stay strings", () => {
    const long = "A".repeat(40);
    const message = {
      jsonrpc: "2.0",
      id: long,
      result: { contents: [{ uri: long, blob: long, text2: long }], text: [long], data: long, message: long },
    };
    const [framed] = frame(Buffer.from(`${JSON.stringify(message)}\n`), [9], 10);
    const got = framed!.message as {
      id: unknown;
      result: { contents: Array<Record<string, unknown>>; text: unknown[]; data: unknown; message: unknown };
    };
    expect(got.id).toBe(long);
    expect(got.result.contents[0]!.uri).toBe(long);
    expect(isRawJsonString(got.result.contents[0]!.blob)).toBe(true);
    expect(got.result.contents[0]!.text2).toBe(long);
    expect(got.result.text[0]).toBe(long);
    expect(isRawJsonString(got.result.data)).toBe(true);
    expect(got.result.message).toBe(long);
    // Below the threshold: plain strings.
    const [small] = frame(Buffer.from(`${JSON.stringify(message)}\n`), [9], 100);
    expect(containsRaw(small!.message)).toBe(false);
    expect(small!.message).toEqual(message);
  });

  it("a raw string is the string it stands for wherever it goes: JSON.stringify and value()", () => {
    const text = 'line "one"\n\ttab \\ é 😀 \u0001';
    const [framed] = frame(Buffer.from(`${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { text } })}\n`), [3], 2);
    const raw = (framed!.message as { result: { text: unknown } }).result.text;
    expect(isRawJsonString(raw)).toBe(true);
    expect((raw as RawJsonString).value()).toBe(text);
    expect(JSON.stringify({ text: raw })).toBe(JSON.stringify({ text }));
    expect(JSON.parse(wireText({ text: raw }))).toEqual({ text });
  });
});

describe("raw strings: invalid input is reported exactly as the plain path reports it", () => {
  const big = "QUJD".repeat(20);
  const lines: Array<[string, Buffer]> = [
    [
      "invalid UTF-8 inside a long literal",
      Buffer.concat([
        Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"blob":"${big}`),
        Buffer.from([0xc3, 0x28]),
        Buffer.from(`${big}"}}\n`),
      ]),
    ],
    [
      "a cut multi-byte character at the very end",
      Buffer.concat([
        Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"text":"${big}"}}`),
        Buffer.from([0xe6, 0x97]),
        Buffer.from("\n"),
      ]),
    ],
    [
      "a raw control character inside a long literal",
      Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"text":"${big}\u0001${big}"}}\n`),
    ],
    ["a raw tab inside a long literal", Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"text":"${big}\t${big}"}}\n`)],
    ["an unknown escape", Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"text":"${big}\\x41${big}"}}\n`)],
    ["a short \\u escape", Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"text":"${big}\\u12G4${big}"}}\n`)],
    ["an unterminated literal", Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"blob":"${big}}}\n`)],
    [
      "broken structure around a long literal",
      Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"blob":"${big}" "x"}}\n`),
    ],
    ["a duplicate member", Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"blob":"${big}","blob":"${big}B"}}\n`)],
    ["a top-level string", Buffer.from(`"${big}"\n`)],
  ];
  it.each(lines)("%s", (_name, line) => {
    for (const sizes of [[1], [13], [line.length]]) {
      const plain = frame(line, sizes);
      const raw = frame(line, sizes, 8);
      expect(raw).toEqual(plain);
    }
  });
});

describe("raw strings: the pieces", () => {
  it("isUtf8Pieces equals isUtf8 of the joined bytes, for any cut", () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)),
      fc.string({ unit: "grapheme", maxLength: 30 }).map((s) => Buffer.from(s, "utf8")),
      fc
        .tuple(
          fc.string({ unit: "grapheme", maxLength: 20 }),
          fc.uint8Array({ maxLength: 3 }),
          fc.string({ unit: "grapheme", maxLength: 20 }),
        )
        .map(([a, b, c]) => Buffer.concat([Buffer.from(a), Buffer.from(b), Buffer.from(c)])),
    );
    fc.assert(
      fc.property(bytes, fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 4 }), (buf, sizes) => {
        const pieces: Buffer[] = [];
        for (let at = 0, k = 0; at < buf.length; k++) {
          const size = sizes[k % sizes.length]!;
          pieces.push(buf.subarray(at, at + size));
          at += size;
        }
        expect(isUtf8Pieces(pieces)).toBe(isUtf8(buf));
      }),
      { numRuns: 2000 },
    );
  });

  it("decodeStrictBase64Ascii equals decodeStrictBase64 for any input and any cut", () => {
    const input = fc.oneof(
      fc.uint8Array({ maxLength: 50 }).map((b) => Buffer.from(b).toString("base64")),
      fc.uint8Array({ maxLength: 50 }).map((b) => Buffer.from(b).toString("base64").replace(/=+$/, "")),
      fc.uint8Array({ maxLength: 50 }).map((b) => Buffer.from(b).toString("base64url")),
      fc.string({ unit: fc.constantFrom(..."ABCDabcd0189+/=-_ \n!"), maxLength: 40 }),
    );
    fc.assert(
      fc.property(input, fc.integer({ min: 1, max: 9 }), (text, size) => {
        const bytes = Buffer.from(text, "ascii");
        const parts: Buffer[] = [];
        for (let at = 0; at < bytes.length; at += size) parts.push(bytes.subarray(at, at + size));
        const expected = decodeStrictBase64(text);
        const got = decodeStrictBase64Ascii(parts.length === 0 ? [Buffer.alloc(0)] : parts);
        expect(got === null ? null : Buffer.from(got)).toEqual(expected === null ? null : Buffer.from(expected));
      }),
      { numRuns: 2000 },
    );
  });

  /** Text with long plain runs between the bytes JSON escapes: what the four-at-a-time scans skip. */
  const runsText = fc
    .array(
      fc.tuple(
        fc.nat({ max: 300 }).map((n) => "a".repeat(n)),
        fc.constantFrom("", "\n", '"', "\\", "\u0001", "\u001f", "\t", "é", "😀", "日本", "x"),
      ),
      { maxLength: 12 },
    )
    .map((parts) => parts.flat().join(""));

  it("long runs, any alignment: the JSON size, the escaped literal and the next escaped byte are what JSON.stringify says", () => {
    fc.assert(
      fc.property(runsText, fc.nat({ max: 7 }), (text, offset) => {
        const utf8 = Buffer.from(text, "utf8");
        // The same bytes at every alignment of the memory under them.
        const placed = Buffer.alloc(offset + utf8.length + 8).subarray(offset, offset + utf8.length);
        utf8.copy(placed);
        const literal = JSON.stringify(text);
        expect(jsonUtf8Bytes(placed)).toBe(Buffer.byteLength(literal));
        const naive = (from: number): number => {
          for (let i = from; i < placed.length; i++)
            if (placed[i]! < 0x20 || placed[i] === 0x22 || placed[i] === 0x5c) return i;
          return placed.length;
        };
        for (const from of [0, offset, placed.length >> 1])
          if (from <= placed.length) expect(nextJsonSpecial(placed, from, placed.length)).toBe(naive(from));
        const roomy = allocWithEscapeRoom(utf8.length);
        utf8.copy(roomy);
        expect(
          RawJsonString.ofUtf8(roomy)
            .parts.map((part) => part.toString("utf8"))
            .join(""),
        ).toBe(literal);
        expect(
          RawJsonString.ofUtf8(Buffer.from(placed))
            .parts.map((part) => part.toString("utf8"))
            .join(""),
        ).toBe(literal);
      }),
      { numRuns: 1000 },
    );
  });

  it("long literals with escapes anywhere, cut anywhere: the raw path reads what JSON.parse reads", () => {
    fc.assert(
      fc.property(
        runsText,
        fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 4 }),
        (text, sizes) => {
          const message = {
            jsonrpc: "2.0",
            id: 1,
            result: { contents: [{ uri: "x:/", text, blob: Buffer.from(text).toString("base64") }] },
          };
          const line = Buffer.from(`${JSON.stringify(message)}\n`);
          const framed = frame(line, sizes, 1);
          expect(framed).toHaveLength(1);
          // Read raw, not handed to the plain path after a doubt (which would hide a missed byte).
          const entry = (framed[0]!.message as { result: { contents: Record<string, unknown>[] } }).result.contents[0]!;
          if (text !== "") expect([isRawJsonString(entry.text), isRawJsonString(entry.blob)]).toEqual([true, true]);
          expect(JSON.parse(JSON.stringify(framed[0]!.message))).toEqual(message);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a big blob decoded from many pieces is the bytes, and its text is escaped in place exactly as JSON.stringify escapes it", () => {
    const text = `${'line "q" \\ é 日本 😀 \u0001\u001f\t\r\n'.repeat(5000)}end`;
    const b64 = Buffer.from(Buffer.from(text, "utf8").toString("base64"), "ascii");
    const parts: Buffer[] = [];
    for (let at = 0; at < b64.length; at += 65_537) parts.push(b64.subarray(at, at + 65_537));
    const bytes = decodeStrictBase64Ascii(parts)!;
    expect(bytes.toString("utf8")).toBe(text);
    const raw = RawJsonString.ofUtf8(bytes);
    expect(raw.parts).toHaveLength(1);
    expect(raw.parts[0]!.toString("utf8")).toBe(JSON.stringify(text));
    expect(raw.byteLength).toBe(Buffer.byteLength(JSON.stringify(text)));
    // Bytes without room (any other buffer) are copied, then escaped the same way.
    const plain = 'a\nb"c\u0001 é 😀 \\';
    expect(RawJsonString.ofUtf8(Buffer.from(plain, "utf8")).parts[0]!.toString("utf8")).toBe(JSON.stringify(plain));
    // A small buffer with room is escaped in place the same way.
    const other = allocWithEscapeRoom(3);
    other.write("a\nb", "latin1");
    expect(RawJsonString.ofUtf8(other).parts[0]!.toString()).toBe('"a\\nb"');
  });
});

describe("raw strings from HTTP and WebSocket upstreams", () => {
  const text = `${'line "q" é 日本 😀\n'.repeat(400)}end`;
  const answer = (id: unknown) => ({
    jsonrpc: "2.0",
    id,
    result: {
      contents: [{ uri: "file:///a.txt", mimeType: "text/plain", blob: Buffer.from(text).toString("base64") }],
      _meta: { text: "short" },
    },
  });

  it("a fragmented WebSocket message: the payload is read raw from its fragments and written back byte for byte", async () => {
    const { WebSocketServer } = await import("ws");
    const { WebSocketUpstreamTransport } = await import("../../src/transports/upstream/wsUpstream.js");
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1", handleProtocols: () => "mcp" });
    await new Promise((resolve) => wss.once("listening", resolve));
    wss.on("connection", (socket) =>
      socket.on("message", (data) => {
        const { id } = JSON.parse(String(data)) as { id: unknown };
        const wire = Buffer.from(JSON.stringify(answer(id)));
        // Three fragments of one text message, cut mid-literal.
        socket.send(wire.subarray(0, 100), { fin: false });
        socket.send(wire.subarray(100, 2000), { fin: false });
        socket.send(wire.subarray(2000), { fin: true });
      }),
    );
    const transport = new WebSocketUpstreamTransport({
      url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}/`,
      rawStringBytes: 64,
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    const got = new Promise<unknown>((resolve) => (transport.onmessage = resolve));
    try {
      await transport.start();
      await transport.send({ jsonrpc: "2.0", id: 5, method: "resources/read", params: { uri: "file:///a.txt" } });
      const message = (await got) as { result: { contents: Array<{ blob: unknown }>; _meta: { text: unknown } } };
      expect(isRawJsonString(message.result.contents[0]!.blob)).toBe(true);
      expect(message.result._meta.text).toBe("short");
      expect(wireText(message)).toBe(JSON.stringify(answer(5)));
      const normalized = normalizeResult("resources/read", message.result, testPolicy());
      expect(JSON.parse(wireText(normalized.value))).toEqual({
        contents: [{ uri: "file:///a.txt", mimeType: "text/plain", text }],
        _meta: { text: "short" },
      });
    } finally {
      await transport.close();
      await new Promise((resolve) => wss.close(resolve));
    }
  });

  it("a streamable HTTP JSON body in many chunks: the payload is read raw from the chunks", async () => {
    const { createServer } = await import("node:http");
    const { StreamableHttpUpstreamTransport } = await import("../../src/transports/upstream/streamableHttpUpstream.js");
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        // Only the POST of the request is answered here (the transport may also GET or DELETE).
        if (req.method !== "POST") return void res.writeHead(405).end();
        const { id } = JSON.parse(body) as { id: unknown };
        const wire = Buffer.from(JSON.stringify(answer(id)));
        res.writeHead(200, { "content-type": "application/json", "content-length": wire.length });
        for (let at = 0; at < wire.length; at += 777) res.write(wire.subarray(at, at + 777));
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const transport = new StreamableHttpUpstreamTransport({
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`,
      rawStringBytes: 64,
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    const got = new Promise<unknown>((resolve) => (transport.onmessage = resolve));
    try {
      await transport.start();
      await transport.send({ jsonrpc: "2.0", id: "r", method: "resources/read", params: { uri: "file:///a.txt" } });
      const message = (await got) as { result: { contents: Array<{ blob: unknown }> } };
      expect(isRawJsonString(message.result.contents[0]!.blob)).toBe(true);
      expect(wireText(message)).toBe(JSON.stringify(answer("r")));
    } finally {
      await transport.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
