/**
 * A request whose `params._meta` is not an object, or whose `progressToken` is not a string or an
 * integer, is one the official servers drop without an answer (the SDK's reader refuses it): the
 * proxy answers it at once with Invalid params instead of forwarding it to wait out
 * `limits.requestTimeoutMs`. Well-formed tokens still go through; so does `null` (Python's SDK
 * reads it as absent), which the proxy leaves to the server. A raw host on `stdio` in
 * front of the official everything server.
 */
import { describe, expect, it } from "vitest";
import { everythingBehindStdio } from "../helpers/rawStdio.js";

const proxy = everythingBehindStdio();

const call = (meta: unknown) => ({ name: "echo", arguments: { message: "hi" }, _meta: meta });

describe("a malformed progress token or _meta", () => {
  it.each([
    [
      "an array token",
      { progressToken: [1] },
      '"params._meta.progressToken" must be a string or an integer, not an array',
    ],
    [
      "an object token",
      { progressToken: {} },
      '"params._meta.progressToken" must be a string or an integer, not an object',
    ],
    [
      "a boolean token",
      { progressToken: true },
      '"params._meta.progressToken" must be a string or an integer, not true',
    ],
    [
      "a fractional token",
      { progressToken: 1.5 },
      '"params._meta.progressToken" must be a string or an integer, not 1.5',
    ],
    ["_meta that is a string", "x", '"params._meta" must be an object, not "x"'],
    ["_meta that is an array", [], '"params._meta" must be an object, not an array'],
  ])("%s: answered at once with -32602, not forwarded", async (name, meta, why) => {
    const answer = await proxy().request(`bad ${name}`, "tools/call", call(meta), 5000);
    expect(answer.error).toEqual({ code: -32602, message: `Invalid params: ${why}` });
  });

  it("well-formed tokens (a string, an integer) still reach the server and are answered", async () => {
    for (const token of ["t-1", 7, -5]) {
      const answer = await proxy().request(`good ${token}`, "tools/call", call({ progressToken: token }), 10_000);
      expect(answer.result).toMatchObject({ content: [{ type: "text", text: "Echo: hi" }] });
    }
  });
});
