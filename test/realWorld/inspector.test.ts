/**
 * The MCP Inspector's CLI mode as a second real client (`@modelcontextprotocol/inspector-cli`,
 * what `inspector --cli` runs; the `@modelcontextprotocol/inspector` package itself needs Node
 * ≥ 22), through `stdio` and `/mcp`, in the forms the README gives. Its output through the
 * proxy equals its output against the everything server directly, but for normalized content.
 *
 * The Inspector drops a bare `--` from what it passes on, so `stdio -- CMD` reaches the proxy
 * as `stdio CMD`: the proxy takes the first word that is not an option as the upstream command.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, EVERYTHING_SERVER, INSPECTOR_CLI, ROOT } from "../helpers/paths.js";
import { startServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";

interface InspectorRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `inspector --cli ARGS…`. Run from a folder whose parent holds a package.json: the CLI picks
 * which package.json to read for its client name by looking at `../package.json` from the
 * working folder.
 */
function inspector(args: readonly string[]): Promise<InspectorRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [INSPECTOR_CLI, "--cli", ...args], {
      cwd: join(ROOT, "test"),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the Inspector did not finish in 45 s; stderr: ${stderr}`));
    }, 45_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function json(args: readonly string[]): Promise<Record<string, unknown>> {
  const run = await inspector(args);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

const node = process.execPath;
const TOOLS = ["--method", "tools/list"];
const SUM = ["--method", "tools/call", "--tool-name", "get-sum", "--tool-arg", "a=2", "b=40"];
const BLOB = ["--method", "resources/read", "--uri", "demo://resource/dynamic/blob/1"];

describe("the MCP Inspector (CLI mode) through the proxy", () => {
  let serve: ServeProcess;
  let directTools: Record<string, unknown>;
  let directSum: Record<string, unknown>;
  beforeAll(async () => {
    serve = await startServe(["--name", "everything", "--", node, EVERYTHING_SERVER, "stdio"]);
    directTools = await json([node, EVERYTHING_SERVER, "stdio", ...TOOLS]);
    directSum = await json([node, EVERYTHING_SERVER, "stdio", ...SUM]);
  }, 120_000);
  afterAll(async () => {
    await serve?.stop();
  });

  it("sees what it sees directly: the same tools and the same tool result", () => {
    expect((directTools.tools as unknown[]).length).toBeGreaterThan(5);
    expect(JSON.stringify(directSum)).toContain("42");
  });

  const stdioForms: Array<[string, string[]]> = [
    ["stdio -- CMD (the Inspector drops the --)", [node, CLI, "stdio", "--", node, EVERYTHING_SERVER, "stdio"]],
    ["stdio CMD", [node, CLI, "stdio", node, EVERYTHING_SERVER, "stdio"]],
    [
      "stdio --command CMD --arg A",
      [node, CLI, "stdio", "--command", node, `--arg=${EVERYTHING_SERVER}`, "--arg=stdio"],
    ],
  ];
  for (const [form, target] of stdioForms) {
    it(`through ${form}`, async () => {
      expect(await json([...target, ...TOOLS])).toEqual(directTools);
      expect(await json([...target, ...SUM])).toEqual(directSum);
    });
  }

  it("through stdio from an Inspector config file (an mcpServers entry without --)", async () => {
    const file = join(tempDir("mcpn-inspector-"), "inspector.json");
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: { everything: { command: node, args: [CLI, "stdio", node, EVERYTHING_SERVER, "stdio"] } },
      }),
    );
    expect(await json(["--config", file, "--server", "everything", ...TOOLS])).toEqual(directTools);
  });

  it("through /mcp (streamable HTTP)", async () => {
    const url = `${serve.url}/mcp/everything`;
    expect(await json([url, "--transport", "http", ...TOOLS])).toEqual(directTools);
    expect(await json([url, "--transport", "http", ...SUM])).toEqual(directSum);
  });

  it("gets text where the server sends a base64 blob of text, over stdio and /mcp", async () => {
    const direct = await json([node, EVERYTHING_SERVER, "stdio", ...BLOB]);
    expect(direct.contents).toMatchObject([
      { uri: "demo://resource/dynamic/blob/1", mimeType: "text/plain", blob: expect.any(String) },
    ]);
    const text = Buffer.from((direct.contents as Array<{ blob: string }>)[0]!.blob, "base64").toString("utf8");
    const stripTime = (s: string): string => s.replace(/\d{1,2}:\d{2}:\d{2}\s?[AP]M/, "<time>");
    for (const target of [
      [node, CLI, "stdio", node, EVERYTHING_SERVER, "stdio"],
      [`${serve.url}/mcp/everything`, "--transport", "http"],
    ]) {
      const proxied = await json([...target, ...BLOB]);
      const [entry] = proxied.contents as Array<{ uri: string; mimeType: string; text?: string; blob?: string }>;
      expect(entry).toMatchObject({ uri: "demo://resource/dynamic/blob/1", mimeType: "text/plain" });
      expect(entry!.blob).toBeUndefined();
      expect(stripTime(entry!.text!)).toBe(stripTime(text));
    }
  });
});
