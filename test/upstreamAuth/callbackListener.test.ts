/**
 * The loopback callback quotes the authorization server's `error_description` in the terminal:
 * its control characters are shown as symbols, so no escape sequence (a cleared screen) or fake
 * line ("Logged in; tokens stored") reaches the user.
 */
import { describe, expect, it } from "vitest";
import { visible } from "../../src/errors/visible.js";
import { listenForCallback } from "../../src/upstreamAuth/callbackListener.js";

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
});
