/**
 * Fuzz, upstream side, through `serve` /mcp (issue 5): the same mutated upstream answers as
 * upstream.test.ts, carried to an HTTP host (JSON or SSE encoding of whatever the upstream
 * sent). Each read gets exactly one readable JSON-RPC answer; afterwards the process is alive
 * and a ping is answered on the session and on a second one.
 */
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { rawUpstreamConfig } from "../badInput/cases.js";
import { openSession, post, rpc } from "../badInput/mcpHttp.js";
import { fuzzSeed, upstreamLine } from "./arbitraries.js";
import { FUZZ_REQUEST_TIMEOUT_MS, startServeProxy } from "./proxies.js";

const NUM_RUNS = 150;
const MAX_LINES = 6;
let serve: ServeProcess;
let url: string;
let fuzzed: string;
let bystander: string;

beforeAll(async () => {
  serve = await startServeProxy(rawUpstreamConfig({ limits: { requestTimeoutMs: FUZZ_REQUEST_TIMEOUT_MS } }));
  url = `${serve.url}/mcp/raw`;
  fuzzed = await openSession(url);
  bystander = await openSession(url);
});
afterAll(async () => {
  expect(await serve.stop()).toBe(0);
});

async function expectPong(session: string, id: string): Promise<void> {
  const answer = await post(url, rpc(id, "ping"), session);
  expect(answer.messages, serve.stderr().slice(-2000)).toEqual([{ jsonrpc: "2.0", id, result: {} }]);
}

it(`survives ${NUM_RUNS} reads answered with up to ${MAX_LINES} mutated upstream lines`, async () => {
  let n = 0;
  const kinds = { result: 0, error: 0 };
  await fc.assert(
    fc.asyncProperty(fc.array(upstreamLine, { minLength: 1, maxLength: MAX_LINES }), async (lines) => {
      const id = `read-${++n}`;
      const answer = await post(url, rpc(id, "resources/read", { uri: "fixture://x", _emit: lines.map((l) => l.toString("base64")) }), fuzzed);
      expect(answer.status, serve.stderr().slice(-2000)).toBe(200);
      const mine = answer.messages.filter((m) => m.id === id);
      expect(mine).toHaveLength(1);
      for (const m of answer.messages) expect(m.jsonrpc).toBe("2.0");
      kinds["result" in mine[0]! ? "result" : "error"]++;
      // What an SDK host can parse (else its request would wait forever): an error object, or an object result.
      if ("error" in mine[0]!) expect(mine[0]!.error).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
      else expect(mine[0]!.result).toBeTypeOf("object");
      expect(serve.child.exitCode).toBeNull();
      await expectPong(fuzzed, `probe-${n}`);
      await expectPong(bystander, `other-${n}`);
    }),
    { seed: fuzzSeed("upstream → /mcp"), numRuns: NUM_RUNS },
  );
  console.log(`[fuzz] upstream → /mcp: ${NUM_RUNS} reads; answers ${JSON.stringify(kinds)}`);
});
