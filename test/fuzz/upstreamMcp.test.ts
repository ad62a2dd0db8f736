/**
 * Fuzz, upstream side, through `serve` /mcp: the same mutated upstream answers as
 * upstream.test.ts, carried to an HTTP host (JSON or SSE encoding of whatever the upstream
 * sent). Each read gets exactly one readable JSON-RPC answer; afterwards the process is alive
 * and a ping is answered on the session and on a second one.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { rawUpstreamConfig } from "../badInput/cases.js";
import { post, rpc } from "../badInput/mcpHttp.js";
import { fuzzSeed, upstreamLine } from "./arbitraries.js";
import { FUZZ_REQUEST_TIMEOUT_MS, mcpFuzzTarget } from "./proxies.js";

const NUM_RUNS = 150;
const MAX_LINES = 6;
const target = mcpFuzzTarget(() => rawUpstreamConfig({ limits: { requestTimeoutMs: FUZZ_REQUEST_TIMEOUT_MS } }), "raw");

it(`survives ${NUM_RUNS} reads answered with up to ${MAX_LINES} mutated upstream lines`, async () => {
  let n = 0;
  const kinds = { result: 0, error: 0 };
  await fc.assert(
    fc.asyncProperty(fc.array(upstreamLine, { minLength: 1, maxLength: MAX_LINES }), async (lines) => {
      const id = `read-${++n}`;
      const answer = await post(
        target.url,
        rpc(id, "resources/read", { uri: "fixture://x", _emit: lines.map((l) => l.toString("base64")) }),
        target.fuzzed,
      );
      expect(answer.status, target.serve.stderr().slice(-2000)).toBe(200);
      const mine = answer.messages.filter((m) => m.id === id);
      expect(mine).toHaveLength(1);
      for (const m of answer.messages) expect(m.jsonrpc).toBe("2.0");
      kinds["result" in mine[0]! ? "result" : "error"]++;
      // What an SDK host can parse (else its request would wait forever): an error object, or an object result.
      if ("error" in mine[0]!)
        expect(mine[0]!.error).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
      else expect(mine[0]!.result).toBeTypeOf("object");
      expect(target.serve.child.exitCode).toBeNull();
      await target.expectPong(target.fuzzed, `probe-${n}`);
      await target.expectPong(target.bystander, `other-${n}`);
    }),
    { seed: fuzzSeed("upstream → /mcp"), numRuns: NUM_RUNS },
  );
  console.log(`[fuzz] upstream → /mcp: ${NUM_RUNS} reads; answers ${JSON.stringify(kinds)}`);
});
