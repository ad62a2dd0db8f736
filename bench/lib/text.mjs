/** Deterministic UTF-8 text for the benchmarks: log-like lines, mostly ASCII, some 2–4 byte characters. */
export function utf8Text(bytes, { ascii = false } = {}) {
  const words = ascii
    ? ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", '{"k":1}', "<tag/>", "\ttab", "iota"]
    : [
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
  const parts = [];
  let size = 0;
  let seed = 0x2545f491;
  for (let n = 0; size < bytes; n++) {
    let line = `${String(n).padStart(7, "0")} INFO`;
    for (let w = 0; w < 12; w++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      line += ` ${words[(seed >>> 16) % words.length]}`;
    }
    line += "\n";
    parts.push(line);
    size += Buffer.byteLength(line);
  }
  const buf = Buffer.from(parts.join(""), "utf8");
  let end = Math.min(bytes, buf.length);
  while (end > 0 && end < buf.length && (buf[end] & 0xc0) === 0x80) end--;
  return buf.subarray(0, end);
}
