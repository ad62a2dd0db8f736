/**
 * Deterministic UTF-8 text for the benchmarks: log-like lines (a zero-padded line number, INFO,
 * words drawn by a fixed linear congruential generator), so every run builds the same bytes.
 */

/** Log lines, newline included, without end: `words` drawn `wordsPerLine` to a line. */
export function* logLines(words, { numberWidth, wordsPerLine }) {
  let seed = 0x2545f491;
  for (let n = 0; ; n++) {
    let line = `${String(n).padStart(numberWidth, "0")} INFO`;
    for (let w = 0; w < wordsPerLine; w++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      line += ` ${words[(seed >>> 16) % words.length]}`;
    }
    yield `${line}\n`;
  }
}

/** The longest length up to `bytes` at which `buf` can be cut without splitting a UTF-8 character. */
export function utf8CutAt(buf, bytes) {
  let end = Math.min(bytes, buf.length);
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return end;
}

const ASCII_WORDS = [
  "alpha",
  "beta",
  "gamma",
  "delta",
  "epsilon",
  "zeta",
  "eta",
  "theta",
  '{"k":1}',
  "<tag/>",
  "\ttab",
  "iota",
];
/** Mostly ASCII, some 2–4 byte characters, a tab and characters JSON or HTML escape. */
export const MIXED_WORDS = [
  "alpha",
  "beta",
  "gamma",
  "café",
  "naïve",
  "日本語",
  "delta",
  "epsilon",
  "zeta",
  "🎉",
  '{"k":1}',
  "<tag/>",
  "\ttab",
  "iota",
  "kappa",
  "lambda",
];

/** About `bytes` bytes of log lines, mostly ASCII with some 2–4 byte characters (`ascii`: none), cut on a character. */
export function utf8Text(bytes, { ascii = false } = {}) {
  const parts = [];
  let size = 0;
  for (const line of logLines(ascii ? ASCII_WORDS : MIXED_WORDS, { numberWidth: 7, wordsPerLine: 12 })) {
    if (size >= bytes) break;
    parts.push(line);
    size += Buffer.byteLength(line);
  }
  const buf = Buffer.from(parts.join(""), "utf8");
  return buf.subarray(0, utf8CutAt(buf, bytes));
}
