/**
 * `audit` against the servers people run: the official filesystem server (tool-only: it
 * declares no resources), the memory server (resources and tools) and the everything server
 * (resources, templates, tools) — each started from node_modules as a real child process —
 * plus the small audit fixture for a listed size over --max-bytes. The audit follows what the
 * server declares, calls and reads what it is told, and reports every entry.
 */
import { testPolicy } from "../helpers/policy.js";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runAudit } from "../../src/cli/audit/runAudit.js";
import type { ReportModel } from "../../src/report/model.js";
import { createUpstreamTransport } from "../../src/transports/upstream/index.js";
import { corpusFile } from "../fixtures/corpus/index.js";
import { EVERYTHING_SERVER, FILESYSTEM_SERVER, MEMORY_SERVER } from "../helpers/paths.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";

const AUDIT_UPSTREAM = fileURLToPath(new URL("../fixtures/servers/audit-upstream.mjs", import.meta.url));
const dir = tempDir("mcpn-audit-servers-");
const files = join(dir, "files");
const LATIN1 = fileURLToPath(new URL("../fixtures/corpus/charsets/files/de.latin-1.full.txt", import.meta.url));
{
  const { mkdirSync } = await import("node:fs");
  mkdirSync(files);
  writeFileSync(join(files, "notes.md"), "# Notes\n\nnaïve café ✓\n");
  writeFileSync(join(files, "tiny.png"), corpusFile("media/tiny.png"));
  copyFileSync(LATIN1, join(files, "brief.txt"));
}
const fs = ["--", process.execPath, FILESYSTEM_SERVER, files];
const json = (stdout: string) => JSON.parse(stdout) as ReportModel;
const call = (tool: string, args: Record<string, unknown>) => `${tool}=${JSON.stringify(args)}`;

describe("audit: the filesystem server (tool-only)", () => {
  it("no resources capability: resources/list is not called, the report says so with a hint, exit 0", async () => {
    const md = await runCli(["audit", ...fs], { timeoutMs: 60_000 });
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toContain("Capabilities declared: tools.");
    expect(md.stdout).toContain(
      "> The server declares no resources capability: resources/list was not called. Audit its tools with --call TOOL[=JSON], or read URIs with --read URI.",
    );
    const report = json((await runCli(["audit", "--format", "json", ...fs], { timeoutMs: 60_000 })).stdout);
    expect(report.scope).toMatchObject({
      capabilities: { resources: false, tools: true },
      listed: 0,
      read: 0,
      called: 0,
    });
    expect(report.failures).toEqual([]);
    expect(report.items).toEqual([]);
    const out = join(dir, "none.md");
    const quiet = await runCli(["audit", "-o", out, ...fs], { timeoutMs: 60_000 });
    expect(quiet.stderr).toMatch(
      /^audit: no resources capability \(resources\/list not called\); 0 → 0 bytes, saved 0; report in /,
    );
  });

  it("a read and a call that fail are counted as asked for and as failed, in the singular", async () => {
    const out = join(dir, "failed.md");
    const run = await runCli(["audit", "-o", out, "--read", "file:///nowhere.txt", "--call", "no_such_tool", ...fs], {
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/; 1 tool call, 1 failed; /);
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(out, "utf8")).toContain(
      "Capabilities declared: tools. 1 resource read (1 failed), 1 tool call (1 failed).",
    );
  });

  it("--call TOOL=JSON, repeated: every entry with its before/after; media already right is unchanged; a Latin-1 file is transcoded; tool errors carry the server's message", async () => {
    const run = await runCli(
      [
        "audit",
        "--format",
        "json",
        "--call",
        call("read_media_file", { path: join(files, "notes.md") }),
        "--call",
        call("read_media_file", { path: join(files, "tiny.png") }),
        "--call",
        call("read_media_file", { path: join(files, "brief.txt") }),
        "--call",
        call("read_text_file", { path: join(files, "brief.txt") }),
        "--call",
        call("read_text_file", { path: "/etc/hostname" }),
        "--call",
        "no_such_tool",
        ...fs,
      ],
      { timeoutMs: 60_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    const report = json(run.stdout);
    expect(report.scope).toMatchObject({ capabilities: { resources: false }, called: 6 });
    const byTarget = (name: string) =>
      report.items!.filter(
        (i) => i.target.startsWith(`tools/call ${name}`) && i.target.includes(name === "read_text_file" ? "brief" : ""),
      );
    const media = report.items!.filter((i) => i.target.startsWith("tools/call read_media_file"));
    expect(media.map((i) => [i.status, i.action, i.mimeBefore, i.mimeAfter])).toEqual([
      ["changed", "unwrap-blob", "application/octet-stream", "text/markdown"],
      ["unchanged", "none", "image/png", "image/png"],
      ["changed", "transcode", "application/octet-stream", "text/plain"],
    ]);
    expect(media[0]!.target).toBe(`tools/call read_media_file {"path":${JSON.stringify(join(files, "notes.md"))}}`);
    expect(media[2]).toMatchObject({ detected: { charset: "iso-8859-1" } });
    expect(media[2]!.bytesAfter).toBeLessThan(media[2]!.bytesBefore);
    // read_text_file decoded the Latin-1 file as UTF-8: its text holds U+FFFD, flagged, not repaired.
    expect(byTarget("read_text_file")).toMatchObject([
      { status: "warned", action: "warn-lossy-text", path: "content[0]", saved: 0 },
    ]);
    expect(report.totals.actions).toEqual({ "unwrap-blob": 1, none: 1, transcode: 1, "warn-lossy-text": 1 });
    expect(report.totals.entries).toBe(report.items!.length);
    expect(report.totals.bytesBefore).toBe(report.items!.reduce((s, i) => s + i.bytesBefore, 0));
    // Failures: outside the allowed directory (the tool's own error text), an unknown tool (JSON-RPC or isError, as the server answers).
    expect(report.failures.map((f) => f.kind)).toEqual(["call", "call"]);
    expect(report.failures[0]!.uri).toBe('tools/call read_text_file {"path":"/etc/hostname"}');
    expect(report.failures[0]!.error).toMatch(/^tool error: .*(Access denied|outside allowed)/i);
    expect(report.failures[1]!.uri).toBe("tools/call no_such_tool");
    expect(report.failures[1]!.error).toMatch(/no_such_tool/);
    // structuredContent repeats every payload: reported, byte for byte.
    expect(report.duplicates!.map((d) => [d.path, d.kind])).toEqual([
      ["content[0].resource.blob", "repeated"],
      ["content[0].data", "repeated"],
      ["content[0].resource.blob", "repeated"],
      ["content[0].text", "repeated"],
    ]);
    expect(report.duplicates![1]!.bytes).toBe(corpusFile("media/tiny.png").toString("base64").length + 2);
  });

  it("the older --call TOOL --args JSON form still works; --args with two calls is refused", async () => {
    const run = await runCli(
      [
        "audit",
        "--format",
        "json",
        "--call",
        "read_media_file",
        "--args",
        JSON.stringify({ path: join(files, "notes.md") }),
        ...fs,
      ],
      { timeoutMs: 60_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout).items!.map((i) => i.action)).toEqual(["unwrap-blob"]);
    const two = await runCli(["audit", "--call", "a", "--call", "b", "--args", "{}", "--", "x"]);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain("--args goes with a single --call TOOL");
    const bad = await runCli(["audit", "--call", "a={nope", "--", "x"]);
    expect(bad.code).toBe(2);
    // What was given, and where it goes wrong.
    expect(bad.stderr).toContain("--call a={nope is not JSON at column 2 (in $): expected a string in double quotes");
    const array = await runCli(["audit", "--call", "a=[1]", "--", "x"]);
    expect(array.stderr).toContain("--call a= expects a JSON object of arguments, got an array");
    const max = await runCli(["audit", "--max-bytes", "lots", "--", "x"]);
    expect(max.code).toBe(2);
    expect(max.stderr).toContain("--max-bytes expects a whole number");
  });

  it("md and html show each entry, the notes, the lossy-text line and the duplicates", async () => {
    const args = [
      "--call",
      call("read_media_file", { path: join(files, "notes.md") }),
      "--call",
      call("read_text_file", { path: join(files, "brief.txt") }),
      ...fs,
    ];
    const md = (await runCli(["audit", ...args], { timeoutMs: 60_000 })).stdout;
    expect(md).toContain("## Entries (2)");
    expect(md).toMatch(
      /\| `tools\/call read_media_file \{.*notes\.md"\}` \| `content\[0\]\.resource` \| changed \| unwrap-blob \| application\/octet-stream → text\/markdown \|/,
    );
    expect(md).toContain("**1 entry has lossy text** (`warn-lossy-text`)");
    expect(md).toMatch(/## structuredContent duplicates \(/);
    const html = (await runCli(["audit", "--format", "html", ...args], { timeoutMs: 60_000 })).stdout;
    expect(html).toContain('id="item-table"');
    expect(html).toContain('data-status="changed" data-action="unwrap-blob"');
    expect(html).toContain('id="duplicate-table"');
    expect(html).toContain('data-metric="lossy-text">1<');
    expect(html).toContain("declares no resources capability");
  });
});

describe("audit: the memory server", () => {
  it("reads its listed resource, calls its tools in order; read_graph's text is its structuredContent serialized (a finding)", async () => {
    const memory = join(dir, "memory.jsonl");
    const run = await runCli(
      [
        "audit",
        "--format",
        "json",
        "--call",
        call("create_entities", {
          entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }],
        }),
        "--call",
        "read_graph",
        "--",
        process.execPath,
        MEMORY_SERVER,
      ],
      { env: { MEMORY_FILE_PATH: memory }, timeoutMs: 60_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    const report = json(run.stdout);
    expect(report.scope).toMatchObject({
      capabilities: { resources: true, tools: true },
      listed: 1,
      read: 1,
      called: 2,
    });
    expect(report.items!.map((i) => [i.target, i.status])).toEqual([["memory://knowledge-graph", "unchanged"]]);
    expect(report.failures).toEqual([]);
    expect(report.duplicates).toEqual([
      { target: "tools/call read_graph", path: "content[0].text", kind: "serialized", bytes: expect.any(Number) },
    ]);
    expect(report.duplicates![0]!.bytes).toBeGreaterThan(50);
  });
});

describe("audit: the everything server", () => {
  const everything = ["--", process.execPath, EVERYTHING_SERVER, "stdio"];

  it("--read reads a template instance (text/plain base64 of UTF-8 text → unwrapped); --uri filters what is listed", async () => {
    const run = await runCli(
      [
        "audit",
        "--format",
        "json",
        "--uri",
        "demo://resource/static/document/f*",
        "--uri",
        "**/how-it-works.md",
        "--read",
        "demo://resource/dynamic/blob/7",
        "--read",
        "demo://resource/dynamic/text/3",
        ...everything,
      ],
      { timeoutMs: 60_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    const report = json(run.stdout);
    const s = report.scope!;
    expect(s.listed).toBeGreaterThan(s.filteredOut);
    expect(s.filteredOut).toBeGreaterThan(0);
    expect(s.read).toBe(s.listed - s.filteredOut + 2);
    expect(report.items!.map((i) => i.target).sort()).toEqual([
      "demo://resource/dynamic/blob/7",
      "demo://resource/dynamic/text/3",
      "demo://resource/static/document/features.md",
      "demo://resource/static/document/how-it-works.md",
    ]);
    expect(report.items!.find((i) => i.target === "demo://resource/dynamic/blob/7")).toMatchObject({
      status: "changed",
      action: "unwrap-blob",
      mimeBefore: "text/plain",
      mimeAfter: "text/plain",
    });
    expect(report.items!.find((i) => i.target === "demo://resource/dynamic/text/3")).toMatchObject({
      status: "unchanged",
    });
  });

  it("--max-bytes: larger entries are listed as skipped and left out of the totals", async () => {
    const all = json(
      (
        await runCli(["audit", "--format", "json", "--uri", "demo://resource/static/document/*", ...everything], {
          timeoutMs: 60_000,
        })
      ).stdout,
    );
    const sizes = all.items!.map((i) => i.bytesBefore).sort((a, b) => a - b);
    const max = sizes[Math.floor(sizes.length / 2)]!;
    const capped = json(
      (
        await runCli(
          [
            "audit",
            "--format",
            "json",
            "--uri",
            "demo://resource/static/document/*",
            "--max-bytes",
            String(max),
            ...everything,
          ],
          { timeoutMs: 60_000 },
        )
      ).stdout,
    );
    const over = all.items!.filter((i) => i.bytesBefore > max);
    expect(over.length).toBeGreaterThan(0);
    expect(capped.skipped!.map((s) => s.target).sort()).toEqual(over.map((i) => i.target).sort());
    expect(capped.skipped!.every((s) => s.bytes > max && s.reason.includes(`--max-bytes ${max}`))).toBe(true);
    expect(capped.totals.entries).toBe(all.totals.entries - over.length);
    expect(capped.totals.bytesBefore).toBe(all.totals.bytesBefore - over.reduce((s, i) => s + i.bytesBefore, 0));
  });

  it("the progress bar counts what will actually be read: listed (after --uri) + --read + --call", async () => {
    const updates: Array<[number, number]> = [];
    const transport = createUpstreamTransport(
      { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] },
      { maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes },
    );
    const { model } = await runAudit({
      transport,
      server: "everything",
      upstream: "everything",
      policy: testPolicy(),
      requestTimeoutMs: DEFAULT_LIMITS.requestTimeoutMs,
      keepUri: (uri) => uri.startsWith("demo://resource/static/document/"),
      reads: ["demo://resource/dynamic/blob/1"],
      calls: [{ tool: "get-sum", args: { a: 1, b: 2 } }],
      onProgress: (done, total) => updates.push([done, total]),
    });
    const total = model.scope!.listed - model.scope!.filteredOut + 1 + 1;
    expect(updates.every(([, t]) => t === total)).toBe(true);
    // From 0 (before anything is read) to every item done, one at a time (an item's steps are
    // shown at the count before it).
    const counts = updates.map(([d]) => d).filter((d, i, all) => i === 0 || d !== all[i - 1]);
    expect(counts).toEqual(Array.from({ length: total + 1 }, (_, i) => i));
  });
});

describe("audit: a listed size over --max-bytes", () => {
  it("a resource whose listing declares more bytes is not read: skipped with its declared size", async () => {
    const run = await runCli(["audit", "--format", "json", "--max-bytes", "5", "--", process.execPath, AUDIT_UPSTREAM]);
    expect(run.code, run.stderr).toBe(0);
    const report = json(run.stdout);
    expect(report.skipped).toEqual([
      { target: "audit://ok.txt", path: null, bytes: 13, reason: "listed size 13 bytes > --max-bytes 5; not read" },
    ]);
    expect(report.scope).toMatchObject({ listed: 3, read: 2 });
    expect(report.totals.entries).toBe(0);
  });
});

describe("a resource listing that does not end", () => {
  it("a cursor that comes back is a loop: the listing stops there, what it gave is audited, the report says so", async () => {
    const out = join(tempDir(), "loop.md");
    const run = await runCli(["audit", "-o", out, "--", process.execPath, AUDIT_UPSTREAM], {
      env: { AUDIT_CURSOR_LOOP: "1" },
      timeoutMs: 30_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^audit: 3 resources listed/);
    expect(readFileSync(out, "utf8")).toContain(
      'resources/list gave cursor "page-2" a second time (a loop): the listing stopped there; the 3 resources',
    );
  });

  it("past the most pages it follows, the listing stops: the resources on them are audited, the note names the bound", async () => {
    const transport = createUpstreamTransport(
      { command: process.execPath, args: [AUDIT_UPSTREAM] },
      { maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes },
    );
    const { model } = await runAudit({
      transport,
      server: "fx",
      upstream: "fx",
      policy: testPolicy(),
      requestTimeoutMs: DEFAULT_LIMITS.requestTimeoutMs,
      maxListPages: 1,
    });
    expect(model.scope!.listed).toBe(2);
    expect(model.scope!.notes).toContain(
      "resources/list gave more than 1 pages (a cursor that never ends?): the listing stopped there; the 2 " +
        "resources on them are audited",
    );
  });
});
