/**
 * fast-check generators for the fuzz suite ("random and mutated messages on both
 * sides"): what a host writes (random bytes, random JSON, mutations of valid requests) and what
 * an upstream answers (mutated result shapes, wrong ids, non-JSON lines). Sizes are bounded so
 * the suite stays in its time budget on 2 cores.
 */
import fc from "fast-check";

/** `FUZZ_SEED` fixes the run; otherwise random, and printed so a failure can be replayed. */
export function fuzzSeed(suite: string): number {
  const fixed = process.env.FUZZ_SEED;
  const seed =
    fixed !== undefined && fixed !== "" ? Number(fixed) : (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0;
  console.log(`[fuzz] ${suite}: seed ${seed} (replay with FUZZ_SEED=${seed})`);
  return seed;
}

/** Requests a host may validly send to the fixture server (none of its crash/sleep/big tools). */
const VALID_REQUESTS: ReadonlyArray<{ method: string; params?: Record<string, unknown> }> = [
  { method: "ping" },
  { method: "resources/list", params: {} },
  { method: "resources/templates/list", params: {} },
  { method: "resources/read", params: { uri: "fixture://case/0" } },
  { method: "resources/read", params: { uri: "file:///docs/readme.md" } },
  { method: "tools/list", params: {} },
  { method: "tools/call", params: { name: "echo", arguments: { a: 1 } } },
  { method: "prompts/list", params: {} },
  { method: "notifications/cancelled", params: { requestId: 1 } },
];

const weirdIds = fc.oneof(
  fc.constantFrom<unknown>(null, -1, 0, 1.5, -0.25, 1e308, Number.MAX_SAFE_INTEGER + 2, "", true, [], {}, [1]),
  fc.string({ maxLength: 40 }),
  fc.integer(),
  fc.string({ minLength: 1000, maxLength: 5000 }),
);

/** Nested arrays/objects, deep enough to hit recursion limits of naive code. */
const deepNesting = fc
  .tuple(fc.integer({ min: 100, max: 20_000 }), fc.boolean())
  .map(([depth, objects]) =>
    objects ? `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}` : "[".repeat(depth) + "]".repeat(depth),
  );

type Mutation = (msg: Record<string, unknown>) => fc.Arbitrary<string>;

const asText = (msg: unknown): string => JSON.stringify(msg);
const MUTATIONS: Mutation[] = [
  // Drop a field.
  (m) =>
    fc
      .constantFrom(...Object.keys(m))
      .map((k) => asText(Object.fromEntries(Object.entries(m).filter(([key]) => key !== k)))),
  // Rename a field.
  (m) =>
    fc
      .tuple(fc.constantFrom(...Object.keys(m)), fc.string({ maxLength: 10 }))
      .map(([k, to]) => asText(Object.fromEntries(Object.entries(m).map(([key, v]) => [key === k ? to : key, v])))),
  // A wrong type (or any value) for a field.
  (m) =>
    fc
      .tuple(fc.constantFrom("jsonrpc", "id", "method", "params"), fc.jsonValue({ maxDepth: 3 }))
      .map(([k, v]) => asText({ ...m, [k]: v })),
  // Huge, negative, float, null … ids.
  (m) => weirdIds.map((id) => asText({ ...m, id })),
  // An id JSON.parse turns into an imprecise number.
  (m) => fc.constant(asText(m).replace(/"id":[^,}]+/, '"id":123456789012345678901234567890')),
  // Deep nesting in params.
  (m) => deepNesting.map((deep) => asText({ ...m, params: "__DEEP__" }).replace('"__DEEP__"', deep)),
  // Lone surrogates, escaped (valid JSON, not valid Unicode).
  (m) =>
    fc
      .constantFrom("\\ud800", "\\udfff", "a\\udc00b")
      .map((s) => asText({ ...m, params: { ...(m.params as object), s: "__S__" } }).replace("__S__", s)),
  // Random extra params.
  (m) =>
    fc
      .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 })
      .map((extra) => asText({ ...m, params: { ...(m.params as object), ...extra } })),
];

/** A valid request, mutated once or twice (JSON text). */
export const mutatedRequest: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(...VALID_REQUESTS), fc.integer({ min: 1, max: 1_000_000 }))
  .chain(([req, id]) => {
    const msg: Record<string, unknown> = {
      jsonrpc: "2.0",
      id,
      method: req.method,
      ...(req.params === undefined ? {} : { params: req.params }),
    };
    return fc.oneof(...MUTATIONS.map((mutate) => mutate(msg)));
  });

/** Bytes spliced into text: invalid UTF-8 (stray continuation, overlong, CESU surrogate, 0xFF). */
const badUtf8 = fc
  .constantFrom([0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff, 0xfe], [0xc3], [0xf4, 0x90, 0x80, 0x80])
  .map((b) => Buffer.from(b));

/** `text` with invalid UTF-8 inserted at a random point. */
export const withBadUtf8 = (text: fc.Arbitrary<string>): fc.Arbitrary<Buffer> =>
  fc.tuple(text, badUtf8, fc.nat()).map(([t, bad, at]) => {
    const bytes = Buffer.from(t);
    const cut = bytes.length === 0 ? 0 : at % bytes.length;
    return Buffer.concat([bytes.subarray(0, cut), bad, bytes.subarray(cut)]);
  });

/** One line a host writes (without its newline). */
export const hostLine: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? "null")) },
  { weight: 5, arbitrary: mutatedRequest.map((t) => Buffer.from(t)) },
  { weight: 1, arbitrary: withBadUtf8(mutatedRequest) },
  {
    weight: 2,
    arbitrary: fc
      .array(
        fc.oneof(
          mutatedRequest,
          fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? "null"),
        ),
        { maxLength: 4 },
      )
      .map((items) => Buffer.from(`[${items.join(",")}]`)),
  },
);

// ---- upstream side ---------------------------------------------------------------------

const MIME_TYPES = [
  "text/plain",
  "text/markdown",
  "application/json",
  "image/png",
  "application/octet-stream",
  "audio/wav",
  "text/html; charset=latin1",
  "",
  "not a mime",
  "x/../y",
  "TEXT/PLAIN;charset=utf-16",
];
const base64 = fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString("base64"));
const notBase64 = fc.oneof(fc.string({ maxLength: 60 }), fc.constantFrom("!!", "AAA", "====", "QQ=QQ", "\u0000"));

/** One entry of `contents`: mostly resource-shaped, with random keys and values. */
const contentEntry: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .record(
        {
          uri: fc.oneof(fc.constant("fixture://x"), fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 1 })),
          mimeType: fc.oneof(
            fc.constantFrom(...MIME_TYPES),
            fc.string({ maxLength: 20 }),
            fc.jsonValue({ maxDepth: 1 }),
          ),
          text: fc.oneof(fc.string({ maxLength: 200, unit: "binary" }), fc.jsonValue({ maxDepth: 2 })),
          blob: fc.oneof(base64, notBase64, fc.jsonValue({ maxDepth: 1 })),
          _meta: fc.jsonValue({ maxDepth: 2 }),
        },
        { requiredKeys: [] },
      )
      .chain((entry) =>
        fc
          .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
          .map((extra) => ({ ...extra, ...entry })),
      ),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

/** A `result` of resources/read, mutated: contents not an array, odd entries, extra keys. */
const resultShape: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.array(contentEntry, { maxLength: 4 }).map((contents) => ({ contents })) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((contents) => ({ contents })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) },
);

/** The id an upstream answer carries: the request's (`"__ID__"`), or a wrong one. */
const answerId = fc.oneof(
  { weight: 3, arbitrary: fc.constant("__ID__") },
  { weight: 1, arbitrary: weirdIds.map((id) => JSON.stringify(id)) },
);

/** One line an upstream writes on stdout, newline included (raw-upstream.mjs `_emit`). */
export const upstreamLine: fc.Arbitrary<Buffer> = fc
  .oneof(
    {
      weight: 5,
      arbitrary: fc
        .tuple(answerId, resultShape)
        .map(([id, result]) =>
          Buffer.from(`{"jsonrpc":"2.0","id":${id === "__ID__" ? '"__ID__"' : id},"result":${JSON.stringify(result)}}`),
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(answerId, fc.jsonValue({ maxDepth: 2 }))
        .map(([id, error]) =>
          Buffer.from(`{"jsonrpc":"2.0","id":${id === "__ID__" ? '"__ID__"' : id},"error":${JSON.stringify(error)}}`),
        ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 80 }).map((s) => Buffer.from(s.replace(/\n/g, " "))) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 120 }).map((b) => Buffer.from(b.filter((x) => x !== 0x0a))) },
    {
      weight: 1,
      arbitrary: withBadUtf8(
        fc.tuple(resultShape).map(([r]) => `{"jsonrpc":"2.0","id":"__ID__","result":${JSON.stringify(r)}}`),
      ),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => Buffer.from(JSON.stringify(v) ?? "null")) },
  )
  .map((line) => Buffer.concat([line, Buffer.from("\n")]));
