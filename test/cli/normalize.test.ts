import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("mcp-normalizer normalize", () => {
  it("normalizes a ReadResourceResult from stdin, JSON on stdout, summary on stderr", async () => {
    const input = {
      contents: [
        {
          uri: "demo://resource/dynamic/blob/1",
          mimeType: "text/plain",
          blob: b64("Resource 1: This is a base64 blob"),
        },
      ],
    };
    const run = await runCli(["normalize"], { input: JSON.stringify(input) });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      contents: [
        { uri: "demo://resource/dynamic/blob/1", mimeType: "text/plain", text: "Resource 1: This is a base64 blob" },
      ],
    });
    expect(run.stderr).toMatch(/1 of 1 entries changed \(unwrap-blob 1\); \d+ → \d+ bytes; saved \d+/);
  });

  it("normalizes a whole JSON-RPC response read from a file, keeping jsonrpc and id", async () => {
    const dir = tempDir("mcpn-");
    const file = join(dir, "response.json");
    writeFileSync(
      file,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        result: {
          content: [
            {
              type: "resource",
              resource: { uri: "file:///a.md", mimeType: "application/octet-stream", blob: b64("# A\n") },
            },
          ],
        },
      }),
    );
    const run = await runCli(["normalize", file]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.jsonrpc).toBe("2.0");
    expect(out.id).toBe(7);
    expect(out.result.content[0].resource).toEqual({ uri: "file:///a.md", mimeType: "text/markdown", text: "# A\n" });
    expect(run.stderr).toContain("tools/call");
  });

  it("--dry-run writes the input unchanged and still reports", async () => {
    const input = JSON.stringify({ contents: [{ uri: "x:/a.txt", mimeType: "text/plain", blob: b64("hello") }] });
    const run = await runCli(["normalize", "--dry-run"], { input });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(JSON.parse(input));
    expect(run.stderr).toContain("dry run");
    expect(run.stderr).toContain("unwrap-blob 1");
  });

  it("invalid JSON: exit 2 and a clear message, no stack trace", async () => {
    const run = await runCli(["normalize"], { input: "{not json" });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^mcp-normalizer: normalize: <stdin> is not valid JSON/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stdout).toBe("");
  });

  it("a missing file: exit 2 naming the file", async () => {
    const run = await runCli(["normalize", "/nonexistent/result.json"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("/nonexistent/result.json");
  });

  it("an unknown flag: exit 2 naming the flag", async () => {
    const run = await runCli(["normalize", "--frobnicate"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--frobnicate");
  });

  it("a value it does not recognize passes through unchanged", async () => {
    const run = await runCli(["normalize"], { input: '{"hello":[1,2,3]}' });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ hello: [1, 2, 3] });
    expect(run.stderr).toContain("no MCP result recognized");
  });
});
