/**
 * The content corpus runs through the pure core and through every transport,
 * with the same expected result. A real fixture upstream serves each case; a real SDK client
 * reads it through `stdio`, `/mcp`, `/sse` and `/ws`.
 */
import { testPolicy } from "../helpers/policy.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { normalizeResult } from "../../src/normalize/index.js";
import { loadCorpus } from "../fixtures/corpus/index.js";
import { CLI, FIXTURE_SERVER } from "../helpers/paths.js";
import {
  connect,
  HOST_KINDS,
  hostTransport,
  raw,
  startFixtureServe,
  startServe,
  type HostKind,
  type ServeProcess,
} from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";

const cases = loadCorpus().filter((c) => Object.keys(c.policy).length === 0);
const dir = tempDir("mcpn-corpus-");
const corpusFile = join(dir, "corpus.json");
writeFileSync(corpusFile, JSON.stringify(cases.map((c) => ({ name: c.name, input: c.input }))));
const env = { FIXTURE_CORPUS: corpusFile };

// The same corpus with every payload longer than one byte read, normalized and written as bytes
// (limits.rawStringBytes): the host must not be able to tell the difference.
const rawConfigFile = join(dir, "raw.config.json");
writeFileSync(
  rawConfigFile,
  JSON.stringify({
    mcpServers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], env } },
    limits: { rawStringBytes: 2 },
  }),
);

let serve: ServeProcess;
let rawServe: ServeProcess;
beforeAll(async () => {
  // The fixture reads FIXTURE_CORPUS from its environment: passed on with --inherit-env, or in the config's env.
  [serve, rawServe] = await Promise.all([
    startFixtureServe(["--inherit-env"], env),
    startServe(["--config", rawConfigFile]),
  ]);
});
afterAll(async () => {
  await Promise.all([serve?.stop(), rawServe?.stop()]);
});

function transportFor(kind: HostKind, rawStrings: boolean) {
  if (kind === "stdio") {
    const upstream = rawStrings
      ? ["--config", rawConfigFile, "--server", "fx"]
      : ["--", process.execPath, FIXTURE_SERVER];
    return new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "stdio", ...upstream],
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: "pipe",
      maxBufferSize: 512 * 1024 * 1024,
    } as never);
  }
  return hostTransport(kind, { url: (rawStrings ? rawServe : serve).url });
}

describe.each(HOST_KINDS.flatMap((kind) => [[kind, false] as const, [kind, true] as const]))(
  "the corpus through %s (raw strings: %s)",
  (kind, rawStrings) => {
    it(`every case (${cases.length}) comes back exactly as the pure engine says, key order included`, async () => {
      expect(cases.length).toBeGreaterThan(20);
      const host = await connect(transportFor(kind, rawStrings));
      try {
        const policy = testPolicy();
        for (const [i, c] of cases.entries()) {
          const result = await raw(host.client, "resources/read", { uri: `fixture://case/${i}` });
          const expected = normalizeResult("resources/read", { contents: [c.input] }, policy).value as {
            contents: unknown[];
          };
          expect(JSON.stringify(result.contents), `${kind}: ${c.name}`).toBe(JSON.stringify(expected.contents));
          expect(JSON.stringify(expected.contents[0]), `engine vs corpus: ${c.name}`).toBe(JSON.stringify(c.expected));
        }
      } finally {
        await host.close();
      }
    });
  },
);
