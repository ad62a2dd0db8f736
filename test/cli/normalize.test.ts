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

  it("a FILE after -- is read (a name starting with -), not stdin; more than one is refused", async () => {
    const dir = tempDir("mcpn-");
    const input = { contents: [{ uri: "a.md", mimeType: "application/octet-stream", blob: b64("# Hi\n") }] };
    writeFileSync(join(dir, "-msg.json"), JSON.stringify(input));
    const run = await runCli(["normalize", "--", "-msg.json"], { input: '{"unrelated":true}', cwd: dir });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ contents: [{ uri: "a.md", mimeType: "text/markdown", text: "# Hi\n" }] });
    const two = await runCli(["normalize", "-msg.json", "--", "other.json"], { cwd: dir });
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/a file named so goes after --|expected at most one FILE/);
    const empty = await runCli(["normalize", "--", ""], { cwd: dir });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('argument 1 is empty ("": an unset variable?)');
    const both = await runCli(["normalize", "--", "-msg.json", "other.json"], { cwd: dir });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("expected at most one FILE, got 2 (-msg.json, other.json)");
  });

  it("login refuses words after -- instead of ignoring them", async () => {
    const run = await runCli(["login", "--url", "http://127.0.0.1:9/mcp", "--", "extra"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^mcp-normalizer: login: nothing goes after -- \(got 1 word\)/);
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

  it("what it leaves as it was keeps its text: integers past 2^53, 1.0, key order; --dry-run writes the input itself", async () => {
    const input =
      '{"jsonrpc":"2.0","id":12345678901234567891,"result":{"contents":[' +
      '{"uri":"a.md","mimeType":"text/markdown","text":"# Hi","_meta":{"rowId":9007199254740993,"ratio":1.0,"b":1,"10":2}},' +
      `{"uri":"b.txt","mimeType":"text/plain","blob":"${b64("hi")}"}],"e":{},"f":[]}}`;
    const normalized = input.replace(`"blob":"${b64("hi")}"`, '"text":"hi"');
    expect((await runCli(["normalize"], { input })).stdout).toBe(`${normalized}\n`);
    expect((await runCli(["normalize", "--dry-run"], { input: `  ${input}\n` })).stdout).toBe(`${input}\n`);
    const pretty = (await runCli(["normalize", "--pretty"], { input })).stdout;
    expect(pretty).toContain(
      '\n          "rowId": 9007199254740993,\n          "ratio": 1.0,\n          "b": 1,\n          "10": 2\n',
    );
    expect(pretty).toContain('"e": {},\n    "f": []\n');
    expect(pretty.replace(/\n */g, "").replaceAll('": ', '":')).toBe(normalized);
    // A pretty-printed input comes out compact (its tokens as written), a dry run as it came.
    const spaced = pretty.replace('"text": "hi"', `"blob": "${b64("hi")}"`);
    expect((await runCli(["normalize"], { input: spaced })).stdout).toBe(`${normalized}\n`);
    expect((await runCli(["normalize", "--dry-run"], { input: spaced })).stdout).toBe(`${spaced.trim()}\n`);
  });

  it("records count an entry's bytes as written (spaces, \\u escapes), as the proxy's log does; bare or in a message", async () => {
    const entry = '{"uri" : "a://x", "mimeType" : "application/octet-stream", "text" : "caf\\u00e9 \\u00e9t\\u00e9"}';
    for (const input of [
      `{"contents": [${entry}]}`,
      `{"jsonrpc": "2.0", "id": 7, "result": {"contents": [ ${entry} ]}}`,
    ]) {
      const run = await runCli(["normalize", "--records"], { input });
      expect(run.code, run.stderr).toBe(0);
      const record = JSON.parse(run.stderr.split("\n")[0]!) as {
        action: string;
        bytesBefore: number;
        bytesAfter: number;
      };
      const out = JSON.parse(run.stdout) as { contents?: unknown[]; result?: { contents: unknown[] } };
      const written = JSON.stringify((out.contents ?? out.result!.contents)[0]);
      expect(record).toMatchObject({ action: "fix-mime", bytesBefore: Buffer.byteLength(entry) });
      expect(record.bytesAfter, input).toBe(Buffer.byteLength(written));
    }
  });

  it("invalid JSON: exit 2 and a clear message, no stack trace", async () => {
    const run = await runCli(["normalize"], { input: '{"result": {\n  "contents": [tru]}}' });
    expect(run.code).toBe(2);
    // Where, as a config's error says it: line, column, the field being read.
    expect(run.stderr).toBe(
      "mcp-normalizer: normalize: <stdin> is not valid JSON at line 2, column 16 (in $.result.contents[0]): " +
        "expected a value (a string in double quotes, a number, true, false, null, an object or an array)\n",
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stdout).toBe("");
  });

  it("bytes that are not UTF-8: exit 2 saying so, never a U+FFFD written in their place", async () => {
    const latin1 = Buffer.concat([
      Buffer.from('{"contents":[{"uri":"x","text":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}]}'),
    ]);
    const run = await runCli(["normalize"], { input: latin1 });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^mcp-normalizer: normalize: <stdin> is not UTF-8/);
    expect(run.stdout).toBe("");
  });

  it("a byte order mark before the JSON is skipped", async () => {
    const input = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(JSON.stringify({ contents: [{ uri: "x", mimeType: "text/plain", blob: b64("hello") }] })),
    ]);
    const run = await runCli(["normalize"], { input });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ contents: [{ uri: "x", mimeType: "text/plain", text: "hello" }] });
  });

  it("a missing file: exit 2 naming the file", async () => {
    const run = await runCli(["normalize", "/nonexistent/result.json"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("/nonexistent/result.json");
  });

  it("an endless input (/dev/zero) stops at the longest text Node holds: exit 2 naming it, memory bounded", async () => {
    const run = await runCli(["normalize", "/dev/zero"], { timeoutMs: 30_000 });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "mcp-normalizer: normalize: /dev/zero is larger than 536870888 bytes, the longest text Node can read as one " +
        "string (normalize its messages one by one)\n",
    );
  });

  it("an unknown flag: exit 2 naming the flag", async () => {
    const run = await runCli(["normalize", "--frobnicate"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--frobnicate");
  });

  it("--method that names no result the engine reads (a typo): exit 2 listing the methods, input untouched", async () => {
    const input = '{"contents":[{"uri":"a.md","mimeType":"application/octet-stream","blob":"IyBIaQo="}]}';
    const run = await runCli(["normalize", "--method", "resource/read"], { input });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim()).toBe(
      "mcp-normalizer: normalize: --method expects one of resources/read, tools/call, prompts/get, resources/list, " +
        'resources/templates/list, got "resource/read"',
    );
    const right = await runCli(["normalize", "--method", "resources/read"], { input });
    expect(right.code).toBe(0);
    expect(right.stdout).toContain('"text":"# Hi\\n"');
  });

  it("a value it does not recognize passes through unchanged", async () => {
    const run = await runCli(["normalize"], { input: '{"hello":[1,2,3]}' });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ hello: [1, 2, 3] });
    expect(run.stderr).toContain("no MCP result recognized");
  });
});

/** A PNG of one colour. */
async function solidPng(width: number, height: number, background: string): Promise<Buffer> {
  const sharp = (await import("sharp")).default;
  return sharp({ create: { width, height, channels: 3, background } })
    .png()
    .toBuffer();
}

/** A config file with these `normalize` settings, in a folder of its own. */
function configWith(normalize: Record<string, unknown>): { dir: string; config: string } {
  const dir = tempDir("mcpn-");
  const config = join(dir, "proxy.config.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { x: { command: "true" } }, normalize }));
  return { dir, config };
}

describe("mcp-normalizer normalize --config: the config's fit keys too", () => {
  it("fits a large image, inlines an embedded resource and cuts a long result as the proxy would", async () => {
    const png = await solidPng(3000, 2000, "#3a6");
    const { dir, config } = configWith({ images: true, embeddedResources: "inline", maxResultBytes: 4096 });
    const input = join(dir, "result.json");
    writeFileSync(
      input,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        result: {
          content: [
            { type: "resource", resource: { uri: "file:///n.txt", mimeType: "text/plain", text: "a note" } },
            { type: "image", mimeType: "image/png", data: png.toString("base64") },
            { type: "text", text: "x".repeat(9000) },
          ],
        },
      }),
    );
    const run = await runCli(["normalize", input, "--config", config, "--records"]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.id).toBe(3);
    const [note, image, text] = out.result.content as Array<Record<string, string>>;
    expect(note).toMatchObject({ type: "text", text: "a note" });
    const sharp = (await import("sharp")).default;
    const meta = await sharp(Buffer.from(image!.data!, "base64")).metadata();
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBeLessThanOrEqual(1568);
    expect(text!.text!.length).toBeLessThan(9000);
    const actions = run.stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => (JSON.parse(line) as { action: string }).action);
    expect(actions).toEqual(expect.arrayContaining(["inline-resource", "fit-image", "cut-result"]));
    expect(run.stderr).toMatch(/normalize \(tools\/call\): 3 of 3 entries changed/);
  });

  it("an entry changed twice (its type fixed, then fitted) counts once: in at its first size, out at its last", async () => {
    const png = await solidPng(300, 200, "#c83");
    // A PNG labelled image/jpeg: the engine fixes its type, then the fit layer turns it into a JPEG.
    const { dir, config } = configWith({ images: { formats: ["image/jpeg"] } });
    const block = { type: "image", mimeType: "image/jpeg", data: png.toString("base64") };
    const input = join(dir, "result.json");
    writeFileSync(input, JSON.stringify({ content: [block] }));
    const run = await runCli(["normalize", input, "--config", config, "--method", "tools/call", "--records"]);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout).content[0];
    expect(out.mimeType).toBe("image/jpeg");
    const actions = run.stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { action: string; chained?: boolean });
    expect(actions).toMatchObject([{ action: "fix-mime" }, { action: "fit-image", chained: true }]);
    const before = Buffer.byteLength(JSON.stringify(block));
    const after = Buffer.byteLength(JSON.stringify(out));
    const share = (((before - after) / before) * 100).toFixed(1);
    expect(run.stderr).toContain(
      `normalize (tools/call): 1 of 1 entries changed (fix-mime 1, fit-image 1); ${before} → ${after} bytes; ` +
        `saved ${before - after} (${share}%)`,
    );
  });
});

describe("mcp-normalizer normalize --config: no server is started", () => {
  it("runs with the servers' secret variables unset, a server's own normalize settings applied", async () => {
    const dir = tempDir("mcpn-");
    const config = join(dir, "proxy.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          docs: { command: "node", normalize: { unwrapBlobs: false } },
          billing: { url: "https://example.com/mcp", headers: { Authorization: "Bearer ${NORMALIZE_UNSET_TOKEN_X}" } },
        },
      }),
    );
    const blob = { uri: "file:///a.txt", mimeType: "text/plain", blob: Buffer.from("hello").toString("base64") };
    const input = JSON.stringify({ contents: [blob] });
    for (const [extra, kept] of [
      [["--server", "docs"], true],
      [[], false],
    ] as const) {
      const run = await runCli(["normalize", "--config", config, ...extra, "--method", "resources/read", "-"], {
        input,
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toContain("NORMALIZE_UNSET_TOKEN_X");
      expect("blob" in JSON.parse(run.stdout).contents[0]).toBe(kept);
    }
  });
});
