/**
 * Single-byte charsets are decoded natively (Node's latin1, ICU's TextDecoder) and decided from
 * the byte values present, not through iconv-lite's per-byte loop and scans of the decoded
 * text: 50 MiB of undeclared Latin-1 held the proxy's one thread for seconds that way. The text
 * must be exactly what iconv-lite gives; where no native decoder agrees with iconv-lite's table
 * (cp437), or a byte has no character, iconv-lite still decides.
 */
import { createRequire } from "node:module";
import { describe, expect, it, vi } from "vitest";
import { decodeStrict } from "../../src/normalize/charset.js";
import { detectCharset } from "../../src/normalize/charsetDetection.js";
import { normalizeResourceEntry } from "../../src/normalize/index.js";
import { testPolicy } from "../helpers/policy.js";

const iconv = createRequire(import.meta.url)("iconv-lite") as typeof import("iconv-lite");

const FRENCH =
  "Le cœur a ses raisons que la raison ne connaît point. Déjà vu, café, élève, où est la fenêtre? “Ça va.”\n";

/** iconv-lite decodes of more than a byte table (256 bytes) while `run` runs. */
function payloadDecodes<T>(run: () => T): { result: T; decodes: number } {
  const decode = vi.spyOn(iconv, "decode");
  try {
    const result = run();
    const decodes = decode.mock.calls.filter(([bytes]) => (bytes as Buffer).length > 256).length;
    return { result, decodes };
  } finally {
    decode.mockRestore();
  }
}

describe("single-byte decoding", () => {
  it("decodes undeclared Latin-1 without iconv-lite's per-byte decode, to the same text", () => {
    const bytes = Buffer.from(
      "Le coeur a ses raisons que la raison ne connaît point. Déjà vu, café.\n".repeat(2000),
      "latin1",
    );
    const { result, decodes } = payloadDecodes(() =>
      normalizeResourceEntry(
        { uri: "mem://fast/latin1", mimeType: "text/plain", blob: bytes.toString("base64") },
        testPolicy(),
        "contents[0]",
      ),
    );
    expect(decodes).toBe(0);
    expect(result.record).toMatchObject({ action: "transcode" });
    expect((result.entry as { text: string }).text).toBe(iconv.decode(bytes, "iso-8859-1"));
  });

  it("decodes declared windows-1252 and windows-1251 natively where ICU reads the bytes as iconv-lite does", () => {
    const cases: Array<[string, Buffer]> = [
      ["windows-1252", iconv.encode(FRENCH.repeat(50), "windows-1252")],
      ["windows-1251", iconv.encode("Все люди рождаются свободными и равными.\n".repeat(50), "windows-1251")],
      ["koi8-r", iconv.encode("Все люди рождаются свободными и равными.\n".repeat(50), "koi8-r")],
    ];
    for (const [charset, bytes] of cases) {
      const { result, decodes } = payloadDecodes(() => decodeStrict(bytes, charset));
      expect(decodes, charset).toBe(0);
      expect(result, charset).toBe(iconv.decode(bytes, charset));
    }
  });

  it("decodes from the table what no native decoder reads the same, and leaves bytes without a character to iconv-lite", () => {
    // Node 20's TextDecoder reads windows-1252's 0x80–0x9F as C1 controls; it has no cp437.
    const cases: Array<[string, Buffer]> = [
      ["windows-1252", iconv.encode("Le cœur “Ça va.” — 5 €\n".repeat(50), "windows-1252")],
      ["cp437", iconv.encode("Größe ½ café ░▒▓\n".repeat(50), "cp437")],
    ];
    for (const [charset, bytes] of cases) {
      const { result, decodes } = payloadDecodes(() => decodeStrict(bytes, charset));
      expect(decodes, charset).toBe(0);
      expect(result, charset).toBe(iconv.decode(bytes, charset));
    }
    // 0x81 has no character in windows-1252 (iconv-lite reads U+FFFD): not exact, so null.
    const undefinedByte = Buffer.concat([iconv.encode(FRENCH, "windows-1252"), Buffer.from([0x81])]);
    expect(decodeStrict(undefinedByte, "windows-1252")).toBeNull();
  });

  it("detects Latin-1 and windows-1252 from the bytes present, to iconv-lite's text", () => {
    const line = "Le coeur a ses raisons que la raison ne connaît point. Déjà vu, café, élève.\n".repeat(20);
    const latin1 = Buffer.from(line, "latin1");
    const { result, decodes } = payloadDecodes(() => detectCharset(latin1));
    expect(decodes).toBe(0);
    expect(result).toMatchObject({ detected: true, charset: "iso-8859-1", text: line });
    // 0x85 is a C1 control in ISO-8859-1 and "…" in windows-1252, which chardet then reports.
    const ellipsis = Buffer.from(`${line}\u0085`, "latin1");
    expect(detectCharset(ellipsis)).toMatchObject({ detected: true, charset: "windows-1252", text: `${line}…` });
  });
});
