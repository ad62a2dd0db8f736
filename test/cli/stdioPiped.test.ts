/**
 * `stdio` as people run it from a shell or a launcher: input piped in (EOF on stdin after the
 * last request), the upstream given with or without `--` or as `--command`/`--arg`, and the
 * upstream's name in the records (`--name`, or the executable's base name / the URL's host).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import { runCli } from "../helpers/runCli.js";
import { startAskingServer, type AskingServer } from "../fixtures/upstream-servers/askingServer.js";

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "shell", version: "1" } },
};
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };
const lines = (...messages: unknown[]): string => messages.map((m) => `${JSON.stringify(m)}\n`).join("");
const answers = (stdout: string): Array<Record<string, unknown>> =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** Processes whose command line holds `marker` (the upstream of one run). */
function processesWith(marker: string): string[] {
  return execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(marker));
}

describe("stdio with input piped in", () => {
  const forms: Array<[string, (marker: string) => string[]]> = [
    ["-- CMD ARGS", (marker) => ["stdio", "--", process.execPath, FIXTURE_SERVER, marker]],
    ["CMD ARGS without --", (marker) => ["stdio", process.execPath, FIXTURE_SERVER, marker]],
    [
      "--command CMD --arg A",
      (marker) => ["stdio", "--command", process.execPath, "--arg", FIXTURE_SERVER, `--arg=${marker}`],
    ],
  ];
  for (const [form, argv] of forms) {
    it(`answers every request read before EOF, a slow one too, then ends the upstream and exits 0 (${form})`, async () => {
      const marker = `--piped-${randomBytes(6).toString("hex")}`;
      const input = lines(
        INIT,
        INITIALIZED,
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "sleep", arguments: { ms: 700 } } },
      );
      const run = await runCli(argv(marker), { input, timeoutMs: 30_000 });
      expect(run.code, run.stderr).toBe(0);
      const out = answers(run.stdout);
      expect(out.map((m) => m.id)).toEqual([1, 2, 3]);
      expect(out[0]!.result).toMatchObject({ serverInfo: expect.any(Object) });
      expect((out[1]!.result as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain("sleep");
      expect(out[2]!.result).toBeDefined();
      expect(out[2]!.error).toBeUndefined();
      expect(processesWith(marker)).toEqual([]);
    });
  }

  it("a request the upstream makes of the host after EOF is answered with an error, not waited for", async () => {
    const init = { ...INIT, params: { ...INIT.params, capabilities: { elicitation: {} } } };
    const input = lines(init, INITIALIZED, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "elicit", arguments: {} },
    });
    const run = await runCli(["stdio", "--", process.execPath, FIXTURE_SERVER], { input, timeoutMs: 30_000 });
    expect(run.code, run.stderr).toBe(0);
    const out = answers(run.stdout);
    // The proxy answered the elicitation itself (nobody could), so the call it belonged to
    // finished with the upstream's error instead of waiting for limits.requestTimeoutMs.
    expect(out.find((m) => m.method === "elicitation/create")).toBeUndefined();
    const call = out.find((m) => m.id === 2);
    expect(call).toBeDefined();
    expect(JSON.stringify(call)).toContain("the host cannot answer");
  });

  it("empty input: exits 0 at once, nothing on stdout", async () => {
    const run = await runCli(["stdio", "--", process.execPath, FIXTURE_SERVER], { input: "" });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("");
  });
});

describe("stdio --name", () => {
  let upstream: AskingServer;
  beforeAll(async () => {
    upstream = await startAskingServer();
  });
  afterAll(async () => {
    await upstream?.close();
  });

  const serverOf = (stderr: string): unknown[] =>
    stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => (JSON.parse(line) as { server?: unknown }).server)
      .filter((server) => server !== undefined);

  it("names the upstream in the records; by default its executable's base name, or its URL's host", async () => {
    const input = lines(INIT, INITIALIZED);
    const named = await runCli(
      ["stdio", "--log-level", "info", "--name", "Brave Search", "--", process.execPath, FIXTURE_SERVER],
      { input },
    );
    expect(named.code, named.stderr).toBe(0);
    expect(new Set(serverOf(named.stderr))).toEqual(new Set(["Brave Search"]));

    const byCommand = await runCli(["stdio", "--log-level", "info", "--", process.execPath, FIXTURE_SERVER], { input });
    expect(byCommand.code, byCommand.stderr).toBe(0);
    expect(new Set(serverOf(byCommand.stderr))).toEqual(new Set(["node"]));

    const byUrl = await runCli(["stdio", "--log-level", "info", "--url", upstream.url], { input });
    expect(byUrl.code, byUrl.stderr).toBe(0);
    expect(answers(byUrl.stdout).map((m) => m.id)).toEqual([1]);
    expect(new Set(serverOf(byUrl.stderr))).toEqual(new Set(["127.0.0.1"]));
  });

  it("refuses names that cannot be one, saying why", async () => {
    for (const [name, why] of [
      ["", /cannot be empty/],
      ["a/b", /cannot contain '\/'/],
    ] as const) {
      const run = await runCli(["stdio", "--name", name, "--", process.execPath, FIXTURE_SERVER]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(why);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});
