/**
 * Fuzz, upstream side: test/fixtures/servers/raw-upstream.mjs answers a resources/read
 * with generated lines — mutated result shapes (contents not an array, entries with random
 * keys, random base64/text, random mimeTypes), wrong ids, error objects of any shape, non-JSON
 * lines, invalid UTF-8 — then a well-formed answer. Through `stdio`: the read gets exactly one
 * answer, the process is alive, a ping and a plain read are answered, nothing but JSON-RPC
 * appeared on stdout.
 */
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RawStdio } from "../helpers/rawStdio.js";
import { rawUpstreamConfig } from "../badInput/cases.js";
import { fuzzSeed, upstreamLine } from "./arbitraries.js";
import { expectCleanStdout, PROBE_TIMEOUT_MS, startStdioProxy } from "./proxies.js";

const NUM_RUNS = 400;
const MAX_LINES = 6;
let proxy: RawStdio;

beforeAll(async () => {
  proxy = await startStdioProxy(rawUpstreamConfig({ limits: { requestTimeoutMs: 2_000 } }), "raw");
});
afterAll(async () => {
  expect(await proxy.close()).toBe(0);
});

it(`survives ${NUM_RUNS} reads answered with up to ${MAX_LINES} mutated upstream lines`, async () => {
  let n = 0;
  const kinds = { result: 0, error: 0 };
  await fc.assert(
    fc.asyncProperty(fc.array(upstreamLine, { minLength: 1, maxLength: MAX_LINES }), async (lines) => {
      const id = `read-${++n}`;
      const answer = await proxy.request(
        id,
        "resources/read",
        { uri: "fixture://x", _emit: lines.map((l) => l.toString("base64")) },
        PROBE_TIMEOUT_MS,
      );
      expect("result" in answer || "error" in answer).toBe(true);
      kinds["result" in answer ? "result" : "error"]++;
      // What an SDK host can parse (else its request would wait forever): an error object, or an object result.
      if ("error" in answer)
        expect(answer.error).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
      else expect(answer.result).toBeTypeOf("object");
      const pong = await proxy.request(`probe-${n}`, "ping", {}, PROBE_TIMEOUT_MS);
      expect(pong.result).toEqual({});
      const read = await proxy.request(`plain-${n}`, "resources/read", { uri: "fixture://x" }, PROBE_TIMEOUT_MS);
      expect(read.result).toEqual({ contents: [] });
      expectCleanStdout(proxy);
      expect(proxy.messages.filter((m) => m.id === id)).toHaveLength(1);
    }),
    { seed: fuzzSeed("upstream → stdio"), numRuns: NUM_RUNS },
  );
  console.log(`[fuzz] upstream → stdio: ${NUM_RUNS} reads; answers ${JSON.stringify(kinds)}`);
});
