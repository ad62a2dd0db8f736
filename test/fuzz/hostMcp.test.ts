/**
 * Fuzz, host side, `serve` /mcp (issue 5): random bytes, random JSON and mutated requests
 * POSTed as bodies on one session. After each batch the process is alive, no answer was a
 * 5xx or unreadable, and a ping is answered on the fuzzed session and on a second session
 * (no bad input corrupts another session).
 */
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { openSession, post, rpc } from "../badInput/mcpHttp.js";
import { fuzzSeed, hostLine } from "./arbitraries.js";
import { fixtureConfig, startServeProxy } from "./proxies.js";

const NUM_RUNS = 40;
const MAX_BATCH = 8;
let serve: ServeProcess;
let url: string;
let fuzzed: string;
let bystander: string;

beforeAll(async () => {
  serve = await startServeProxy(fixtureConfig());
  url = `${serve.url}/mcp/fx`;
  fuzzed = await openSession(url);
  bystander = await openSession(url);
});
afterAll(async () => {
  expect(await serve.stop()).toBe(0);
});

async function expectPong(session: string, id: string): Promise<void> {
  const answer = await post(url, rpc(id, "ping"), session);
  expect(answer.status, serve.stderr().slice(-2000)).toBe(200);
  expect(answer.messages).toEqual([{ jsonrpc: "2.0", id, result: {} }]);
}

it(`survives ${NUM_RUNS} batches of up to ${MAX_BATCH} random POST bodies`, async () => {
  let probe = 0;
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(fc.array(hostLine, { minLength: 1, maxLength: MAX_BATCH }), async (bodies) => {
      // Concurrent, as hosts may send; each answer must still be well-formed.
      const answers = await Promise.all(bodies.map((body) => post(url, body, fuzzed)));
      for (const answer of answers) {
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        expect(answer.status, serve.stderr().slice(-2000)).toBeLessThan(500);
        for (const m of answer.messages) expect(m.jsonrpc).toBe("2.0");
      }
      expect(serve.child.exitCode).toBeNull();
      await expectPong(fuzzed, `probe-${++probe}`);
      await expectPong(bystander, `probe-${++probe}`);
    }),
    { seed: fuzzSeed("host → /mcp"), numRuns: NUM_RUNS },
  );
  console.log(`[fuzz] host → /mcp: ${NUM_RUNS} batches; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
});
