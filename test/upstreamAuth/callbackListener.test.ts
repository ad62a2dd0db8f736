/**
 * The loopback callback quotes the authorization server's `error_description` in the terminal:
 * its control characters are shown as symbols, so no escape sequence (a cleared screen) or fake
 * line ("Logged in; tokens stored") reaches the user. Requests without the login's state are
 * refused without ending it; its own redirect's `error` ends it.
 */
import { describe, expect, it } from "vitest";
import { visible } from "../../src/errors/visible.js";
import { listenForCallback, MAX_REFUSALS_LOGGED } from "../../src/upstreamAuth/callbackListener.js";

describe("the login callback's error answer", () => {
  it("is quoted with its control characters made visible", async () => {
    const listener = await listenForCallback(0, () => "s", "login");
    const description = "\u001b[2J\u001b[Hdenied\nLogged in; tokens stored in /tmp/x\u0007";
    const url = new URL(listener.redirectUrl);
    url.searchParams.set("state", "s");
    url.searchParams.set("error", "access_denied");
    url.searchParams.set("error_description", description);
    const failed = listener.waitForCode(5000).then(
      () => "no error",
      (error: Error) => error.message,
    );
    expect((await fetch(url)).status).toBe(400);
    const message = await failed;
    await listener.close();
    expect(message).toContain("\u241b[2J\u241b[Hdenied Logged in; tokens stored in /tmp/x\u2407");
    for (const invisible of ["\u001b", "\u0007", "\n"]) expect(message).not.toContain(invisible);
  });

  it("visible() leaves ordinary text as it is", () => {
    expect(visible("café — 日本語 ok")).toBe("café — 日本語 ok");
    expect(visible("a\u202eb\u0085c")).toBe("aU+202EbU+0085c");
  });

  it("refuses requests without its state and waits on; its own redirect's error ends it", async () => {
    const warnings: string[] = [];
    const listener = await listenForCallback(
      0,
      () => "mine",
      "login",
      (message) => warnings.push(message),
    );
    const outcome = listener.waitForCode(10_000).then(
      () => "no error",
      (error: Error) => error.message,
    );
    try {
      const at = (query: string) => fetch(`${listener.redirectUrl}${query}`, { signal: AbortSignal.timeout(5000) });
      expect((await at("")).status).toBe(400);
      expect((await at("?error=access_denied&state=theirs")).status).toBe(400);
      for (let i = 0; i < 20; i++) expect((await at(`?code=x&state=s${i}`)).status).toBe(400);
      expect(warnings).toHaveLength(MAX_REFUSALS_LOGGED);
      expect((await at("?error=access_denied&error_description=no&state=mine")).status).toBe(400);
      expect(await outcome).toMatch(/login: the authorization server answered "access_denied": no/);
    } finally {
      await listener.close();
    }
  });

  it("still times out after refused requests, saying how many", async () => {
    const listener = await listenForCallback(0, () => "mine", "login");
    try {
      const waiting = listener.waitForCode(1500).then(
        () => "no error",
        (error: Error) => error.message,
      );
      for (let i = 0; i < 3; i++)
        await fetch(`${listener.redirectUrl}?state=s${i}`, { signal: AbortSignal.timeout(5000) });
      expect(await waiting).toMatch(
        /no answer from the browser within 1500 ms .*\(3 requests without its state refused\)/,
      );
    } finally {
      await listener.close();
    }
  });
});
