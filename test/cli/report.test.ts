/**
 * `report` over the proxy's own log: a scripted session through `mcp-normalizer stdio`
 * with a real SDK client and the real fixture upstream; the report must equal what the session
 * did — the engine's records for the same upstream results, read straight from the upstream.
 * Then the input forms (globs, gzip, stdin), corrupted lines, and memory on a ~100 MB log.
 */
import { testPolicy } from "../helpers/policy.js";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  createWriteStream,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { policyOptionsFor } from "../../src/config/policy.js";
import { ConfigSchema } from "../../src/config/schema.js";
import type { ChangeRecord } from "../../src/normalize/change.js";
import { normalizeResult } from "../../src/normalize/index.js";
import type { ReportModel } from "../../src/report/model.js";
import { loadCorpus } from "../fixtures/corpus/index.js";
import { CLI, FIXTURE_SERVER } from "../helpers/paths.js";
import { connect, raw } from "../helpers/proxyProcess.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const policy = testPolicy(
  policyOptionsFor(ConfigSchema.parse({ mcpServers: { upstream: { command: "x" } } }), undefined),
);
const dir = tempDir("mcpn-report-");
const corpusFile = join(dir, "corpus.json");
const cases = loadCorpus().filter((c) => Object.keys(c.policy).length === 0);
writeFileSync(corpusFile, JSON.stringify(cases.map((c) => ({ name: c.name, input: c.input }))));
const env = { ...(process.env as Record<string, string>), FIXTURE_CORPUS: corpusFile };
const logFile = join(dir, "logs", "normalizer.jsonl");

type Step = { method: string; params: Record<string, unknown> };

/** The session: list every page, read every resource, call a tool and get a prompt with embedded resources. */
async function script(client: Client): Promise<Array<{ step: Step; result: Record<string, unknown> }>> {
  const out: Array<{ step: Step; result: Record<string, unknown> }> = [];
  const run = async (method: string, params: Record<string, unknown>) => {
    const result = await raw(client, method, params);
    out.push({ step: { method, params }, result });
    return result;
  };
  const uris: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await run("resources/list", cursor === undefined ? {} : { cursor });
    for (const r of page.resources as Array<{ uri: string }>) uris.push(r.uri);
    cursor = page.nextCursor as string | undefined;
  } while (cursor !== undefined);
  for (const uri of uris) await run("resources/read", { uri });
  await run("tools/call", { name: "embedded", arguments: { case: "markdown-as-octet-stream" } });
  await run("prompts/get", { name: "embedded", arguments: { case: "everything-style-blob" } });
  return out;
}

function expectedFrom(
  steps: Array<{ step: Step; result: Record<string, unknown> }>,
): Array<{ method: string; change: ChangeRecord }> {
  return steps.flatMap(({ step, result }) =>
    normalizeResult(step.method, result, policy)
      .changes.filter((c) => c.action !== "none")
      .map((change) => ({ method: step.method, change })),
  );
}

function sums(records: ReadonlyArray<{ change: ChangeRecord }>) {
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

async function reportJson(
  args: string[],
  input?: string | Buffer,
): Promise<{ model: ReportModel; stderr: string; code: number | null }> {
  const run = await runCli(["report", "--format", "json", ...args], {
    cwd: dir,
    ...(input === undefined ? {} : { input }),
  });
  return {
    model: run.code === 0 ? (JSON.parse(run.stdout) as ReportModel) : (undefined as never),
    stderr: run.stderr,
    code: run.code,
  };
}

let expected: Array<{ method: string; change: ChangeRecord }>;
let stderrWithoutLogFile = "";

beforeAll(async () => {
  const direct = await connect(
    new StdioClientTransport({ command: process.execPath, args: [FIXTURE_SERVER], env, stderr: "ignore" }),
  );
  expected = expectedFrom(await script(direct.client));
  await direct.close();

  const proxied = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "stdio", "--log-file", logFile, "--", process.execPath, FIXTURE_SERVER],
    env,
    stderr: "ignore",
  });
  const host = await connect(proxied);
  await script(host.client);
  const pid = proxied.pid!;
  await host.close();
  // close() returns once the proxy has exited, so its log is flushed and closed.
  expect(() => process.kill(pid, 0)).toThrow();

  // The same session without a log file: the records go to stderr, never to stdout (the SDK
  // client would have failed on any non-JSON-RPC line).
  const chatty = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "stdio", "--log-level", "info", "--", process.execPath, FIXTURE_SERVER],
    env,
    stderr: "pipe",
  });
  chatty.stderr!.on("data", (c: Buffer) => (stderrWithoutLogFile += c.toString()));
  const second = await connect(chatty);
  await script(second.client);
  await second.close();
}, 120_000);

afterAll(() => {});

describe("mcp-normalizer report", () => {
  it("the proxy's log holds one log line per changed entry, and no content", () => {
    const text = readFileSync(logFile, "utf8");
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.length).toBe(expected.length);
    expect(lines.map((l) => [l.method, l.action, l.bytesBefore, l.bytesAfter, l.saved])).toEqual(
      expected.map(({ method, change }) => [
        method,
        change.action,
        change.bytesBefore,
        change.bytesAfter,
        change.saved,
      ]),
    );
    for (const line of lines) {
      // Without --name, a stdio upstream is named after its executable's base name (node).
      expect(line).toMatchObject({ server: "node", session: expect.stringMatching(/^node-\d+$/) });
      expect(Object.keys(line).slice(0, 12)).toEqual([
        "ts",
        "server",
        "session",
        "method",
        "uri",
        "action",
        "mimeBefore",
        "mimeAfter",
        "bytesBefore",
        "bytesAfter",
        "saved",
        "ms",
      ]);
    }
    // Content is never logged: not the base64 the upstream sent, not the text it became.
    expect(text).not.toContain(Buffer.from("# Title\n\nSome *markdown*.\n").toString("base64"));
    expect(text).not.toContain("Some *markdown*");
  });

  it("report over that log equals what the session did", async () => {
    const { model, code } = await reportJson([logFile]);
    expect(code).toBe(0);
    expect(model.kind).toBe("log");
    expect(model.totals).toMatchObject(sums(expected));
    expect(model.malformed.lines).toBe(0);
    for (const method of new Set(expected.map((r) => r.method))) {
      expect(model.byMethod.find((r) => r.key === method)).toMatchObject(
        sums(expected.filter((r) => r.method === method)),
      );
    }
    expect(model.byServer.map((r) => r.key)).toEqual(["node"]);
    expect(model.timeRange.from).not.toBeNull();
    expect(Date.parse(model.timeRange.to!)).toBeGreaterThanOrEqual(Date.parse(model.timeRange.from!));
  });

  it("without a log file the records go to stderr as the same lines", () => {
    const records = stderrWithoutLogFile
      .split("\n")
      .filter((l) => l.includes('"action"'))
      .map((l) => JSON.parse(l) as { action: string; saved: number });
    expect(records.map((r) => [r.action, r.saved])).toEqual(
      expected.map(({ change }) => [change.action, change.saved]),
    );
  });

  it("a corrupted line is reported and skipped, never fatal", async () => {
    const corrupted = join(dir, "corrupted.jsonl");
    const lines = readFileSync(logFile, "utf8").trim().split("\n");
    lines.splice(
      3,
      0,
      `{"ts":"2026-01-01T00:00:00.000Z","server":"upstream","action":"unwrap-bl`,
      "\u0000\u0001 garbage",
      JSON.stringify({ level: "info", msg: "an operational line" }),
    );
    writeFileSync(corrupted, `${lines.join("\n")}\n{"cut off at the end`);
    const { model, code, stderr } = await reportJson([corrupted]);
    expect(code).toBe(0);
    expect(model.totals).toMatchObject(sums(expected));
    expect(model.malformed.lines).toBe(3);
    expect(model.ignoredLines).toBe(1);
    expect(model.malformed.examples.map((e) => [e.line, e.error.slice(0, 8)])).toEqual([
      [4, "not JSON"],
      [5, "not JSON"],
      [lines.length + 1, "not JSON"],
    ]);
    expect(model.malformed.examples[0]!.source).toBe(corrupted);
    expect(stderr).toContain(`report: 3 malformed lines skipped (first: ${corrupted}:4: not JSON`);
    const md = await runCli(["report", corrupted]);
    expect(md.stdout).toContain("3 malformed lines skipped; 1 other JSON lines (operational log) ignored.");
  });

  it("many files, a glob, gzip and stdin all aggregate the same records", async () => {
    copyFileSync(logFile, join(dir, "logs", "copy.jsonl"));
    writeFileSync(join(dir, "logs", "rotated.jsonl.1.gz"), gzipSync(readFileSync(logFile)));
    const once = sums(expected);
    const glob = await reportJson(["logs/*.jsonl"]);
    expect(glob.model.source.files).toEqual([join(dir, "logs", "copy.jsonl"), logFile]);
    expect(glob.model.totals.saved).toBe(2 * once.saved);
    const gz = await reportJson(["logs/rotated.jsonl.1.gz"]);
    expect(gz.model.totals).toMatchObject(once);
    const stdin = await reportJson(["-"], gzipSync(readFileSync(logFile)));
    expect(stdin.model.totals).toMatchObject(once);
    const all = await reportJson(["-", "logs/**/*", logFile], readFileSync(logFile));
    // logFile is named twice (by the glob and by name) and read once.
    expect(all.model.totals.entries).toBe(4 * once.entries);
  });

  it("a log reached through a link (logs/current.jsonl -> today's) is read once, under its first name", async () => {
    const linked = join(dir, "linked");
    mkdirSync(linked);
    copyFileSync(logFile, join(linked, "2026-12-06.jsonl"));
    symlinkSync("2026-12-06.jsonl", join(linked, "current.jsonl"));
    linkSync(join(linked, "2026-12-06.jsonl"), join(linked, "hard.jsonl"));
    const once = sums(expected);
    const { model } = await reportJson(["linked/*.jsonl", join(linked, "current.jsonl")]);
    expect(model.totals).toMatchObject(once);
    expect(model.source.files).toEqual([join(linked, "2026-12-06.jsonl")]);
  });

  it("a named pipe reached by two names, and - beside /dev/stdin, are read once (the pipe's second open waited forever)", async () => {
    const once = sums(expected);
    const fifo = join(dir, "pipe.jsonl");
    execFileSync("mkfifo", [fifo]);
    symlinkSync(fifo, join(dir, "pipe-link.jsonl"));
    const writer = spawn("sh", ["-c", 'cat "$0" > "$1"', logFile, fifo], { stdio: "ignore" });
    const piped = await runCli(["report", "--format", "json", fifo, join(dir, "pipe-link.jsonl")], {
      cwd: dir,
      timeoutMs: 10_000,
    });
    writer.kill();
    expect(piped.code, piped.stderr).toBe(0);
    expect((JSON.parse(piped.stdout) as ReportModel).totals).toMatchObject(once);
    const stdin = openSync(logFile, "r");
    const both = spawnSync(process.execPath, [CLI, "report", "--format", "json", "-", "/dev/stdin"], {
      stdio: [stdin, "pipe", "pipe"],
      timeout: 10_000,
    });
    closeSync(stdin);
    expect(both.status, both.stderr.toString()).toBe(0);
    expect((JSON.parse(both.stdout.toString()) as ReportModel).totals).toMatchObject(once);
  });

  it("a corrupt gzip stream is reported as malformed after the lines it gave", async () => {
    const gz = gzipSync(readFileSync(logFile));
    const broken = join(dir, "broken.gz");
    writeFileSync(broken, Buffer.concat([gz.subarray(0, gz.length - 12), Buffer.from("not gzip at all")]));
    const { model, code } = await reportJson([broken]);
    expect(code).toBe(0);
    expect(model.malformed.lines).toBeGreaterThanOrEqual(1);
    expect(model.malformed.examples.at(-1)!.error).toMatch(/could not read further/);
  });

  it("-o one of the logs it reads (by its name or another): exit 2, the log as it was", async () => {
    const dir = tempDir("mcpn-report-self-");
    const log = join(dir, "proxy.jsonl");
    const text = `${JSON.stringify({ v: 1, ts: "2026-01-01T00:00:00Z", action: "none" })}\n`;
    writeFileSync(log, text);
    symlinkSync(log, join(dir, "link.jsonl"));
    for (const output of [log, join(dir, "link.jsonl")]) {
      const run = await runCli(["report", log, "-o", output], { timeoutMs: 10_000 });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain("one of the logs it reads: the report would replace it");
      expect(readFileSync(log, "utf8")).toBe(text);
    }
    // A named pipe read and then named by -o: refused, not left waiting for a reader.
    const pipe = join(dir, "pipe.jsonl");
    execFileSync("mkfifo", [pipe]);
    const piped = await runCli(["report", pipe, "-o", pipe], { timeoutMs: 10_000 });
    expect(piped.code, piped.stderr).toBe(2);
    expect(piped.stderr).toContain("one of the logs it reads");
    // A -o path that cannot be looked at is still the -o error it was (exit 2), not an internal one.
    const under = await runCli(["report", log, "-o", join(log, "x.md")], { timeoutMs: 10_000 });
    expect(under.code, under.stderr).toBe(2);
    expect(under.stderr.trim()).toBe(
      `mcp-normalizer: report: -o: cannot write ${join(log, "x.md")}: ENOTDIR: not a directory`,
    );
  });

  it("SIGINT while it reads: exit 130, no report, the folders made for -o gone again", async () => {
    const dir = tempDir("mcpn-report-signal-");
    const output = join(dir, "made", "report.md");
    // Standard input held open: it reads on until stopped.
    const report = spawn(process.execPath, [CLI, "report", "-", "-o", output], { stdio: ["pipe", "pipe", "pipe"] });
    const exited = new Promise<number | null>((resolve) => report.once("exit", (code) => resolve(code)));
    try {
      report.stdin!.write(`${JSON.stringify({ v: 1, ts: "2026-01-01T00:00:00Z", action: "none" })}\n`);
      const deadline = Date.now() + 10_000;
      // Looked at often: a signal right as the folder appears is the case (its handler must be there already).
      while (!existsSync(join(dir, "made")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      expect(existsSync(join(dir, "made"))).toBe(true);
      report.kill("SIGINT");
      expect(await exited).toBe(130);
      expect(existsSync(join(dir, "made"))).toBe(false);
    } finally {
      report.kill("SIGKILL");
    }
  });

  it("-o a file it cannot write: exit 2 naming it and the OS error, never a hang (Node's recursive mkdir loops on /proc)", async () => {
    for (const [output, reason] of [
      ["/proc/mcpn-x/report.md", "ENOENT"],
      ["/proc/version", "EIO"],
    ] as const) {
      const run = await runCli(["report", "-", "-o", output], { input: "", timeoutMs: 10_000 });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr.trim()).toBe(
        `mcp-normalizer: report: -o: cannot write ${output}: ${reason}${
          reason === "ENOENT" ? ": no such file or directory" : ": i/o error"
        }`,
      );
    }
    // A folder that says it takes files (to root) and makes none: refused before the work too.
    const proc = await runCli(["report", "-", "-o", "/proc/mcpn-report.md"], { input: "", timeoutMs: 10_000 });
    expect(proc.code, proc.stderr).toBe(2);
    expect(proc.stderr.trim()).toMatch(/^mcp-normalizer: report: -o: cannot write \/proc\/mcpn-report\.md: E[A-Z]+: /);
    const audit = await runCli(["audit", "-o", "/proc/mcpn-x/audit.md", "--", process.execPath, FIXTURE_SERVER], {
      timeoutMs: 10_000,
    });
    expect(audit.code, audit.stderr).toBe(2);
    expect(audit.stderr).toContain("audit: -o: cannot write /proc/mcpn-x/audit.md: ENOENT");
    // A folder that is a file, a link to nowhere: refused before any work, as before.
    writeFileSync(join(dir, "a-file"), "");
    symlinkSync(join(dir, "nowhere", "r.md"), join(dir, "dangling.md"));
    for (const output of [join(dir, "a-file", "r.md"), join(dir, "dangling.md")]) {
      // Before the work: the server named (which does not exist) is never started — exit 2, not 1.
      const run = await runCli(["audit", "-o", output, "--", join(dir, "no-such-server")], { timeoutMs: 10_000 });
      expect(run.code, `${output}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(/cannot write .*: (ENOTDIR|ENOENT)/);
    }
    // A run that fails after the check leaves no empty report behind.
    const out = join(dir, "never", "audit.md");
    const failed = await runCli(["audit", "-o", out, "--", join(dir, "no-such-server")], { timeoutMs: 10_000 });
    expect(failed.code, failed.stderr).toBe(1);
    expect(existsSync(out)).toBe(false);
  });

  it("a log saved with a byte order mark: its first record counts, nothing malformed", async () => {
    const marked = join(dir, "bom.jsonl");
    writeFileSync(marked, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(logFile)]));
    const { model, code } = await reportJson([marked]);
    expect(code).toBe(0);
    expect(model.malformed.lines).toBe(0);
    expect(model.totals).toMatchObject(sums(expected));
  });

  it("a log that does not exist, or a glob that matches nothing, exits 2 naming it", async () => {
    const missing = await runCli(["report", "nope.jsonl"], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("report: cannot read nope.jsonl: no such file");
    const glob = await runCli(["report", "none/*.jsonl"], { cwd: dir });
    expect(glob.code).toBe(2);
    expect(glob.stderr).toContain("report: none/*.jsonl matches no file");
    const nothing = await runCli(["report"], { cwd: dir });
    expect(nothing.code).toBe(2);
  });

  it("streams: memory does not grow with the log (~25 MB vs ~100 MB), and stays well under its size", async () => {
    const lines = readFileSync(logFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    /** A log of about `mib` MiB: the session's lines over and over, spread over 50 000 URIs and 7 servers. */
    const generate = async (file: string, mib: number) => {
      const out = createWriteStream(file);
      let bytes = 0;
      let count = 0;
      let saved = 0;
      while (bytes < mib * 1024 * 1024) {
        const chunk: string[] = [];
        for (let i = 0; i < 2000; i++, count++) {
          const line = lines[count % lines.length]!;
          saved += line.saved as number;
          chunk.push(JSON.stringify({ ...line, uri: `file:///many/${count % 50_000}.txt`, server: `s${count % 7}` }));
        }
        const text = `${chunk.join("\n")}\n`;
        bytes += Buffer.byteLength(text);
        if (!out.write(text)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
      }
      await new Promise<void>((resolve) => out.end(() => resolve()));
      return { file, bytes, count, saved };
    };
    const measure = (file: string) =>
      new Promise<{ maxRssMiB: number; model: ReportModel; seconds: number }>((resolve, reject) => {
        // The child reports its own peak RSS as it exits.
        const hook =
          "data:text/javascript,process.on('exit',()=>process.stderr.write('maxrss='+process.resourceUsage().maxRSS+'\\n'))";
        const started = performance.now();
        const child = spawn(process.execPath, ["--import", hook, CLI, "report", "--format", "json", file], {
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
        child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
        child.on("error", reject);
        child.on("close", () => {
          const m = /maxrss=(\d+)/.exec(stderr);
          if (!m) return reject(new Error(`no maxrss; stderr: ${stderr}`));
          resolve({
            maxRssMiB: Number(m[1]) / 1024,
            model: JSON.parse(stdout) as ReportModel,
            seconds: (performance.now() - started) / 1000,
          });
        });
      });
    const small = await generate(join(dir, "quarter.jsonl"), 25);
    const big = await generate(join(dir, "big.jsonl"), 100);
    const baseline = await measure(logFile);
    const quarter = await measure(small.file);
    const full = await measure(big.file);
    for (const [run, log] of [
      [quarter, small],
      [full, big],
    ] as const) {
      expect(run.model.totals.entries).toBe(log.count);
      expect(run.model.totals.saved).toBe(log.saved);
      expect(run.model.uriTable.untrackedEntries).toBeGreaterThan(0);
    }
    const mib = (n: number) => (n / 1024 / 1024).toFixed(0);
    console.log(
      `report: ${mib(big.bytes)} MiB (${big.count} lines) in ${full.seconds.toFixed(1)} s, peak RSS ${full.maxRssMiB.toFixed(0)} MiB; ` +
        `${mib(small.bytes)} MiB: ${quarter.maxRssMiB.toFixed(0)} MiB; tiny log: ${baseline.maxRssMiB.toFixed(0)} MiB`,
    );
    // Four times the input, (nearly) the same memory: nothing is kept per line.
    expect(full.maxRssMiB - quarter.maxRssMiB).toBeLessThan(20);
    expect(full.maxRssMiB - baseline.maxRssMiB).toBeLessThan(big.bytes / 1024 / 1024 / 1.5);
  }, 180_000);
});
