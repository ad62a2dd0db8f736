/**
 * An upstream's error answers lose what the proxy sent it to keep secret, however they are
 * nested; an array inside a batch is passed over (it is no message), never recursed into.
 */
import { describe, expect, it } from "vitest";
import { withoutSecretsInError } from "../../../src/transports/upstream/upstreamMessages.js";
import type { JSONRPCMessage } from "../../../src/transports/types.js";

const SECRET = "Bearer s3cret-value-for-tests";
const secrets = () => [SECRET];

/** `inner` wrapped in `depth` arrays. */
function nested(depth: number, inner: unknown): unknown {
  let value = inner;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe("withoutSecretsInError", () => {
  it("a batch holding an array nested 200,000 deep: its error answers are cleaned, the array passed over", () => {
    const deep = nested(200_000, 1);
    const batch = [
      { jsonrpc: "2.0", id: 1, error: { code: -32000, message: `refused: ${SECRET}` } },
      deep,
    ] as unknown as JSONRPCMessage;
    const cleaned = withoutSecretsInError(batch, secrets) as unknown as unknown[];
    expect((cleaned[0] as { error: { message: string } }).error.message).not.toContain("s3cret");
    expect(cleaned[1]).toBe(deep);
  });

  it("an error whose data is nested 5,000 deep with the secret at the bottom: the secret does not come out", () => {
    const answer = {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32000, message: "no", data: nested(5_000, { token: SECRET }) },
    } as unknown as JSONRPCMessage;
    const cleaned = withoutSecretsInError(answer, secrets);
    expect(JSON.stringify(cleaned)).not.toContain("s3cret");
    expect(JSON.stringify(cleaned)).toContain("nested too deeply to be searched for secrets");
  });

  it("an error nested shallow keeps all it holds but the secret", () => {
    const answer = {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32000, message: "no", data: nested(10, { token: SECRET, other: "kept" }) },
    } as unknown as JSONRPCMessage;
    const text = JSON.stringify(withoutSecretsInError(answer, secrets));
    expect(text).not.toContain("s3cret");
    expect(text).toContain('"other":"kept"');
  });
});
