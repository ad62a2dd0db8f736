/**
 * The request guard in-process: bearer tokens are compared with
 * `crypto.timingSafeEqual` on equal-length digests, every token every time (a spy counts the
 * calls and the lengths), and Host/Origin decisions.
 */
import * as crypto from "node:crypto";
import { describe, expect, it, vi } from "vitest";

vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const { checkRequest } = await import("../../src/server/requestGuard.js");
const { resolveFrontendOptions } = await import("../../src/server/frontendOptions.js");

const options = (extra: Record<string, unknown> = {}) =>
  resolveFrontendOptions({ serverNames: ["fx"], onSession: () => undefined, health: () => ({}), ...extra } as never);

describe("bearer comparison", () => {
  it("uses timingSafeEqual on equal-length digests for every token, whether the token is right, wrong, short or missing", () => {
    const spy = vi.mocked(crypto.timingSafeEqual);
    const opts = options({ bearerTokens: ["first-token", "second-token-much-longer", "third"] });
    for (const [authorization, accepted] of [
      ["Bearer second-token-much-longer", true],
      ["Bearer first-token", true],
      ["Bearer x", false],
      ["Bearer first-tokeN", false],
      [undefined, false],
    ] as const) {
      spy.mockClear();
      const refusal = checkRequest(
        { host: "127.0.0.1:1", ...(authorization === undefined ? {} : { authorization }) },
        opts,
        true,
      );
      expect(refusal === null).toBe(accepted);
      expect(spy).toHaveBeenCalledTimes(3);
      for (const [a, b] of spy.mock.calls) expect([(a as Buffer).length, (b as Buffer).length]).toEqual([32, 32]);
      if (!accepted) {
        expect(refusal?.status).toBe(401);
        expect(refusal?.headers["www-authenticate"]).toMatch(/^Bearer realm=/);
      }
    }
  });
});

describe("Host and Origin", () => {
  it("refuses a rebinding Host and a foreign Origin with 403; allows loopback and allowedOrigins", () => {
    const opts = options({ allowedOrigins: ["https://app.example"] });
    expect(checkRequest({ host: "evil.example" }, opts, false)?.status).toBe(403);
    expect(checkRequest({ host: "evil.example:8808" }, opts, false)?.message).toMatch(/allowedHosts/);
    expect(checkRequest({ host: "127.0.0.1:8808", origin: "https://evil.example" }, opts, false)?.status).toBe(403);
    expect(checkRequest({ host: "127.0.0.1:8808", origin: "http://localhost:3000" }, opts, false)).toBeNull();
    expect(checkRequest({ host: "localhost:8808", origin: "http://[::1]:9" }, opts, false)).toBeNull();
    expect(checkRequest({ host: "localhost", origin: "https://app.example" }, opts, false)).toBeNull();
    expect(checkRequest({ host: "localhost", origin: "null" }, opts, false)?.status).toBe(403);
  });
});

describe("Host parsing is strict", () => {
  it("accepts name, name:port, IPv4 and [v6] with a port up to 65535; refuses anything trimmed, guessed or malformed", () => {
    const opts = options();
    for (const host of ["localhost", "LOCALHOST:8808", "127.0.0.1:65535", "[::1]", "[::1]:1"])
      expect(checkRequest({ host }, opts, false), host).toBeNull();
    for (const host of [
      "localhost:",
      "localhost:x",
      "localhost:65536",
      "localhost:8808:1",
      "[::1]junk",
      "[::1",
      "[zz::1]",
      "a@localhost",
      "localhost ",
      " localhost",
      "localhost\t",
      "local host",
      "localhost/x",
      "",
      "localhost.:80",
    ]) {
      const refusal = checkRequest({ host }, opts, false);
      expect(refusal?.status, JSON.stringify(host)).toBe(403);
    }
    expect(checkRequest({ host: "localhost:x" }, opts, false)?.message).toContain("is not a valid host[:port]");
    // allowedHosts entries with a port match only that port.
    const withPort = options({ allowedHosts: ["proxy.internal:8808"] });
    expect(checkRequest({ host: "proxy.internal:8808" }, withPort, false)).toBeNull();
    expect(checkRequest({ host: "proxy.internal:9999" }, withPort, false)?.status).toBe(403);
  });
});
