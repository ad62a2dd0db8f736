/**
 * The official filesystem server through `serve`, with a real SDK client: structuredContent is
 * forwarded byte-identical while the content blocks are normalized — the client validates
 * structuredContent against the tool's outputSchema and accepts it (a normalized copy would not
 * validate); a Latin-1 file served as an octet-stream blob is transcoded with its detected
 * charset in the log; the same file read as UTF-8 text by the server (U+FFFD where bytes were
 * lost) passes unchanged, flagged in the log and in /metrics.
 */
import { testPolicy } from "../helpers/policy.js";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeResult } from "../../src/normalize/index.js";
import { series } from "../observe/promText.js";
import { FILESYSTEM_SERVER } from "../helpers/paths.js";
import { connect, hostTransport, raw, startServe, type Connected, type ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";

const dir = tempDir("mcpn-fs-");
const files = join(dir, "files");
mkdirSync(files);
const NOTES = "# Notes\n\nnaïve café ✓\n";
writeFileSync(join(files, "notes.md"), NOTES);
const LATIN1_FILE = fileURLToPath(new URL("../fixtures/corpus/charsets/files/de.latin-1.full.txt", import.meta.url));
copyFileSync(LATIN1_FILE, join(files, "brief.txt"));
const latin1Text = readFileSync(LATIN1_FILE).toString("latin1");
const logFile = join(dir, "n.jsonl");

let serve: ServeProcess;
let host: Connected;
let direct: Connected;
beforeAll(async () => {
  serve = await startServe(["--name", "fs", "--log-file", logFile, "--", process.execPath, FILESYSTEM_SERVER, files]);
  host = await connect(hostTransport("mcp", { url: serve.url, name: "fs" }));
  direct = await connect(
    new StdioClientTransport({ command: process.execPath, args: [FILESYSTEM_SERVER, files], stderr: "ignore" }),
  );
  await host.client.listTools(); // the SDK client caches each tool's outputSchema validator
});
afterAll(async () => {
  await host?.close().catch(() => {});
  await direct?.close().catch(() => {});
  await serve?.stop();
});

describe("the filesystem server through the proxy", () => {
  it("read_media_file: content is normalized, structuredContent is byte-identical and validates against the outputSchema", async () => {
    const args = { path: join(files, "notes.md") };
    const upstream = await raw(direct.client, "tools/call", { name: "read_media_file", arguments: args });
    const viaProxy = await raw(host.client, "tools/call", { name: "read_media_file", arguments: args });
    expect(JSON.stringify(viaProxy.structuredContent)).toBe(JSON.stringify(upstream.structuredContent));
    expect(
      (upstream.structuredContent as { content: Array<{ resource: { blob: string } }> }).content[0]!.resource.blob,
    ).toBe(Buffer.from(NOTES).toString("base64"));
    expect((viaProxy.content as Array<{ resource: unknown }>)[0]!.resource).toEqual({
      uri: `file://${args.path}`,
      mimeType: "text/markdown",
      text: NOTES,
    });

    // The SDK client's own callTool validates structuredContent against the tool's outputSchema.
    const typed = await host.client.callTool({ name: "read_media_file", arguments: args });
    expect(typed.isError).toBeFalsy();
    expect(typed.structuredContent).toEqual(upstream.structuredContent);

    // Why it must stay: the normalized content, put in structuredContent, breaks the schema.
    const { tools } = await host.client.listTools();
    const schema = tools.find((t) => t.name === "read_media_file")!.outputSchema!;
    const validate = new AjvJsonSchemaValidator().getValidator(schema as never);
    expect(validate(upstream.structuredContent).valid).toBe(true);
    expect(validate({ content: viaProxy.content }).valid).toBe(false);
  });

  it("a Latin-1 file as an octet-stream blob is transcoded; the log line names the detected charset", async () => {
    const result = await raw(host.client, "tools/call", {
      name: "read_media_file",
      arguments: { path: join(files, "brief.txt") },
    });
    expect((result.content as Array<{ resource: unknown }>)[0]!.resource).toEqual({
      uri: `file://${join(files, "brief.txt")}`,
      mimeType: "text/plain",
      text: latin1Text,
    });
  });

  it("read_text_file of the Latin-1 file: U+FFFD text passes unchanged; flagged in /metrics and the log", async () => {
    const args = { path: join(files, "brief.txt") };
    const upstream = await raw(direct.client, "tools/call", { name: "read_text_file", arguments: args });
    const viaProxy = await raw(host.client, "tools/call", { name: "read_text_file", arguments: args });
    expect(viaProxy).toEqual(upstream);
    expect((upstream.content as Array<{ text: string }>)[0]!.text).toContain("\ufffd");
    const engine = normalizeResult("tools/call", upstream, testPolicy());
    expect(engine.changes.map((c) => c.action)).toEqual(["warn-lossy-text"]);

    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    expect(
      series(metrics, "mcp_normalizer_warnings_total", {
        server: "fs",
        method: "tools/call",
        action: "warn-lossy-text",
      }),
    ).toBe(1);

    expect(await serve.stop()).toBe(0);
    const lines = readFileSync(logFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l.action === "warn-lossy-text")).toMatchObject([
      { method: "tools/call", path: "content[0]", uri: null, saved: 0, reason: expect.stringContaining("U+FFFD") },
    ]);
    expect(lines.find((l) => l.action === "transcode")).toMatchObject({
      uri: `file://${args.path}`,
      detected: { charset: "iso-8859-1", confidence: expect.any(Number) },
    });
  });
});
