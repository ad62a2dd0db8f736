/**
 * Fuzz, host side, `stdio`: random byte lines, random JSON and mutated requests
 * written to the proxy's stdin. After each batch the process is alive, a ping is answered,
 * and nothing but JSON-RPC ever appeared on its stdout.
 */
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RawStdio } from "../helpers/rawStdio.js";
import { fuzzSeed, hostLine } from "./arbitraries.js";
import { expectCleanStdout, fixtureConfig, PROBE_TIMEOUT_MS, startStdioProxy } from "./proxies.js";

const NUM_RUNS = 300;
const MAX_BATCH = 20;
let proxy: RawStdio;

beforeAll(async () => {
  proxy = await startStdioProxy(fixtureConfig(), "fx");
});
afterAll(async () => {
  expect(await proxy.close()).toBe(0);
});

it(`survives ${NUM_RUNS} batches of up to ${MAX_BATCH} random host lines`, async () => {
  let probe = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(hostLine, { minLength: 1, maxLength: MAX_BATCH }), async (lines) => {
      proxy.child.stdin.write(Buffer.concat(lines.flatMap((line) => [line, Buffer.from("\n")])));
      const pong = await proxy.request(`probe-${++probe}`, "ping", {}, PROBE_TIMEOUT_MS);
      expect(pong.result).toEqual({});
      const read = await proxy.request(
        `probe-${++probe}`,
        "resources/read",
        { uri: "fixture://own/plain.txt" },
        PROBE_TIMEOUT_MS,
      );
      expect(read.result).toMatchObject({ contents: [{ uri: "fixture://own/plain.txt", text: "already fine" }] });
      expectCleanStdout(proxy);
    }),
    { seed: fuzzSeed("host → stdio"), numRuns: NUM_RUNS },
  );
  console.log(`[fuzz] host → stdio: ${NUM_RUNS} batches, ${proxy.messages.length} messages out`);
});
