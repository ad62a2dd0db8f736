/**
 * `npm run bench:core`: the engine against the bare primitive chain it cannot
 * avoid, measured in the same run, interleaved. A benchmark, never a timed unit test.
 *
 *  - UTF-8 text served as a base64 blob (1, 10, 50 MiB): `normalizeContents` vs
 *    `Buffer.from(b64, 'base64')` + `isUtf8` + `toString('utf8')`. Target ≤ 1.3× at 10 and 50 MiB.
 *  - A 50 MiB PNG-signed blob: must cost well under the text case (nothing decoded twice or
 *    re-encoded); the strict base64 validation it still needs is measured on its own.
 *  - A 50 MiB read answer, in pipe-sized pieces, to the bytes for the host: the proxy's raw-string
 *    path vs the plain one (JSON.parse, the engine on a string, JSON.stringify).
 *  - Our signature table vs file-type's `fileTypeFromBuffer`, per entry, on the corpus binaries.
 *  - Charset detection: the engine on textual blobs in legacy charsets that declare none (the
 *    charset corpus's whole texts), with detection against the same entries with it off (they
 *    stay blobs): the difference is what the detector (chardet plus the strict decode) costs.
 *
 * Writes bench/results/core.json and prints a table. Run with --expose-gc (the npm script does).
 */
import { isUtf8 } from "node:buffer";
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import os from "node:os";
import { fileTypeFromBuffer } from "file-type";
import { normalizeContents, normalizeResult, Policy, detectSignature } from "../dist/normalize/index.js";
import { completePolicyOptions } from "../dist/config/policy.js";
import { decodeStrictBase64 } from "../dist/normalize/base64.js";
import { parseWithRawStrings } from "../dist/transports/rawStringParse.js";
import { encodeWire } from "../dist/transports/wireJson.js";
import { interleaved, median } from "./lib/stats.mjs";
import { utf8Text } from "./lib/text.mjs";
import { switchesOrExit } from "./lib/flags.mjs";

const MiB = 1024 * 1024;
const policy = new Policy(completePolicyOptions());
const USAGE = `Usage: node --expose-gc bench/core.mjs [--quick]   (or \`npm run bench:core\`, which builds first)

  --quick      a short run (smaller sizes, fewer rounds)
  -h, --help   this help

Writes bench/results/core.json and prints a table.
`;
const quick = switchesOrExit(process.argv.slice(2), "bench/core.mjs", USAGE, ["--quick"]).has("--quick");

function entryOf(blob, mimeType, uri) {
  return [{ uri, mimeType, blob }];
}

/** The primitive chain (base64 decode, UTF-8 check, decode): what any correct unwrap has to do at the least. */
function primitive(b64) {
  const bytes = Buffer.from(b64, "base64");
  if (!isUtf8(bytes)) throw new Error("bench text is not UTF-8");
  return bytes.toString("utf8");
}

function engine(contents, expectAction) {
  const out = normalizeContents(contents, policy);
  if (out.changes[0]?.action !== expectAction)
    throw new Error(`expected ${expectAction}, got ${out.changes[0]?.action}: ${out.changes[0]?.reason}`);
  return out;
}

const rows = [];
const results = {
  node: process.version,
  cpu: os.cpus()[0]?.model ?? "unknown",
  cores: os.cpus().length,
  date: new Date().toISOString(),
  text: [],
  binary: {},
  signatures: {},
};

for (const [size, rounds] of quick
  ? [
      [1, 5],
      [10, 3],
    ]
  : [
      [1, 21],
      [10, 11],
      [50, 7],
    ]) {
  for (const ascii of [false, true]) {
    const b64 = utf8Text(size * MiB, { ascii }).toString("base64");
    const contents = entryOf(b64, "text/plain", "file:///bench/log.txt");
    const t = interleaved({ engine: () => engine(contents, "unwrap-blob"), primitive: () => primitive(b64) }, rounds);
    const ratio = t.engine / t.primitive;
    const label = `${size} MiB ${ascii ? "ASCII" : "UTF-8"} text as base64 blob`;
    results.text.push({ mib: size, ascii, rounds, engineMs: t.engine, primitiveMs: t.primitive, ratio });
    rows.push([label, `${t.engine.toFixed(1)} ms`, `${t.primitive.toFixed(1)} ms`, `${ratio.toFixed(2)}×`]);
  }
}

{
  // 50 MiB of PNG: a real 8-byte signature, then pseudo-random bytes.
  const size = quick ? 10 : 50;
  const bytes = Buffer.alloc(size * MiB);
  let seed = 12345;
  for (let i = 0; i < bytes.length; i += 4) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    bytes.writeUInt32LE(seed, i);
  }
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes, 0);
  const b64 = bytes.toString("base64");
  const contents = entryOf(b64, "application/octet-stream", "file:///bench/shot");
  const text = utf8Text(size * MiB).toString("base64");
  const textContents = entryOf(text, "text/plain", "file:///bench/log.txt");
  const t = interleaved(
    {
      png: () => engine(contents, "fix-mime"),
      validate: () => decodeStrictBase64(b64),
      decode: () => Buffer.from(b64, "base64"),
      text: () => engine(textContents, "unwrap-blob"),
    },
    quick ? 3 : 7,
  );
  results.binary = {
    mib: size,
    pngMs: t.png,
    strictBase64Ms: t.validate,
    bareDecodeMs: t.decode,
    textMs: t.text,
    pngOverText: t.png / t.text,
  };
  rows.push([
    `${size} MiB PNG-signed blob (fix-mime)`,
    `${t.png.toFixed(1)} ms`,
    `${t.decode.toFixed(1)} ms (bare decode)`,
    `${(t.png / t.text).toFixed(2)}× of text`,
  ]);
  rows.push([`  strict base64 validation alone`, `${t.validate.toFixed(1)} ms`, "", ""]);
}

{
  // The proxy's big-read path: a resources/read answer as its upstream line arrives, in
  // 64 KiB pieces, to the bytes for the host. Raw strings (src/transports/rawStringParse.ts,
  // src/wire/rawJson.ts) against the plain path they replace: JSON.parse of the joined line,
  // the engine on a JS string, JSON.stringify and the UTF-8 encode.
  const size = quick ? 10 : 50;
  const message = {
    jsonrpc: "2.0",
    id: 7,
    result: {
      contents: [
        { uri: "file:///bench/log.txt", mimeType: "text/plain", blob: utf8Text(size * MiB).toString("base64") },
      ],
    },
  };
  const line = Buffer.from(JSON.stringify(message));
  const pieces = [];
  for (let at = 0; at < line.length; at += 64 * 1024) pieces.push(Buffer.from(line.subarray(at, at + 64 * 1024)));
  const host = (msg) => ({ ...msg, result: normalizeResult("resources/read", msg.result, policy).value });
  const raw = () => {
    const wire = encodeWire(host(parseWithRawStrings(pieces, 256 * 1024)));
    return typeof wire === "string" ? Buffer.from(wire) : wire.join();
  };
  const plain = () => Buffer.from(JSON.stringify(host(JSON.parse(Buffer.concat(pieces).toString("utf8")))));
  if (!raw().equals(plain())) throw new Error("raw and plain paths wrote different bytes");
  const t = interleaved({ raw, plain }, quick ? 3 : 7);
  results.bigRead = { mib: size, messageBytes: line.length, rawMs: t.raw, plainMs: t.plain, ratio: t.raw / t.plain };
  rows.push([
    `${size} MiB read answer, 64 KiB pieces → host bytes`,
    `${t.raw.toFixed(1)} ms (raw strings)`,
    `${t.plain.toFixed(1)} ms (parse, string, stringify)`,
    `${(t.raw / t.plain).toFixed(2)}×`,
  ]);
}

{
  const dir = fileURLToPath(new URL("../test/fixtures/corpus/files/", import.meta.url));
  const files = ["media", "binary", "text"].flatMap((sub) =>
    readdirSync(dir + sub).map((f) => readFileSync(`${dir}${sub}/${f}`)),
  );
  const iterations = quick ? 200 : 2000;
  const ours = [];
  const theirs = [];
  for (let r = 0; r < 5; r++) {
    let start = performance.now();
    for (let i = 0; i < iterations; i++) for (const f of files) detectSignature(f);
    ours.push(((performance.now() - start) * 1000) / (iterations * files.length));
    start = performance.now();
    for (let i = 0; i < iterations / 10; i++) for (const f of files) await fileTypeFromBuffer(f);
    theirs.push(((performance.now() - start) * 1000) / ((iterations / 10) * files.length));
  }
  results.signatures = {
    entries: files.length,
    oursUsPerEntry: median(ours),
    fileTypeUsPerEntry: median(theirs),
    speedup: median(theirs) / median(ours),
  };
  rows.push([
    `signature, per entry (${files.length} corpus files)`,
    `${median(ours).toFixed(2)} µs`,
    `${median(theirs).toFixed(2)} µs (file-type)`,
    `${(median(theirs) / median(ours)).toFixed(0)}× faster`,
  ]);
}

{
  const dir = fileURLToPath(new URL("../test/fixtures/corpus/charsets/", import.meta.url));
  const manifest = JSON.parse(readFileSync(`${dir}manifest.json`, "utf8"));
  const samples = manifest
    .filter((s) => s.kind === "text" && s.file.endsWith(".full.txt") && !s.charset.startsWith("utf-16"))
    .map((s) => readFileSync(`${dir}files/${s.file}`));
  const entries = samples.map((bytes) => entryOf(bytes.toString("base64"), "text/plain", "mem://bench/legacy"));
  const off = new Policy(completePolicyOptions({ detectCharset: false }));
  for (const contents of entries) {
    if (normalizeContents(contents, policy).changes[0].action !== "transcode")
      throw new Error("a charset bench sample was not detected");
  }
  const iterations = quick ? 20 : 200;
  const t = interleaved(
    {
      detect: () => {
        for (let i = 0; i < iterations; i++) for (const contents of entries) normalizeContents(contents, policy);
      },
      off: () => {
        for (let i = 0; i < iterations; i++) for (const contents of entries) normalizeContents(contents, off);
      },
    },
    quick ? 3 : 9,
  );
  const per = (ms) => (ms * 1000) / (iterations * entries.length);
  const bytes = Math.round(samples.reduce((s, b) => s + b.length, 0) / samples.length);
  results.charsetDetection = {
    entries: entries.length,
    meanBytes: bytes,
    detectUsPerEntry: per(t.detect),
    offUsPerEntry: per(t.off),
    detectorUsPerEntry: per(t.detect) - per(t.off),
  };
  rows.push([
    `charset detection, per entry (${entries.length} texts, ~${bytes} B)`,
    `${per(t.detect).toFixed(1)} µs (transcoded)`,
    `${per(t.off).toFixed(1)} µs (detection off, stays blob)`,
    `+${(per(t.detect) - per(t.off)).toFixed(1)} µs`,
  ]);
}

const header = ["case", "engine", "primitive chain", "ratio"];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
console.log(`Node ${process.version}, ${results.cpu} (${results.cores} cores)`);
console.log(line(header));
console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
for (const r of rows) console.log(line(r));

if (!quick) {
  mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
  writeFileSync(
    new URL("./results/core.json", import.meta.url),
    `${JSON.stringify({ ...results, table: rows }, null, 2)}\n`,
  );
}
const worst = Math.max(...results.text.filter((r) => r.mib >= 10).map((r) => r.ratio));
console.log(`worst ratio at ≥ 10 MiB: ${worst.toFixed(2)}× (target ≤ 1.30×)`);
