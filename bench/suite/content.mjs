/**
 * Deterministic resource contents for the proxy benchmark, shared by the upstream that
 * serves them and the harness that checks what arrived.
 *
 * Sizes are the decoded content's bytes: "the 50 MiB blob" is 50 MiB of UTF-8 text whose base64
 * string (the upstream's `blob`) is 4/3 of that. The text is log-like lines, mostly ASCII with some
 * 2–4 byte characters and a newline every ~90 bytes (so JSON escaping costs something, as in real
 * files). Big contents are a 3-byte-aligned block repeated: base64(block × n) = base64(block) × n,
 * so the upstream builds 50 MiB in milliseconds instead of billing its own work to every path.
 */
import { logLines, MIXED_WORDS, utf8CutAt } from "../lib/text.mjs";

/** The block's words: utf8Text's but two (the suite's contents have been these bytes since its first run). */
const WORDS = MIXED_WORDS.filter((word) => word !== "zeta" && word !== "lambda");

/** ~48 KiB of lines, cut at a line end, padded with spaces so its byte length is a multiple of 3. */
function makeBlock() {
  let text = "";
  for (const line of logLines(WORDS, { numberWidth: 6, wordsPerLine: 11 })) {
    if (Buffer.byteLength(text) >= 48 * 1024) break;
    text += line;
  }
  while (Buffer.byteLength(text) % 3 !== 0) text += " ";
  return Buffer.from(text, "utf8");
}

const BLOCK = makeBlock();
const BLOCK_TEXT = BLOCK.toString("utf8");
const BLOCK_BASE64 = BLOCK.toString("base64");
/** The last partial block: a prefix of the block cut on a character boundary, padded with spaces. */
function tailOf(bytes) {
  const end = utf8CutAt(BLOCK, bytes);
  return BLOCK.toString("utf8", 0, end) + " ".repeat(bytes - end);
}

/** UTF-8 text of exactly `bytes` bytes (the 1 KB / 12 KB text resources; also what a blob decodes to). */
export function textOfBytes(bytes) {
  const whole = Math.floor(bytes / BLOCK.length);
  return BLOCK_TEXT.repeat(whole) + tailOf(bytes - whole * BLOCK.length);
}

/** Standard base64 of `textOfBytes(bytes)`, built without encoding `bytes` bytes. */
export function base64OfTextBytes(bytes) {
  const whole = Math.floor(bytes / BLOCK.length);
  return BLOCK_BASE64.repeat(whole) + Buffer.from(tailOf(bytes - whole * BLOCK.length), "utf8").toString("base64");
}

export const KiB = 1024;
export const MiB = 1024 * 1024;

/**
 * The resources the upstream serves. `bytes` is the decoded size; `form` what the upstream sends.
 * Blob sizes beyond these are served on demand as `bench://blob/<bytes>` (bounded by MAX_BLOB_BYTES).
 */
export const RESOURCES = {
  text1k: { uri: "bench://text/1024", form: "text", bytes: 1 * KiB },
  text12k: { uri: "bench://text/12288", form: "text", bytes: 12 * KiB },
  blob76: { uri: "bench://blob/76", form: "blob", bytes: 76 },
  blob1m: { uri: `bench://blob/${1 * MiB}`, form: "blob", bytes: 1 * MiB },
  blob10m: { uri: `bench://blob/${10 * MiB}`, form: "blob", bytes: 10 * MiB },
  blob50m: { uri: `bench://blob/${50 * MiB}`, form: "blob", bytes: 50 * MiB },
};

/** Largest content the upstream will build on demand (a bound, so a typo cannot eat the machine). */
export const MAX_BLOB_BYTES = 256 * MiB;

/** `bench://text/N` or `bench://blob/N` → {form, bytes}, or null for an unknown URI. */
export function parseBenchUri(uri) {
  const match = /^bench:\/\/(text|blob)\/(\d+)$/.exec(uri);
  if (match === null) return null;
  const bytes = Number(match[2]);
  if (!Number.isSafeInteger(bytes) || bytes > MAX_BLOB_BYTES) return null;
  return { form: match[1], bytes };
}
