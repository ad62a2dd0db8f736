/**
 * Fuzz, host side, `serve` /mcp: random bytes, random JSON and mutated requests
 * POSTed as bodies on one session. After each batch the process is alive, no answer was a
 * 5xx or unreadable, and a ping is answered on the fuzzed session and on a second session
 * (no bad input corrupts another session).
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { post } from "../badInput/mcpHttp.js";
import { fuzzSeed, hostLine } from "./arbitraries.js";
import { fixtureConfig, mcpFuzzTarget } from "./proxies.js";

const NUM_RUNS = 40;
const MAX_BATCH = 8;
const target = mcpFuzzTarget(fixtureConfig, "fx");

it(`survives ${NUM_RUNS} batches of up to ${MAX_BATCH} random POST bodies`, async () => {
  let probe = 0;
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(fc.array(hostLine, { minLength: 1, maxLength: MAX_BATCH }), async (bodies) => {
      // Concurrent, as hosts may send; each answer must still be well-formed.
      const answers = await Promise.all(bodies.map((body) => post(target.url, body, target.fuzzed)));
      for (const answer of answers) {
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        expect(answer.status, target.serve.stderr().slice(-2000)).toBeLessThan(500);
        for (const m of answer.messages) expect(m.jsonrpc).toBe("2.0");
      }
      expect(target.serve.child.exitCode).toBeNull();
      await target.expectPong(target.fuzzed, `probe-${++probe}`);
      await target.expectPong(target.bystander, `probe-${++probe}`);
    }),
    { seed: fuzzSeed("host → /mcp"), numRuns: NUM_RUNS },
  );
  console.log(`[fuzz] host → /mcp: ${NUM_RUNS} batches; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
});
