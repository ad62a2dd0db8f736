import { describe, expect, it } from "vitest";
import { headerSecrets, REDACTED, redactSecrets } from "../../src/errors/redact.js";

describe("redactSecrets", () => {
  it("replaces every occurrence of every secret, the longest first", () => {
    const text = "auth=Bearer tok-123456 again tok-123456 key=k-999";
    expect(redactSecrets(text, ["tok-123456", "Bearer tok-123456", "k-999", undefined])).toBe(
      `auth=${REDACTED} again ${REDACTED} key=${REDACTED}`,
    );
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
});
