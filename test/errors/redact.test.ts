import { describe, expect, it } from "vitest";
import { headerSecrets, REDACTED, redactedExcerpt, redactSecrets, urlSecrets } from "../../src/errors/redact.js";

describe("redactSecrets", () => {
  it("replaces every occurrence of every secret, the longest first", () => {
    const text = "auth=Bearer tok-123456 again tok-123456 key=k-999";
    expect(redactSecrets(text, ["tok-123456", "Bearer tok-123456", "k-999", undefined])).toBe(
      `auth=${REDACTED} again ${REDACTED} key=${REDACTED}`,
    );
  });

  it("finds a secret quoted in another case, as it is and in its JSON and percent forms, not in its base64", () => {
    const secret = "Sk-LiveToken9QzX/åb";
    for (const written of [
      "sk-livetoken9qzx/åb",
      "SK-LIVETOKEN9QZX/ÅB",
      "sK-lIVEtOKEN9qZx\\/\\u00e5b",
      "sk-livetoken9qzx%2f%c3%a5b",
    ])
      expect(redactSecrets(`echo ${written} end`, [secret]), written).toBe(`echo ${REDACTED} end`);
    const base64 = Buffer.from(secret).toString("base64");
    expect(redactSecrets(`b64=${base64.toLowerCase()}`, [secret])).toBe(`b64=${base64.toLowerCase()}`);
    expect(redactedExcerpt("cut at sk-liveto", 100, [secret])).toBe(`cut at ${REDACTED}`);
  });

  it("finds a secret in another case whatever its letters: µ upper-cased is Greek Μ, ϐ is Β", () => {
    for (const [secret, written] of [
      ["pass-µ-word-1234", "PASS-Μ-WORD-1234"],
      ["pass-µ-word-1234", "pass-μ-word-1234"],
      ["ϐeta-secret-99", "ΒETA-SECRET-99"],
      ["straße-geheim-1", "STRAßE-GEHEIM-1"],
    ] as const)
      expect(redactSecrets(`bad credentials "${written}"`, [secret]), written).toBe(`bad credentials "${REDACTED}"`);
  });

  it("removes copies of a secret that share letters (its start is its end), in any case", () => {
    expect(redactSecrets("x abcabcabc y", ["abcabc"])).toBe(`x ${REDACTED} y`);
    expect(redactSecrets("x ABCabcabc y", ["abcabc"])).toBe(`x ${REDACTED} y`);
    expect(redactSecrets("cµcµIIcµIIc", ["cµIIc"])).toBe(`cµ${REDACTED}`);
  });

  it("compares letters by their upper case alike whatever else the text holds (ſ as S, ı as I)", () => {
    const secret = "secret-token";
    const base64 = Buffer.from(secret).toString("base64");
    expect(redactSecrets("ſecret-token", [secret])).toBe(REDACTED);
    expect(redactSecrets(`ſecret-token ${base64}`, [secret])).toBe(`${REDACTED} ${REDACTED}`);
    expect(redactSecrets("ıd-secret1", ["id-secret1"])).toBe(REDACTED);
  });

  it("removes two secrets that overlap together, one of them quoted in another case", () => {
    const secrets = ["tenant-acme-corp-id", "CORP-ID-s3cr3t77"];
    expect(redactSecrets("denied for TENANT-ACME-CORP-ID-s3cr3t77 now", secrets)).toBe(`denied for ${REDACTED} now`);
    expect(redactSecrets("a tenant-acme-corp-id b CORP-ID-s3cr3t77 c", secrets)).toBe(`a ${REDACTED} b ${REDACTED} c`);
  });

  it("finds a secret ending in Σ followed by letters, in its case and another (lower-cased, Σ is σ or ς)", () => {
    const secret = "tokenΣ";
    for (const written of ["tokenΣabc", "TOKENΣabc", "tokenσabc", "tokenς", "TOKENσ"])
      expect(redactSecrets(`for ${written}`, [secret]), written).not.toMatch(/token/i);
  });

  it("leaves values shorter than four characters and text without secrets as it is", () => {
    expect(redactSecrets("a 1 on it", ["a", "1", "on", ""])).toBe("a 1 on it");
    expect(redactSecrets("nothing here", ["secret-value"])).toBe("nothing here");
  });
});

describe("headerSecrets", () => {
  it("gives each value whole and the credentials of a scheme-prefixed value alone", () => {
    expect(headerSecrets({ Authorization: "Bearer abc.def-123", "X-Api-Key": " key-42 " })).toEqual([
      "Bearer abc.def-123",
      "abc.def-123",
      "key-42",
    ]);
    expect(headerSecrets(undefined)).toEqual([]);
  });

  it("gives a Basic credential's user:password pair and password decoded (a server may quote them so)", () => {
    const basic = Buffer.from("alice:hunter2-pw").toString("base64");
    expect(headerSecrets({ Authorization: `Basic ${basic}` })).toEqual([
      `Basic ${basic}`,
      basic,
      "alice:hunter2-pw",
      "hunter2-pw",
    ]);
    // Not base64 of a pair: nothing decoded is taken.
    expect(headerSecrets({ Authorization: "basic not-base64!" })).toEqual(["basic not-base64!", "not-base64!"]);
  });
});

describe("secrets a server encoded", () => {
  it("finds a secret inside a longer base64 text, whatever its offset and what follows it", () => {
    const secret = "Bearer sk-live-0123456789abcd";
    for (const before of ["", "{", '{"', '{"t"', '{"t":"']) {
      for (const after of ["", '"', '"}', '"}\n']) {
        const encoded = Buffer.from(`${before}${secret}${after}`).toString("base64");
        const redacted = redactSecrets(`body=${encoded}`, [secret]);
        expect(redacted).toContain(REDACTED);
        // What is left of the encoding no longer gives the secret back.
        const left = redacted.slice("body=".length).split(REDACTED);
        for (const part of left) expect(Buffer.from(part, "base64").toString("latin1")).not.toContain("sk-live-0123");
      }
    }
  });

  it("finds a secret in base64, plain and URL-safe, padded or not", () => {
    const secret = "k3y/S3cr3t+v@l";
    const plain = Buffer.from(secret).toString("base64");
    expect(plain).toBe("azN5L1MzY3IzdCt2QGw=");
    for (const written of [plain, plain.replace(/=+$/, ""), Buffer.from(secret).toString("base64url")])
      expect(redactSecrets(`echo b64=${written} end`, [secret])).toBe(`echo b64=${REDACTED} end`);
  });
});

describe("secrets in their quoted forms and at a cut", () => {
  it('finds a secret written as a JSON string\'s body writes it: \\/ for /, \\" for ", \\uXXXX for non-ASCII', () => {
    const secret = 'sk/live"åbc-12345';
    expect(redactSecrets(`key=${encodeURIComponent(secret)}&x=1`, [secret])).toBe(`key=${REDACTED}&x=1`);
    for (const written of ['sk\\/live\\"\\u00e5bc-12345', 'sk/live\\"åbc-12345', 'sk\\/live\\"åbc-12345'])
      expect(redactSecrets(`token=${written};`, [secret])).toBe(`token=${REDACTED};`);
  });

  it("redacts before cutting, and a secret's start left at the cut", () => {
    const secret = "sk_live_AbCdEfGhIjKlMnOp";
    expect(redactedExcerpt(`abc ${secret} def`, 10, [secret])).toBe(`abc ${REDACTED}`.slice(0, 10));
    expect(redactedExcerpt(`0123456789 ${secret}`, 20, [secret])).toBe(`0123456789 ${REDACTED}`.slice(0, 20));
    // A body read only up to a limit can end in the start of a secret.
    expect(redactedExcerpt("0123456789 sk_live_AbCd", 100, [secret])).toBe(`0123456789 ${REDACTED}`);
    expect(redactedExcerpt("plain text that is long", 10, [secret])).toBe("plain text");
  });
});

describe("urlSecrets", () => {
  it("gives the userinfo and long query values, as written and decoded", () => {
    expect(urlSecrets("https://user:p%40ss@host/mcp?api_key=KEY-0123456789&format=json")).toEqual([
      "user",
      "user",
      "p%40ss",
      "p@ss",
      "KEY-0123456789",
      "KEY-0123456789",
    ]);
    expect(urlSecrets("not a url")).toEqual([]);
  });
});
