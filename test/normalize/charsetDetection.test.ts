/**
 * Undeclared charsets: a textual blob with no charset that is not UTF-8 is transcoded when the
 * detected charset is confident and decodes exactly, and kept (with the type it had) otherwise.
 * Run over the whole detection corpus (test/fixtures/corpus/charsets, encoded by Python's
 * codecs) and seeded random bytes: never a wrong transcode, never a random string transcoded.
 */
import { testPolicy } from "../helpers/policy.js";
import { isUtf8 } from "node:buffer";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { completePolicyOptions } from "../../src/config/policy.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { normalizeResourceEntry, normalizeResult } from "../../src/normalize/index.js";
import {
  DETECT_LONG_BYTES,
  DETECT_LONG_MIN_CONFIDENCE,
  DETECT_MIN_BYTES,
  DETECT_MULTIBYTE_MIN_CONFIDENCE,
  DETECT_SAMPLE_BYTES,
  DETECT_SHORT_MIN_CONFIDENCE,
  detectCharset,
  requiredConfidence,
} from "../../src/normalize/charsetDetection.js";
import { ROOT } from "../helpers/paths.js";

interface Sample {
  file: string;
  kind: string;
  lang?: string;
  charset?: string;
  text?: string;
}

const HERE = new URL("../fixtures/corpus/charsets/", import.meta.url);
const manifest = JSON.parse(readFileSync(new URL("manifest.json", HERE), "utf8")) as Sample[];
const bytesOf = (s: Sample): Buffer => readFileSync(new URL(`files/${s.file}`, HERE));
const policy = testPolicy();
const iconv = createRequire(import.meta.url)("iconv-lite") as typeof import("iconv-lite");

function run(bytes: Buffer, mimeType = "text/plain", p = policy) {
  const entry = { uri: "mem://charset/sample", mimeType, blob: bytes.toString("base64") };
  const { record } = normalizeResourceEntry(entry, p, "contents[0]");
  return { entry, record };
}

/**
 * Seeded random bytes without control bytes — only the detector stands between them and a
 * transcode: uniform 0x20–0xFF, high bytes only, and ASCII with every third byte in 0xA0–0xFF.
 */
function randomText(n: number, seed: number, shape: "printable" | "high" | "mixed"): Buffer {
  const out = Buffer.alloc(n);
  let s = seed;
  const next = (): number => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s >>> 16;
  };
  for (let i = 0; i < n; i++) {
    if (shape === "printable") out[i] = 0x20 + (next() % 224);
    else if (shape === "high") out[i] = 0x80 + (next() % 128);
    else out[i] = next() % 3 === 0 ? 0xa0 + (next() % 96) : 0x20 + (next() % 95);
  }
  return out;
}

describe("charset detection over the corpus", () => {
  const texts = manifest.filter((s) => s.kind === "text" && !isUtf8(bytesOf(s)));

  it("every transcode gives exactly the original text; every other sample stays the same blob with the same type", () => {
    let transcoded = 0;
    for (const sample of texts) {
      const { entry, record } = run(bytesOf(sample));
      if (record!.action === "transcode") {
        transcoded++;
        const out = normalizeResourceEntry(entry, policy, "contents[0]").entry as Record<string, unknown>;
        expect(out.text, sample.file).toBe(sample.text);
        expect(out.mimeType).toBe("text/plain");
        expect(record!.detected?.charset, sample.file).toBeTypeOf("string");
        expect(record!.detected!.confidence).toBeGreaterThanOrEqual(
          requiredConfidence(record!.detected!.charset, bytesOf(sample).length),
        );
      } else {
        expect(record!.action, sample.file).toBe("none");
        expect(normalizeResourceEntry(entry, policy, "contents[0]").entry).toBe(entry);
      }
    }
    expect(transcoded).toBeGreaterThan(texts.length / 2);
  });

  it("every whole text in a legacy charset is detected (UTF-16 without a BOM is not: chardet needs its BOM)", () => {
    for (const sample of texts.filter((s) => s.file.endsWith(".full.txt"))) {
      const { record } = run(bytesOf(sample));
      if (sample.charset!.startsWith("utf-16")) expect(record!.action, sample.file).toBe("none");
      else
        expect(record, sample.file).toMatchObject({ action: "transcode", detected: { charset: expect.any(String) } });
    }
  });

  it(`fewer than ${DETECT_MIN_BYTES} bytes are never guessed`, () => {
    for (const sample of texts.filter((s) => bytesOf(s).length < DETECT_MIN_BYTES)) {
      expect(run(bytesOf(sample)).record!.action, sample.file).toBe("none");
      expect(detectCharset(bytesOf(sample))).toMatchObject({
        detected: false,
        why: expect.stringContaining("too few"),
      });
    }
  });

  it("random bytes stay a blob and keep their declared type (text/csv stays text/csv)", () => {
    for (const sample of manifest.filter((s) => s.kind !== "text")) {
      const { entry, record } = run(bytesOf(sample), "text/csv");
      expect(record!.action, sample.file).toBe("none");
      expect(record!.mimeAfter).toBe("text/csv");
      expect(normalizeResourceEntry(entry, policy, "contents[0]").entry).toBe(entry);
    }
  });

  it("thousands of seeded random strings without control bytes: none transcoded", () => {
    let seed = 1;
    let checked = 0;
    for (const shape of ["printable", "high", "mixed"] as const) {
      for (const n of [48, 64, 96, 128, 160, 256, 512, 4096]) {
        for (let k = 0; k < 120; k++) {
          const bytes = randomText(n, seed++, shape);
          if (isUtf8(bytes)) continue;
          checked++;
          // (A few random strings start like a binary signature: fix-mime, still a blob.)
          expect(run(bytes, "text/plain").record!.action, `${shape}, ${n} bytes, seed ${seed - 1}`).not.toBe(
            "transcode",
          );
        }
      }
    }
    expect(checked).toBeGreaterThan(2500);
  });

  it("the confidence needed: multi-byte CJK guesses, short and long single-byte guesses", () => {
    expect(requiredConfidence("gb18030", 48)).toBe(DETECT_MULTIBYTE_MIN_CONFIDENCE);
    expect(requiredConfidence("shift_jis", 5000)).toBe(DETECT_MULTIBYTE_MIN_CONFIDENCE);
    expect(requiredConfidence("koi8-r", DETECT_LONG_BYTES - 1)).toBe(DETECT_SHORT_MIN_CONFIDENCE);
    expect(requiredConfidence("koi8-r", DETECT_LONG_BYTES)).toBe(DETECT_LONG_MIN_CONFIDENCE);
  });

  it("a big blob is detected from its first bytes and decoded whole", () => {
    const sample = manifest.find((s) => s.file === "ko.euc_kr.full.txt")!;
    const copies = Math.ceil((DETECT_SAMPLE_BYTES * 4) / bytesOf(sample).length);
    const big = Buffer.concat(Array.from({ length: copies }, () => bytesOf(sample)));
    expect(big.length).toBeGreaterThan(DETECT_SAMPLE_BYTES * 4);
    const { entry, record } = run(big);
    expect(record).toMatchObject({ action: "transcode", detected: { charset: "euc-kr" } });
    expect((normalizeResourceEntry(entry, policy, "contents[0]").entry as { text: string }).text).toBe(
      sample.text!.repeat(copies),
    );
  });

  it("the reason says why a guess was not used", () => {
    const random = bytesOf(manifest.find((s) => s.file === "random-printable-latin1.256.bin")!);
    expect(run(random).record!.reason).toMatch(/^not UTF-8; (charset not detected confidently|detected .* but)/);
    const short = bytesOf(texts.find((s) => s.file === "ja.shift_jis.12.txt")!);
    expect(run(short).record!.reason).toBe(`not UTF-8; 12 bytes are too few to detect a charset (${DETECT_MIN_BYTES})`);
  });

  it("detectCharset: false keeps the blob; charset preserve labels the detected charset; dry run records without changing", () => {
    const ru = bytesOf(manifest.find((s) => s.file === "ru.koi8_r.full.txt")!);
    expect(run(ru, "text/plain", testPolicy({ detectCharset: false })).record).toMatchObject({
      action: "none",
      reason: "not text",
    });
    const preserved = run(ru, "text/plain", testPolicy({ charset: "preserve" }));
    expect(preserved.record).toMatchObject({
      action: "fix-mime",
      mimeAfter: "text/plain; charset=koi8-r",
      detected: { charset: "koi8-r" },
    });
    const dry = run(ru, "text/plain", testPolicy({ dryRun: true }));
    expect(normalizeResourceEntry(dry.entry, testPolicy({ dryRun: true }), "contents[0]").entry).toBe(dry.entry);
    expect(dry.record).toMatchObject({ action: "transcode", applied: false, detected: { charset: "koi8-r" } });
  });

  it("a blob whose type comes from its URI's extension is detected too; an unknown type is not guessed", () => {
    const de = bytesOf(manifest.find((s) => s.file === "de.latin-1.full.txt")!);
    const fromExtension = normalizeResourceEntry(
      { uri: "file:///docs/brief.txt", mimeType: "application/octet-stream", blob: de.toString("base64") },
      policy,
      "contents[0]",
    );
    expect(fromExtension.record).toMatchObject({
      action: "transcode",
      mimeAfter: "text/plain",
      detected: { charset: "iso-8859-1" },
    });
    const unknown = normalizeResourceEntry(
      { uri: "mem://blob/1", mimeType: "application/octet-stream", blob: de.toString("base64") },
      policy,
      "contents[0]",
    );
    expect(unknown.record!.action).toBe("none");
  });

  it("one message's entries share limits.charsetDetectionBytes of detection: the rest keep their bytes, saying why", () => {
    const de = bytesOf(manifest.find((s) => s.file === "de.latin-1.full.txt")!);
    let latin1 = de;
    while (latin1.length <= DETECT_SAMPLE_BYTES) latin1 = Buffer.concat([latin1, Buffer.from(" "), de]);
    const contents = Array.from({ length: 20 }, (_, i) => ({
      uri: `mem://charset/${i}`,
      mimeType: "text/plain",
      blob: latin1.toString("base64"),
    }));
    const budgeted = testPolicy({ charsetDetectionBytes: 3 * DETECT_SAMPLE_BYTES });
    for (let round = 0; round < 2; round++) {
      // Each message has its own budget: the second read is decided as the first.
      const { value, changes } = normalizeResult("resources/read", { contents }, budgeted);
      expect(changes.map((c) => c.action)).toEqual([
        ...Array(3).fill("transcode"),
        ...Array(17).fill("skip-detection-budget"),
      ]);
      expect(changes[3]!.reason).toMatch(/limits\.charsetDetectionBytes \(24576\) has no room left in this message/);
      const out = (value as { contents: Array<Record<string, unknown>> }).contents;
      expect(out[3]).toBe(contents[3]);
      expect(typeof out[2]!.text).toBe("string");
    }
    // Short entries take only what they need; the default is the config's.
    expect(completePolicyOptions({}).charsetDetectionBytes).toBe(DEFAULT_LIMITS.charsetDetectionBytes);
    const all = normalizeResult("resources/read", { contents }, testPolicy());
    const transcoded = all.changes.filter((c) => c.action === "transcode").length;
    expect(transcoded).toBe(Math.floor(DEFAULT_LIMITS.charsetDetectionBytes / DETECT_SAMPLE_BYTES));
    // 0 turns detection off: every entry says so, as a warning the log keeps.
    const off = normalizeResult("resources/read", { contents }, testPolicy({ charsetDetectionBytes: 0 }));
    expect(new Set(off.changes.map((c) => c.action))).toEqual(new Set(["skip-detection-budget"]));
  });

  it("the decision table (docs/normalization.md) states the thresholds the code uses", () => {
    const readme = readFileSync(`${ROOT}/docs/normalization.md`, "utf8");
    expect(readme).toContain(`at least ${DETECT_MIN_BYTES} bytes`);
    expect(readme).toContain(`multi-byte CJK charsets need confidence ≥ ${DETECT_MULTIBYTE_MIN_CONFIDENCE}`);
    expect(readme).toContain(
      `single-byte charsets ≥ ${DETECT_SHORT_MIN_CONFIDENCE}, or ≥ ${DETECT_LONG_MIN_CONFIDENCE} from ${DETECT_LONG_BYTES} bytes on`,
    );
  });
});

describe("charsets chardet cannot report (it names a sibling instead)", () => {
  const FR = "Le cœur a ses raisons que la raison ne connaît point. Prix du bœuf: 12 € le kilo, œuvre complète. ";
  const DE = "Über den Wolken muss die Freiheit wohl grenzenlos sein. Größere Straßen führen durch grüne Wälder. ";
  const RU = "Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены разумом и совестью. ";
  const cases: [string, string][] = [
    [FR, "iso-8859-15"],
    [FR, "macintosh"],
    [DE, "macintosh"],
    [DE, "cp850"],
    [FR, "cp850"],
    [RU, "maccyrillic"],
    [RU, "cp866"],
  ];

  it("their text is never transcoded in the sibling: it is transcoded right or left as it came", () => {
    for (const [text, charset] of cases) {
      for (const length of [48, 80, 160, 300, 1000, 3000]) {
        const original = text.repeat(Math.ceil(length / text.length) + 1).slice(0, length);
        const { entry, record } = run(iconv.encode(original, charset));
        const out = normalizeResourceEntry(entry, policy, "contents[0]").entry as Record<string, unknown>;
        const what = `${charset}, ${length} bytes: ${record!.reason}`;
        if (record!.action === "transcode") expect(out.text, what).toBe(original);
        else expect(out, what).toBe(entry);
      }
    }
  });

  it("the reason names the sibling that reads the bytes otherwise, or says the guess looks misdecoded", () => {
    const iso15 = run(iconv.encode(FR.repeat(3), "iso-8859-15")).record!;
    expect(iso15).toMatchObject({ action: "none" });
    expect(iso15.reason).toMatch(/^not UTF-8; detected ISO-8859-1 at confidence \d+, but .*: left as they are$/);
    const macRoman = run(iconv.encode(DE.slice(0, 48), "macintosh")).record!;
    expect(macRoman.reason).toMatch(/cannot tell apart\) reads the bytes as other text/);
    expect(run(iconv.encode(DE.repeat(3), "macintosh")).record!.reason).toMatch(/looks misdecoded/);
  });

  it("windows-1252 French and German whose bytes no sibling reads as natural text are still transcoded", () => {
    const plain: [string, string][] = [
      [FR.replace("12 €", "12 francs").repeat(2), "windows-1252"],
      [DE.repeat(2), "windows-1252"],
      [DE.repeat(2), "iso-8859-1"],
    ];
    for (const [text, charset] of plain) {
      const { entry, record } = run(iconv.encode(text, charset));
      expect(record, charset).toMatchObject({ action: "transcode" });
      expect((normalizeResourceEntry(entry, policy, "contents[0]").entry as { text: string }).text).toBe(text);
    }
  });
});

describe("a generic type on bytes whose charset is not detected", () => {
  it("stays a blob with the bytes as they came, and takes the type its extension names, with no charset", () => {
    const bytes = Buffer.from("Caf\xe9 cr\xe8me br\xfbl\xe9e, na\xefve fa\xe7ade. ".repeat(3), "latin1");
    for (const [mimeType, action] of [
      ["application/octet-stream", "fix-mime"],
      [undefined, "fill-mime"],
    ] as const) {
      const entry = {
        uri: "file:///docs/latin1.txt",
        ...(mimeType ? { mimeType } : {}),
        blob: bytes.toString("base64"),
      };
      const { entry: out, record } = normalizeResourceEntry(entry, policy, "contents[0]");
      expect(out).toEqual({ uri: entry.uri, mimeType: "text/plain", blob: entry.blob });
      expect(record).toMatchObject({ action, reason: expect.stringMatching(/^not UTF-8; charset not detected/) });
    }
  });
});
