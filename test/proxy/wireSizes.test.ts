/**
 * The normalization log counts the bytes that crossed the wire, not the engine's own
 * serialization: an upstream that writes JSON as Python's `json.dumps` does — spaces after `,`
 * and `:`, every non-ASCII character as `\uXXXX` — has its entries measured in that text, and
 * what went out in the text the host received. A dry run's "after" is what would have gone out.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";
import type { ReportModel } from "../../src/report/model.js";
import { CLI, ROOT } from "../helpers/paths.js";
import { startServe } from "../helpers/proxyProcess.js";
import { runCli } from "../helpers/runCli.js";
import { INITIALIZE_PARAMS, startRawStdio } from "../helpers/rawStdio.js";
import { tempDir } from "../helpers/tempDir.js";
import { RAW_UPSTREAM } from "../reliability/helpers.js";

const dir = tempDir("mcpn-wire-sizes-");
const TEXT = "héllo wörld, ça va? ünïcödé ".repeat(20);
const BLOB = Buffer.from(TEXT).toString("base64");
/** The entry as Python writes it: ", " and ": ", non-ASCII escaped. */
const ENTRY = `{"uri": "note://caf\\u00e9", "mimeType": "text/plain", "blob": "${BLOB}"}`;
const LINE = `{"jsonrpc": "2.0", "id": "__ID__", "result": {"contents": [${ENTRY}]}}\n`;

interface LogRecord {
  action: string;
  bytesBefore: number;
  bytesAfter: number;
  saved: number;
}

let reads = 0;

/** One `resources/read` through `stdio --log-file` that the raw upstream answers with `line`: the answer and the log's records. */
async function readThrough(
  extra: readonly string[],
  line = LINE,
): Promise<{ answer: Record<string, unknown>; records: LogRecord[] }> {
  const log = join(dir, `${++reads}-log.jsonl`);
  const args = [CLI, "stdio", "--log-file", log, ...extra, "--", process.execPath, RAW_UPSTREAM];
  const proxy = startRawStdio(process.execPath, args);
  await proxy.request(1, "initialize", INITIALIZE_PARAMS);
  const params = { uri: "note://café", _emit: [Buffer.from(line).toString("base64")], _noFinal: true };
  const answer = await proxy.request(2, "resources/read", params, 15_000);
  expect(await proxy.close()).toBe(0);
  const records = readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map((text) => JSON.parse(text) as LogRecord);
  return { answer, records };
}

/** The one record of a read of `LINE`. */
async function recordOf(extra: readonly string[]): Promise<{ answer: Record<string, unknown>; record: LogRecord }> {
  const { answer, records } = await readThrough(extra);
  expect(records).toHaveLength(1);
  return { answer, record: records[0]! };
}

describe("sizes in the normalization log", () => {
  it("are the entry's bytes as the upstream wrote it and as the host received it", async () => {
    const { answer, record } = await recordOf([]);
    const entry = (answer.result as { contents: Array<Record<string, unknown>> }).contents[0]!;
    expect(entry).toEqual({ uri: "note://café", mimeType: "text/plain", text: TEXT });
    expect(record.action).toBe("unwrap-blob");
    expect(record.bytesBefore).toBe(Buffer.byteLength(ENTRY));
    // What the host got: the entry rewritten, as JSON.stringify writes it (nothing in it kept as text).
    expect(record.bytesAfter).toBe(Buffer.byteLength(JSON.stringify(entry)));
    expect(record.saved).toBe(record.bytesBefore - record.bytesAfter);
  });

  it("in a dry run: before as it came, after as it would have gone out — what a run that makes it logs", async () => {
    const { answer, record } = await recordOf(["--dry-run"]);
    const entry = (answer.result as { contents: Array<Record<string, unknown>> }).contents[0]!;
    expect(entry.blob).toBe(BLOB);
    expect(record.bytesBefore).toBe(Buffer.byteLength(ENTRY));
    expect(record.bytesAfter).toBe((await recordOf([])).record.bytesAfter);
  });

  it("in a dry run as made, for entries a server writes otherwise than JSON.stringify", async () => {
    const entries = [
      // Spaces after ":" and ",", a _meta object (kept as written) with spaces in it too.
      `{ "uri": "a://x", "mimeType": "text/plain", "_meta": { "k": [1, 2.50] }, "blob": "${BLOB}" }`,
      // Bytes as \u00XX escapes in a text: re-encoded to a blob.
      String.raw`{"uri":"b://x","mimeType":"application/octet-stream","text":"\u0000\u0001\u0002\u0089PNG binary"}`,
      // Escapes in a text whose type alone is fixed: the text is written anew.
      `{"uri":"c://x.md","mimeType":"application/octet-stream","text":"${String.raw`caf\u00e9 na\u00efve \/path `.repeat(20)}"}`,
    ];
    for (const entry of entries) {
      const line = `{"jsonrpc": "2.0", "id": "__ID__", "result": {"contents": [${entry}]}}\n`;
      const made = (await readThrough([], line)).records;
      const dry = (await readThrough(["--dry-run"], line)).records;
      expect(made).toHaveLength(1);
      expect(
        dry.map((r) => [r.action, r.bytesBefore, r.bytesAfter]),
        entry.slice(0, 30),
      ).toEqual(made.map((r) => [r.action, r.bytesBefore, r.bytesAfter]));
    }
  });
});

describe("sizes of a big read (its payloads read as bytes)", () => {
  // Over limits.rawStringBytes (256 KiB): the literals are kept as bytes, never decoded into strings.
  const escaped = "\\u00e9".repeat(60_000);

  it("a literal kept goes on as written, and is counted as written both ways", async () => {
    const entry = `{"uri": "note://big", "text": "${escaped}"}`;
    const line = `{"jsonrpc": "2.0", "id": "__ID__", "result": {"contents": [${entry}]}}\n`;
    const { answer, records } = await readThrough([], line);
    const out = (answer.result as { contents: Array<Record<string, unknown>> }).contents[0]!;
    expect(out).toEqual({ uri: "note://big", text: "é".repeat(60_000), mimeType: "text/plain" });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ action: "fill-mime", bytesBefore: Buffer.byteLength(entry) });
    // Out: the same literal, the rest as JSON.stringify writes it, the type added.
    const written = `{"uri":"note://big","text":"${escaped}","mimeType":"text/plain"}`;
    expect(records[0]!.bytesAfter).toBe(Buffer.byteLength(written));
  });

  it("in a dry run: before as it came, after as it would have gone out", async () => {
    const text = "héllo wörld ".repeat(30_000);
    const blob = Buffer.from(text).toString("base64");
    const entry = `{"uri": "note://caf\\u00e9", "mimeType": "text/plain", "blob": "${blob}"}`;
    const line = `{"jsonrpc": "2.0", "id": "__ID__", "result": {"contents": [${entry}]}}\n`;
    const { records } = await readThrough(["--dry-run"], line);
    expect(records).toHaveLength(1);
    // What a run that makes the change logs (and sends).
    const made = (await readThrough([], line)).records;
    expect(records[0]).toMatchObject({ bytesBefore: Buffer.byteLength(entry), bytesAfter: made[0]!.bytesAfter });
  });

  it("a literal rewritten: before as written, after as the proxy wrote it", async () => {
    // Bytes held in a JS string (one character per byte), each written as \u00XX: not text.
    const bytes = Buffer.from(Array.from({ length: 60_000 }, (_, i) => (i * 7919) % 256));
    const literal = [...bytes].map((b) => `\\u00${b.toString(16).padStart(2, "0")}`).join("");
    const entry = `{"uri": "bin://x", "mimeType": "application/octet-stream", "text": "${literal}"}`;
    const line = `{"jsonrpc": "2.0", "id": "__ID__", "result": {"contents": [${entry}]}}\n`;
    const { answer, records } = await readThrough([], line);
    const out = (answer.result as { contents: Array<Record<string, unknown>> }).contents[0]!;
    expect(Buffer.from(out.blob as string, "base64").equals(bytes)).toBe(true);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      action: "reencode-blob",
      bytesBefore: Buffer.byteLength(entry),
      bytesAfter: Buffer.byteLength(JSON.stringify(out)),
    });
  });
});

describe("measuring many entries", () => {
  it("20,000 entries written Python's way: each measured, the answer not held back (a walk per record took a minute)", async () => {
    const blob = Buffer.from("hello world text").toString("base64");
    const entries = Array.from(
      { length: 20_000 },
      (_, i) => `{"uri": "x://${i}", "mimeType": "text/plain", "blob": "${blob}"}`,
    );
    const line = `{"jsonrpc": "2.0", "id": "__ID__", "result": {"contents": [${entries.join(", ")}]}}\n`;
    const { answer, records } = await readThrough([], line);
    expect((answer.result as { contents: unknown[] }).contents).toHaveLength(20_000);
    expect(records).toHaveLength(20_000);
    expect(records[19_999]!.bytesBefore).toBe(Buffer.byteLength(entries[19_999]!));
  }, 30_000);
});

// A server writing Python's way, read by `audit` and through `serve` (metrics count every entry).
const ESCAPED = join(ROOT, "test", "fixtures", "servers", "escaped-json-server.mjs");
const { dumps, RESOURCES } = (await import(ESCAPED)) as {
  dumps: (value: unknown) => string;
  RESOURCES: Record<string, Record<string, string>>;
};
const wireBytes = (uri: string): number => Buffer.byteLength(dumps(RESOURCES[uri]));

describe("sizes in audit and metrics", () => {
  it("audit: each entry's bytes as the server wrote it; one left as it was goes out the same", async () => {
    const run = await runCli(["audit", "--format", "json", "--", process.execPath, ESCAPED]);
    expect(run.code, run.stderr).toBe(0);
    const model = JSON.parse(run.stdout) as ReportModel;
    const item = (uri: string) => model.items!.find((i) => i.uri === uri)!;
    expect(item("note://café")).toMatchObject({ action: "unwrap-blob", bytesBefore: wireBytes("note://café") });
    expect(item("note://plain")).toMatchObject({
      action: "none",
      bytesBefore: wireBytes("note://plain"),
      bytesAfter: wireBytes("note://plain"),
    });
  });

  it("serve: bytes_in and bytes_out of an entry left as it was are its bytes on the wire", async () => {
    const serve = await startServe(["--name", "esc", "--", process.execPath, ESCAPED]);
    try {
      const client = new Client({ name: "t", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${serve.url}/mcp/esc`)));
      await client.request({ method: "resources/read", params: { uri: "note://plain" } }, z.object({}).loose());
      await client.close();
      const metrics = await (await fetch(`${serve.url}/metrics`)).text();
      const counter = (name: string): number =>
        Number(new RegExp(`^${name}\\{[^}]*action="none"[^}]*\\} (\\d+)$`, "m").exec(metrics)?.[1]);
      expect(counter("mcp_normalizer_bytes_in_total")).toBe(wireBytes("note://plain"));
      expect(counter("mcp_normalizer_bytes_out_total")).toBe(wireBytes("note://plain"));
    } finally {
      await serve.stop();
    }
  });
});
