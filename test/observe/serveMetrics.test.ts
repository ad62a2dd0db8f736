/**
 * `/metrics` and `/report` of a running `serve`: a real SDK client reads
 * resources through the proxy from the real fixture upstream; the bytes-saved counter moves by
 * exactly what the engine saved on those results, and the live report shows the same numbers.
 */
import { testPolicy } from "../helpers/policy.js";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeResult } from "../../src/normalize/index.js";
import { loadCorpus } from "../fixtures/corpus/index.js";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import { connect, hostTransport, raw, startFixtureServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { series } from "./promText.js";
import { tempDir } from "../helpers/tempDir.js";

const dir = tempDir("mcpn-metrics-");
const corpusFile = join(dir, "corpus.json");
writeFileSync(
  corpusFile,
  JSON.stringify(
    loadCorpus()
      .filter((c) => Object.keys(c.policy).length === 0)
      .map((c) => ({ name: c.name, input: c.input })),
  ),
);
const env = { FIXTURE_CORPUS: corpusFile };
const logFile = join(dir, "log", "n.jsonl");

let serve: ServeProcess;
beforeAll(async () => {
  // The fixture reads FIXTURE_CORPUS: serve passes the proxy's environment on only when asked.
  serve = await startFixtureServe(["--inherit-env", "--log-file", logFile], env);
});
afterAll(async () => {
  await serve?.stop();
});

async function scrape(): Promise<string> {
  const res = await fetch(`${serve.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

describe("serve: /metrics and /report", () => {
  it("bytes saved moves by exactly what the engine saved on the results the host got", async () => {
    const uris = [
      "fixture://own/blob/1",
      "file:///docs/readme.md",
      "fixture://own/image",
      "fixture://own/plain.txt",
      "fixture://case/0",
      "fixture://case/1",
      "fixture://case/5",
    ];
    // The same results straight from the upstream, through the pure engine.
    const direct = await connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [FIXTURE_SERVER],
        env: { ...(process.env as Record<string, string>), ...env },
        stderr: "ignore",
      }),
    );
    let saved = 0;
    let grown = 0;
    let bytesIn = 0;
    let rewrites = 0;
    for (const uri of uris) {
      for (const change of normalizeResult(
        "resources/read",
        await raw(direct.client, "resources/read", { uri }),
        testPolicy({}),
      ).changes) {
        if (change.saved > 0) saved += change.saved;
        else grown -= change.saved;
        bytesIn += change.bytesBefore;
        if (change.action !== "none" && !change.action.startsWith("skip-") && !change.action.startsWith("warn-"))
          rewrites++;
      }
    }
    await direct.close();
    expect(saved).toBeGreaterThan(0);

    const before = await scrape();
    expect(series(before, "mcp_normalizer_upstream_up", { server: "fx" })).toBe(0);
    const host = await connect(hostTransport("mcp", { url: serve.url }));
    for (const uri of uris) await raw(host.client, "resources/read", { uri });
    const during = await scrape();
    await host.close();

    const delta = (name: string) =>
      series(during, name, { server: "fx", method: "resources/read" }) -
      series(before, name, { server: "fx", method: "resources/read" });
    expect(delta("mcp_normalizer_bytes_saved_total")).toBe(saved);
    expect(delta("mcp_normalizer_bytes_grown_total")).toBe(grown);
    expect(delta("mcp_normalizer_bytes_in_total")).toBe(bytesIn);
    expect(delta("mcp_normalizer_bytes_out_total")).toBe(bytesIn - saved + grown);
    expect(delta("mcp_normalizer_rewrites_total")).toBe(rewrites);
    expect(delta("mcp_normalizer_normalize_duration_seconds_count")).toBe(uris.length);
    expect(series(during, "mcp_normalizer_upstream_up", { server: "fx" })).toBe(1);
    expect(series(during, "mcp_normalizer_upstream_sessions", { server: "fx" })).toBe(1);
    expect(during).toContain("process_resident_memory_bytes");

    // The live report is built from the same records.
    const res = await fetch(`${serve.url}/report`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    expect(html).toContain("Live from this proxy");
    expect(html).toContain(`data-key="fx" data-bytes="`);
    const savedCell = /data-metric="saved">.*?<div class="exact">([\d,−]+) B/.exec(html);
    expect(Number(savedCell![1]!.replace(/,/g, ""))).toBe(saved - grown);

    // And the log file has one line per changed entry, with the same net saving. SIGTERM makes
    // the proxy flush and close it before exiting.
    expect(await serve.stop()).toBe(0);
    const logged = readFileSync(logFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { saved: number; method: string });
    expect(logged.filter((l) => l.method === "resources/read").reduce((s, l) => s + l.saved, 0)).toBe(saved - grown);
  });
});
