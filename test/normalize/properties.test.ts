/**
 * Properties of the engine over arbitrary entries:
 * never throws, idempotent, lossless, `_meta`/unknown keys/key order survive, a blob that stays a
 * blob keeps its exact string, no U+FFFD introduced; media blocks keep `data` byte-identical.
 * Runs are bounded (numRuns, small payloads) to stay within a few seconds.
 */
import { testPolicy } from "../helpers/policy.js";
import fc from "fast-check";
import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { corpusFile } from "../fixtures/corpus/index.js";
import {
  normalizeMediaBlock,
  normalizeResourceEntry,
  normalizeResult,
  type ChangeRecord,
} from "../../src/normalize/index.js";
import { decodeStrictBase64 } from "../../src/normalize/base64.js";
import { canonicalCharset, decodingCharset } from "../../src/normalize/charset.js";

type Entry = Record<string, unknown>;

const SIGNED = ["media/tiny.png", "media/tiny.jpg", "binary/tiny.pdf", "binary/hello.txt.gz", "media/tiny.wav"].map(
  (f) => corpusFile(f).subarray(0, 64),
);
const BOMS = [
  Buffer.from([0xef, 0xbb, 0xbf]),
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0xfe, 0xff]),
  Buffer.from([0xff, 0xfe, 0, 0]),
  Buffer.from([0, 0, 0xfe, 0xff]),
];

/** Bytes likely to hit every row: random, signed, BOM-prefixed, UTF-8/UTF-16 text. */
const bytesArb = fc
  .oneof(
    fc.uint8Array({ maxLength: 64 }),
    fc
      .tuple(fc.constantFrom(...SIGNED), fc.uint8Array({ maxLength: 16 }))
      .map(([head, tail]) => Buffer.concat([head, tail])),
    fc
      .tuple(
        fc.constantFrom(...BOMS),
        fc.string({ unit: "grapheme", maxLength: 16 }),
        fc.constantFrom("utf8", "utf16le", "latin1"),
      )
      .map(([bom, s, enc]) => Buffer.concat([bom, Buffer.from(s, enc as BufferEncoding)])),
    fc.string({ unit: "grapheme", maxLength: 32 }).map((s) => Buffer.from(s, "utf8")),
    fc.string({ unit: "grapheme", maxLength: 16 }).map((s) => Buffer.from(s, "utf16le")),
  )
  .map((b) => Buffer.from(b));

/** base64 of those bytes, sometimes MIME-wrapped, unpadded, or broken. */
const blobArb = bytesArb.chain((bytes) => {
  const b64 = bytes.toString("base64");
  return fc.oneof(
    fc.constant(b64),
    fc.constant(b64.replace(/=+$/, "")),
    fc.constant((b64.match(/.{1,8}/g) ?? []).join("\r\n")),
    fc.constant(b64.replace(/\+/g, "-").replace(/\//g, "_")),
    fc.string({ maxLength: 24 }),
  );
});

/** Text: any code units (lone surrogates included), binary strings, surrogate-escaped bytes. */
const textArb = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 32 }),
  fc.string({ unit: "binary", maxLength: 32 }),
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 32 }).map((units) => String.fromCharCode(...units)),
  bytesArb.map((b) => b.toString("latin1")),
  bytesArb.map((b) => Array.from(b, (x) => String.fromCharCode(x < 0x80 ? x : 0xdc00 + x)).join("")),
);

const mimeArb = fc.oneof(
  fc.constantFrom(
    "text/plain",
    "TEXT/Plain",
    "text/markdown; variant=GFM",
    "application/octet-stream",
    "binary/octet-stream",
    "application/unknown",
    "application/json",
    "image/png",
    "IMAGE/PNG",
    "image/jpeg; q=1",
    "application/pdf; version=1.7",
    "audio/wav",
    "text/plain; charset=iso-8859-1",
    "text/plain; charset=Shift_JIS",
    "text/plain; charset=utf-16le",
    "text/plain; charset=UTF-8",
    'text/plain; charset="a;b"',
    "application/vnd.api+json",
    "image/svg+xml",
    "text/plain; charset=nope",
    "",
    "not a type",
    "/",
    "a/",
    ";charset=latin1",
  ),
  fc.string({ maxLength: 16 }),
  fc.constant(undefined),
  fc.constant(null),
  fc.integer(),
);

const uriArb = fc.oneof(
  fc.constantFrom(
    "file:///a/b.md",
    "file:///a/README",
    "file:///x.PNG",
    "https://h/p.json?x=1#f",
    "https://h/dl?f=a.png",
    "data:text/plain;base64,aGk=",
    "mem://x",
    "file:///a/%2e%zz",
    "file:///a.",
    "",
    "file:///a/b.tar.gz",
  ),
  fc.webUrl(),
  fc.string({ maxLength: 16 }),
  fc.constant(undefined),
  fc.integer(),
);

const extraKeys = fc.dictionary(
  fc.oneof(
    fc.constantFrom("__proto__", "_meta", "annotations", "name", "title", "constructor", "toString"),
    fc.string({ maxLength: 6 }),
  ),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 4 },
);

/** An entry as JSON.parse would build it: own keys only, `__proto__` a plain key, random key order. */
const entryArb = fc
  .tuple(
    fc.oneof(
      blobArb.map((v) => ["blob", v] as const),
      textArb.map((v) => ["text", v] as const),
    ),
    mimeArb,
    uriArb,
    extraKeys,
    fc.nat(),
  )
  .map(([[key, payload], mimeType, uri, extra, order]) => {
    const pairs: Array<[string, unknown]> = [];
    if (uri !== undefined) pairs.push(["uri", uri]);
    if (mimeType !== undefined) pairs.push(["mimeType", mimeType]);
    for (const [k, v] of Object.entries(extra))
      if (k !== "uri" && k !== "mimeType" && k !== "text" && k !== "blob") pairs.push([k, v]);
    pairs.splice(order % (pairs.length + 1), 0, [key, payload]);
    return JSON.parse(JSON.stringify(Object.fromEntries(pairs))) as Entry;
  });

const policyArb = fc.record(
  {
    charset: fc.constantFrom("transcode" as const, "preserve" as const),
    unwrapBlobs: fc.boolean(),
    transcode: fc.boolean(),
    reencodeBinaryText: fc.boolean(),
    fixMime: fc.boolean(),
  },
  { requiredKeys: [] },
);

/** PROPERTY_RUNS=20000 for a deeper hunt; the default keeps the file at a couple of seconds. */
/** ES2024's String.prototype.isWellFormed, present in Node 20 but not in the ES2023 lib. */
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

const RUNS = { numRuns: Number(process.env.PROPERTY_RUNS ?? 600) };
const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v), "utf8");

function payloadBytes(entry: Entry): Buffer | null {
  if (typeof entry.blob === "string") return decodeStrictBase64(entry.blob);
  return null;
}

describe("engine properties", () => {
  it("never throws, and records exact JSON byte counts", () => {
    fc.assert(
      fc.property(entryArb, policyArb, (entry, options) => {
        const { entry: out, record } = normalizeResourceEntry(entry, testPolicy(options), "contents[0]");
        expect(record).not.toBeNull();
        expect(record!.bytesBefore).toBe(jsonBytes(entry));
        expect(record!.bytesAfter).toBe(jsonBytes(out));
      }),
      RUNS,
    );
  });

  it("is idempotent", () => {
    fc.assert(
      fc.property(entryArb, policyArb, (entry, options) => {
        const policy = testPolicy(options);
        const once = normalizeResourceEntry(entry, policy, "c").entry;
        const twice = normalizeResourceEntry(once, policy, "c").entry;
        expect(JSON.stringify(twice)).toBe(JSON.stringify(once));
      }),
      RUNS,
    );
  });

  it("is idempotent on a UTF-8 byte order mark followed by binary controls, with or without a textual type", () => {
    // Found by the property above: unwrapped on a first pass, it went back to a blob on the second.
    for (const mimeType of ["", "application/octet-stream", "text/plain"])
      for (const fixMime of [false, true]) {
        const policy = testPolicy({ fixMime });
        const once = normalizeResourceEntry({ blob: "77u/CAE=", mimeType }, policy, "c").entry;
        const twice = normalizeResourceEntry(once, policy, "c").entry;
        expect(JSON.stringify(twice), `${mimeType} ${fixMime}`).toBe(JSON.stringify(once));
      }
  });

  it("is idempotent on a byte order mark followed by a binary format's start, with or without fixMime", () => {
    // Found from outside: with fixMime off, unwrapped to text "%PDF-…%%EOF" on a first pass (its type
    // left generic), it went back to a blob — without its mark — on the second.
    const pdf = "%PDF-1.4 hi %%EOF";
    const blobs = [
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(pdf)]),
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(pdf, "utf16le")]),
    ];
    for (const bytes of blobs)
      for (const mimeType of [undefined, "application/octet-stream"])
        for (const fixMime of [false, true]) {
          const policy = testPolicy({ fixMime });
          const entry = { blob: bytes.toString("base64"), ...(mimeType === undefined ? {} : { mimeType }) };
          const once = normalizeResourceEntry(entry, policy, "c").entry;
          const twice = normalizeResourceEntry(once, policy, "c").entry;
          const label = `${bytes.subarray(0, 2).toString("hex")} ${mimeType} ${fixMime}`;
          expect(JSON.stringify(twice), label).toBe(JSON.stringify(once));
          // Left as it came: the same bytes without the mark are a PDF's, kept as bytes.
          expect((once as { blob?: string }).blob, label).toBe(entry.blob);
        }
  });

  it("is idempotent on a blob of ASCII control characters under a textual name, with or without fixMime", () => {
    // Found by the property above: unwrapped to text on a first pass, the second took that text
    // for a binary string, "transcoded" it to itself and set a type fixMime: false forbids.
    for (const blob of ["Dg==", "AQID", "CQoNDg8="])
      for (const uri of ["file:///a/b.md", "file:///a/b"])
        for (const fixMime of [false, true]) {
          const policy = testPolicy({ fixMime });
          const once = normalizeResourceEntry({ blob, uri, mimeType: null }, policy, "c").entry;
          const twice = normalizeResourceEntry(once, policy, "c");
          expect(JSON.stringify(twice.entry), `${blob} ${uri} ${fixMime}`).toBe(JSON.stringify(once));
          expect(twice.record?.action ?? "none", `${blob} ${uri} ${fixMime}`).not.toBe("transcode");
        }
  });

  it("is idempotent on UTF-8 that reads as a binary string, with no type or a textual name, with or without fixMime", () => {
    // Found from outside: with fixMime off, unwrapped to text with no type on a first pass, the
    // second took it for bytes one per character (a PDF's start; a UTF-16 mark and controls).
    for (const [text, uri] of [
      ["%PDF-1.4 \u00ff\u00fe", "file:///c"],
      [`\u00ff\u00fe\u0001\u0002${"a".repeat(60)}`, "file:///d.json"],
    ] as const)
      for (const fixMime of [false, true]) {
        const policy = testPolicy({ fixMime });
        const entry = { uri, blob: Buffer.from(text, "utf8").toString("base64") };
        const once = normalizeResourceEntry(entry, policy, "c").entry;
        const twice = normalizeResourceEntry(once, policy, "c").entry;
        expect(JSON.stringify(twice), `${uri} ${fixMime}`).toBe(JSON.stringify(once));
        const { text: out, blob } = once as { text?: string; blob?: string };
        expect(out ?? Buffer.from(blob!, "base64").toString("utf8"), `${uri} ${fixMime}`).toBe(text);
      }
  });

  it("keeps every other key, its value and the key order; the payload key keeps its position", () => {
    fc.assert(
      fc.property(entryArb, (entry) => {
        const { entry: out } = normalizeResourceEntry(entry, testPolicy(), "c");
        const o = out as Entry;
        const before = Object.keys(entry)
          .map((k) => (k === "blob" || k === "text" ? "$payload" : k))
          .filter((k) => k !== "mimeType");
        const after = Object.keys(o)
          .map((k) => (k === "blob" || k === "text" ? "$payload" : k))
          .filter((k) => k !== "mimeType");
        expect(after).toEqual(before);
        for (const key of Object.keys(entry)) {
          if (key !== "blob" && key !== "text" && key !== "mimeType")
            expect(JSON.stringify(o[key])).toBe(JSON.stringify(entry[key]));
        }
        expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
      }),
      RUNS,
    );
  });

  it("is lossless: unwrapped, transcoded and re-encoded payloads stand for the original bytes; no U+FFFD introduced", () => {
    fc.assert(
      fc.property(entryArb, policyArb, (entry, options) => {
        const { entry: out, record } = normalizeResourceEntry(entry, testPolicy(options), "c");
        const o = out as Entry;
        switch (record!.action) {
          case "unwrap-blob": {
            const original = payloadBytes(entry)!;
            const back = Buffer.from(o.text as string, "utf8");
            const withoutBom =
              original[0] === 0xef && original[1] === 0xbb && original[2] === 0xbf ? original.subarray(3) : original;
            expect(back.equals(withoutBom)).toBe(true);
            break;
          }
          case "transcode": {
            // The text, encoded back in the charset it was decoded from, is the original bytes
            // (minus a BOM), or — where the charset's table maps some bytes one way only — the
            // original bytes decode to it without a U+FFFD: nothing substituted, nothing lost.
            const text = o.text as string;
            expect(isWellFormed(text)).toBe(true);
            const source =
              typeof entry.blob === "string"
                ? payloadBytes(entry)!
                : /[\udc80-\udcff]/.test(entry.text as string)
                  ? escapedBytes(entry.text as string)
                  : Buffer.from(entry.text as string, "latin1");
            const candidates = transcodeCandidates(source, entry.mimeType);
            const exact = ([charset, body]: [string, Buffer]): boolean =>
              iconv.encode(text, charset, { addBOM: false }).equals(body) ||
              (!text.includes("\ufffd") && iconv.decode(body, charset, { stripBOM: false }) === text);
            expect(candidates.some(exact)).toBe(true);
            break;
          }
          case "reencode-blob": {
            const text = entry.text as string;
            const bytes = Buffer.from(o.blob as string, "base64");
            // Binary strings carry one byte per code unit; surrogate-escaped text carries UTF-8 plus raw bytes.
            const expected = /[\udc80-\udcff]/.test(text) ? escapedBytes(text) : Buffer.from(text, "latin1");
            expect(bytes.equals(expected)).toBe(true);
            break;
          }
          default:
            // Every other action leaves the payload exactly as it was (a blob keeps its exact string).
            if (typeof entry.blob === "string") expect(o.blob).toBe(entry.blob);
            else expect(o.text).toBe(entry.text);
        }
      }),
      RUNS,
    );
  });

  it("dryRun returns the input itself with the same record", () => {
    fc.assert(
      fc.property(entryArb, policyArb, (entry, options) => {
        const live = normalizeResourceEntry(entry, testPolicy(options), "c");
        const dry = normalizeResourceEntry(entry, testPolicy({ ...options, dryRun: true }), "c");
        expect(dry.entry).toBe(entry);
        expect({ ...dry.record, applied: true }).toEqual(live.record);
      }),
      RUNS,
    );
  });
});

describe("result and media properties", () => {
  const blockArb = fc
    .tuple(fc.constantFrom("image", "audio"), blobArb, mimeArb, extraKeys)
    .map(([type, data, mimeType, extra]) => {
      const block: Entry = JSON.parse(
        JSON.stringify({ ...extra, type, data, ...(mimeType === undefined ? {} : { mimeType }) }),
      );
      return block;
    });

  it("media blocks: never throw, idempotent, data identical, only mimeType may change", () => {
    fc.assert(
      fc.property(blockArb, (block) => {
        const once = normalizeMediaBlock(block, testPolicy(), "b");
        const o = once.block as Entry;
        expect(o.data).toBe(block.data);
        for (const key of Object.keys(block))
          if (key !== "mimeType") expect(JSON.stringify(o[key])).toBe(JSON.stringify(block[key]));
        const twice = normalizeMediaBlock(o, testPolicy(), "b");
        expect(JSON.stringify(twice.block)).toBe(JSON.stringify(o));
        if (once.record !== null) expect(once.record.bytesAfter).toBe(jsonBytes(o));
      }),
      RUNS,
    );
  });

  it("tools/call: structuredContent and unknown result keys are never touched", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            entryArb.map((e) => ({ type: "resource", resource: e })),
            blockArb,
            fc.jsonValue({ maxDepth: 1 }),
          ),
          { maxLength: 4 },
        ),
        fc.jsonValue({ maxDepth: 3 }),
        (content, structured) => {
          const result = JSON.parse(
            JSON.stringify({ content, structuredContent: structured, isError: false, _meta: { a: 1 } }),
          ) as Entry;
          const out = normalizeResult("tools/call", result, testPolicy()).value as Entry;
          expect(out.structuredContent).toBe(result.structuredContent);
          expect(out._meta).toBe(result._meta);
          expect(Object.keys(out)).toEqual(Object.keys(result));
          const changes: ChangeRecord[] = normalizeResult("tools/call", result, testPolicy()).changes;
          for (const r of changes) expect(r.path).toMatch(/^content\[\d+\](\.resource)?$/);
        },
      ),
      { numRuns: 200 },
    );
  });
});

/** The bytes a surrogate-escaped string stands for (Python's surrogateescape, decoded back). */
function escapedBytes(text: string): Buffer {
  const parts: Buffer[] = [];
  for (const ch of text) {
    const c = ch.charCodeAt(0);
    parts.push(ch.length === 1 && c >= 0xdc80 && c <= 0xdcff ? Buffer.of(c - 0xdc00) : Buffer.from(ch, "utf8"));
  }
  return Buffer.concat(parts);
}

/** Charsets a transcode may have used: UTF-8, the BOM's (body after it), the declared one (all bytes). */
function transcodeCandidates(bytes: Buffer, mimeType: unknown): Array<[string, Buffer]> {
  // Surrogate-escaped text may stand for plain UTF-8 bytes (decided like a blob: UTF-8 text).
  const out: Array<[string, Buffer]> = [["utf-8", bytes]];
  const boms: Array<[string, number[]]> = [
    ["utf-8", [0xef, 0xbb, 0xbf]],
    ["utf-32le", [0xff, 0xfe, 0, 0]],
    ["utf-32be", [0, 0, 0xfe, 0xff]],
    ["utf-16le", [0xff, 0xfe]],
    ["utf-16be", [0xfe, 0xff]],
  ];
  for (const [charset, bom] of boms)
    if (bom.every((b, i) => bytes[i] === b)) out.push([charset, bytes.subarray(bom.length)]);
  const declared = typeof mimeType === "string" ? /charset="?([^";]+)/i.exec(mimeType)?.[1] : undefined;
  if (declared !== undefined && iconv.encodingExists(declared)) {
    out.push([declared, bytes]);
    // A label read as another charset (ISO-8859-1 and US-ASCII as windows-1252, as WHATWG does).
    const decoder = decodingCharset(canonicalCharset(declared));
    if (iconv.encodingExists(decoder)) out.push([decoder, bytes]);
  }
  return out;
}
