/**
 * `audit` against real upstreams: the fixture server serving the whole corpus over
 * several resources/list pages, the official everything server, and a small upstream whose
 * reads fail. The audit's totals must equal the sums of the engine's own records for the same
 * results, read independently.
 */
import { testPolicy } from "../helpers/policy.js";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { policyOptionsFor } from "../../src/config/policy.js";
import { ConfigSchema } from "../../src/config/schema.js";
import type { ChangeRecord } from "../../src/normalize/change.js";
import { normalizeResult } from "../../src/normalize/index.js";
import type { ReportModel } from "../../src/report/model.js";
import { loadCorpus } from "../fixtures/corpus/index.js";
import { EVERYTHING_SERVER, FIXTURE_SERVER } from "../helpers/paths.js";
import { connect, raw } from "../helpers/proxyProcess.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const AUDIT_UPSTREAM = fileURLToPath(new URL("../fixtures/servers/audit-upstream.mjs", import.meta.url));
const policy = testPolicy(
  policyOptionsFor(ConfigSchema.parse({ mcpServers: { upstream: { command: "x" } } }), undefined),
);

const dir = tempDir("mcpn-audit-");
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

interface Expected {
  uris: string[];
  records: Array<{ uri: string; change: ChangeRecord; before: unknown; after: unknown }>;
}

/** Reads every resource straight from the upstream (no proxy) and runs the engine on each result. */
async function engineView(
  command: string,
  args: string[],
  call?: { name: string; arguments: Record<string, unknown> },
): Promise<Expected> {
  const host = await connect(
    new StdioClientTransport({
      command,
      args,
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: "ignore",
    }),
  );
  try {
    const uris: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await raw(host.client, "resources/list", cursor === undefined ? {} : { cursor });
      for (const r of page.resources as Array<{ uri: string }>) uris.push(r.uri);
      cursor = page.nextCursor as string | undefined;
    } while (cursor !== undefined);
    const records: Expected["records"] = [];
    const add = (uri: string | null, method: string, result: unknown) => {
      const out = normalizeResult(method, result, policy);
      for (const change of out.changes)
        records.push({ uri: uri ?? change.uri!, change, before: result, after: out.value });
    };
    for (const uri of uris) add(uri, "resources/read", await raw(host.client, "resources/read", { uri }));
    if (call !== undefined) add(null, "tools/call", await raw(host.client, "tools/call", call));
    return { uris, records };
  } finally {
    await host.close();
  }
}

function sums(records: Expected["records"]) {
  const actions: Record<string, number> = {};
  for (const { change } of records) actions[change.action] = (actions[change.action] ?? 0) + 1;
  return {
    entries: records.length,
    bytesBefore: records.reduce((s, r) => s + r.change.bytesBefore, 0),
    bytesAfter: records.reduce((s, r) => s + r.change.bytesAfter, 0),
    saved: records.reduce((s, r) => s + r.change.saved, 0),
    actions,
  };
}

describe("mcp-normalizer audit", () => {
  it("the fixture server with the corpus: every page listed, every resource read, totals = the engine's sums", async () => {
    const [run, expected] = await Promise.all([
      runCli(["audit", "--format", "json", "--concurrency", "3", "--", process.execPath, FIXTURE_SERVER], {
        env,
        timeoutMs: 60_000,
      }),
      engineView(process.execPath, [FIXTURE_SERVER]),
    ]);
    expect(run.stderr).not.toContain("\r[");
    expect(run.code).toBe(0);
    const model = JSON.parse(run.stdout) as ReportModel;
    expect(expected.uris.length).toBeGreaterThan(50); // more than two resources/list pages of 25
    expect(model.schemaVersion).toBe(1);
    expect(model.kind).toBe("audit");
    expect(model.failures).toEqual([]);
    expect(model.resources).toEqual({ listed: expected.uris.length, failed: 0 });
    expect(model.byUri.length).toBe(expected.uris.length);
    expect(model.totals).toMatchObject(sums(expected.records));
    expect(model.totals.saved).toBeGreaterThan(0);
    // Per resource too.
    for (const uri of expected.uris) {
      const row = model.byUri.find((r) => r.uri === uri);
      expect(row, uri).toBeDefined();
      expect(row).toMatchObject(sums(expected.records.filter((r) => r.uri === uri)));
    }
    const top = model.topOffenders[0]!;
    expect(top.saved).toBe(Math.max(...model.byUri.map((r) => r.saved)));
    expect(top.shareOfSaved).toBeCloseTo(top.saved / model.totals.saved);
  });

  it("the everything server, with --call and --tokens: the base64 blob is unwrapped and tokens are o200k_base counts of each entry", async () => {
    const call = { name: "get-resource-reference", arguments: { resourceType: "Blob", resourceId: 1 } };
    // The everything server writes the current time into some resources ("created at 9:58:34
    // AM"); with its clock frozen, the audit and the direct read see the same text.
    const server = [
      "--import",
      pathToFileURL(join(dirname(FIXTURE_SERVER), "frozen-clock.mjs")).href,
      EVERYTHING_SERVER,
      "stdio",
    ];
    const [run, expected] = await Promise.all([
      runCli(
        [
          "audit",
          "--format",
          "json",
          "--tokens",
          "--call",
          call.name,
          "--args",
          JSON.stringify(call.arguments),
          "--",
          process.execPath,
          ...server,
        ],
        { timeoutMs: 60_000 },
      ),
      engineView(process.execPath, server, call),
    ]);
    expect(run.code, run.stderr).toBe(0);
    const model = JSON.parse(run.stdout) as ReportModel;
    const pick = (root: unknown, path: string) =>
      path
        .split(/[.[\]]+/)
        .filter(Boolean)
        .reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], root);
    const tokens = (when: "before" | "after") =>
      expected.records.reduce((s, r) => s + countTokens(JSON.stringify(pick(r[when], r.change.path))), 0);
    expect(model.totals).toMatchObject(sums(expected.records));
    expect(model.totals.actions["unwrap-blob"]).toBe(1);
    const blob = model.byUri.find((r) => r.uri === "demo://resource/dynamic/blob/1")!;
    expect(blob).toMatchObject({ actions: { "unwrap-blob": 1 } });
    expect(blob.saved).toBeGreaterThan(0);
    expect(model.tokens?.encoding).toBe("o200k_base");
    expect(model.totals.tokensBefore).toBe(tokens("before"));
    expect(model.totals.tokensAfter).toBe(tokens("after"));
    expect(model.totals.tokensAfter!).toBeLessThan(model.totals.tokensBefore!);
  });

  it("every failure is counted, past the 1,000 the failures table lists", async () => {
    const out = join(dir, "reports", "many-failed.md");
    const run = await runCli(["audit", "-o", out, "--", process.execPath, AUDIT_UPSTREAM], {
      env: { AUDIT_GONE: "1000" },
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^audit: 1003 resources listed, 1002 failed to read; /);
    const md = readFileSync(out, "utf8");
    expect(md).toContain("1,003 resources read (1,002 failed), 0 tool calls.");
  });

  it("failed reads are listed with the upstream's error; every list page is followed; -o writes the file", async () => {
    const out = join(dir, "reports", "audit.md");
    const run = await runCli(["audit", "-o", out, "--concurrency", "1", "--", process.execPath, AUDIT_UPSTREAM]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/audit: 3 resources listed, 2 failed to read; \d+ → \d+ bytes, saved \d+; report in /);
    const md = readFileSync(out, "utf8");
    expect(md).toContain("## Failed reads and tool errors (2)");
    expect(md).toMatch(/\| `audit:\/\/gone` \| Resource gone: audit:\/\/gone \(JSON-RPC -32002\) \|/);
    expect(md).toContain("| `audit://empty` | the result has no contents array |");
    expect(md).toMatch(/\| `audit:\/\/ok.txt` \| node \| text\/plain \| 1 \| 0 \| 0 \| 0 \| 0 \|/);
    const json = JSON.parse(
      (await runCli(["audit", "--format", "json", "--", process.execPath, AUDIT_UPSTREAM])).stdout,
    ) as ReportModel;
    expect(json.failures).toEqual([
      { uri: "audit://gone", error: "Resource gone: audit://gone (JSON-RPC -32002)", code: -32002, kind: "read" },
      { uri: "audit://empty", error: "the result has no contents array", kind: "read" },
    ]);
  });

  it("a URI the server lists twice is read and counted once", async () => {
    const run = await runCli(["audit", "--format", "json", "--", process.execPath, AUDIT_UPSTREAM], {
      env: { AUDIT_DUPLICATE: "1" },
    });
    expect(run.code, run.stderr).toBe(0);
    const model = JSON.parse(run.stdout) as ReportModel;
    expect(model.byUri.filter((row) => row.uri === "audit://ok.txt").map((row) => row.entries)).toEqual([1]);
    expect(model.totals.entries).toBe(1);
  });

  it("a payload past limits.rawStringBytes is measured as the proxy sends it: kept as written, escapes and all", async () => {
    // Written by hand: "\u00e9" and "\/" escapes, which a proxy reading the literal as bytes keeps.
    const entry = `{"uri":"x:/big.md","mimeType":"application/octet-stream","text":"${String.raw`caf\u00e9 \/path `.repeat(200)}"}`;
    writeFileSync(join(dir, "escaped-entry.json"), entry);
    const server = join(dir, "escaped-upstream.mjs");
    writeFileSync(
      server,
      `import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
const entry = readFileSync(${JSON.stringify(join(dir, "escaped-entry.json"))}, "utf8");
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  const result =
    m.method === "initialize"
      ? '{"protocolVersion":"2025-06-18","capabilities":{"resources":{},"tools":{}},"serverInfo":{"name":"esc","version":"1"}}'
      : m.method === "resources/list"
        ? '{"resources":[{"uri":"x:/big.md","name":"big"}]}'
        : m.method === "tools/list"
          ? '{"tools":[{"name":"fail","inputSchema":{"type":"object"}}]}'
          : m.method === "tools/call"
            ? '{"isError":true,"content":[{"type":"text","text":"quota exceeded ' + "q".repeat(2000) + '"}]}'
            : '{"contents":[' + entry + ']}';
  process.stdout.write('{"jsonrpc":"2.0","id":' + JSON.stringify(m.id) + ',"result":' + result + '}' + String.fromCharCode(10));
});
`,
    );
    const config = join(dir, "escaped.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { esc: { command: process.execPath, args: [server] } },
        limits: { rawStringBytes: 1024 },
      }),
    );
    const run = await runCli(["audit", "--config", config, "--server", "esc", "--call", "fail", "--format", "json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as {
      items: Array<{ action: string; bytesBefore: number; bytesAfter: number }>;
      failures: Array<{ error: string }>;
    };
    // A tool's error text past rawStringBytes (read as bytes) is quoted all the same.
    expect(report.failures.map((f) => f.error)).toEqual([expect.stringMatching(/^tool error: quota exceeded q+/)]);
    const item = report.items.find((i) => i.action === "fix-mime")!;
    expect(item.action).toBe("fix-mime");
    // Only the type changed (application/octet-stream → text/markdown): the text went on as it came.
    expect(item.bytesBefore - item.bytesAfter).toBe("application/octet-stream".length - "text/markdown".length);
  });

  it("html: one self-contained file", async () => {
    const run = await runCli(["audit", "--format", "html", "--", process.execPath, AUDIT_UPSTREAM]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^<!doctype html>/);
    expect(run.stdout).toContain('id="failure-table"');
  });

  it("bad command lines exit 2 naming the flag; an upstream that cannot start exits 1", async () => {
    const none = await runCli(["audit"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("name exactly one upstream");
    const format = await runCli(["audit", "--format", "pdf", "--", "x"]);
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('--format expects md, json or html, got "pdf"');
    const args = await runCli(["audit", "--args", "{}", "--", "x"]);
    expect(args.code).toBe(2);
    expect(args.stderr).toContain("--args goes with --call");
    const badJson = await runCli(["audit", "--call", "t", "--args", "{nope", "--", "x"]);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain("--args {nope is not JSON at column 2");
    const missing = await runCli(["audit", "--", join(dir, "no-such-command")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      `could not start upstream command ${JSON.stringify(join(dir, "no-such-command"))}`,
    );
  });

  it("--timeout: a server that never answers fails the audit after it, naming the flag; a bad value exits 2", async () => {
    const silent = ["-e", "process.stdin.resume()"];
    const started = Date.now();
    const run = await runCli(["audit", "--timeout", "300", "--", process.execPath, ...silent]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("initialize: no answer in 300 ms (--timeout)");
    expect(Date.now() - started).toBeLessThan(20_000);
    for (const value of ["0", "3000000000"]) {
      const bad = await runCli(["audit", "--timeout", value, "--", "x"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--timeout expects a whole number of milliseconds from 1 to 2147483647");
    }
  });

  it("--name names the server in the report, as for stdio and serve", async () => {
    const run = await runCli(["audit", "--name", "docs", "--format", "json", "--", process.execPath, FIXTURE_SERVER], {
      env,
      timeoutMs: 60_000,
    });
    expect(run.code).toBe(0);
    const model = JSON.parse(run.stdout) as ReportModel;
    expect(model.source).toMatchObject({ server: "docs" });
    expect(model.byServer.map((row) => row.key)).toEqual(["docs"]);
  });

  it("--help lists the formats, --tokens' encoding and the exit codes", async () => {
    const run = await runCli(["audit", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("--name NAME");
    expect(run.stdout).toContain("--format F");
    expect(run.stdout).toContain("o200k_base");
    expect(run.stdout).toContain("Exit codes");
  });
});
