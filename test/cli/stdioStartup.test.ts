/**
 * What `mcp-normalizer stdio` loads. A desktop host starts it for every session and waits for
 * its `initialize`: started from flags alone it must not load the zod config schema, nor the
 * image decoders and encoders (they load with the first image to fit), nor the charset tables. A real process records
 * every module it loads (test/fixtures/hooks/recordLoads.mjs); an eager import added anywhere
 * on the path makes the first test fail. The second shows the recording sees both: with a
 * config file zod loads, and a tool result holding an image loads the image modules.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { smallPng } from "../fixtures/images/makeImages.js";
import { CLI, FIXTURE_SERVER, IMAGE_SERVER, ROOT } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempDir.js";

const RECORD_LOADS = join(ROOT, "test", "fixtures", "hooks", "recordLoads.mjs");
const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-host", version: "1" } };
const WAIT_MS = 20_000;

/** Modules (paths below the repository, or package names) that must stay off the flag-only path. */
const NOT_AT_START = [
  "node_modules/zod/",
  "dist/config/schema.js",
  "dist/config/load.js",
  "dist/fit/images/",
  "node_modules/sharp/",
  "node_modules/@resvg/",
  "node_modules/decode-ico/",
  // The charset tables and detector load with the first non-UTF-8 text.
  "iconv-lite",
  "chardet",
];

/** Runs `stdio ARGS` with module recording, asks `requests` in turn, ends stdin; the modules it loaded. */
async function loadsOf(
  args: readonly string[],
  requests: ReadonlyArray<{ method: string; params: unknown }>,
  env: Record<string, string> = {},
): Promise<{ modules: string[]; answers: Array<Record<string, unknown>> }> {
  const log = join(tempDir("mcpn-loads-"), "loads.txt");
  writeFileSync(log, "");
  const child = spawn(process.execPath, ["--import", RECORD_LOADS, CLI, "stdio", ...args], {
    env: { ...process.env, ...env, MCPN_LOAD_LOG: log },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const answers: Array<Record<string, unknown>> = [];
  const timer = setTimeout(() => child.kill("SIGKILL"), WAIT_MS);
  try {
    for (const [i, { method, params }] of [{ method: "initialize", params: INIT }, ...requests].entries()) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: i + 1, method, params })}\n`);
      if (i === 0) child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      for (;;) {
        const next = await lines.next();
        if (next.done) throw new Error(`stdio ended before answering ${method}; stderr: ${stderr.slice(-500)}`);
        const message = JSON.parse(next.value) as Record<string, unknown>;
        if (message.id === i + 1) {
          answers.push(message);
          break;
        }
      }
    }
    child.stdin.end();
    expect(await exited).toBe(0);
  } finally {
    clearTimeout(timer);
    child.kill("SIGKILL");
  }
  const modules = readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => line.replace(`file://${ROOT}/`, "").replace(`${ROOT}/`, ""));
  return { modules, answers };
}

const loaded = (modules: readonly string[], part: string): string[] => modules.filter((m) => m.includes(part));

describe("what stdio loads", () => {
  it("from flags alone: no zod schema and no image modules, though it answered and normalized", async () => {
    const { modules, answers } = await loadsOf(
      ["--", process.execPath, FIXTURE_SERVER],
      [{ method: "resources/read", params: { uri: "fixture://own/blob/1" } }],
    );
    // The recording worked: the command and the engine it used are in it.
    expect(loaded(modules, "dist/cli/commands/stdio.js")).not.toEqual([]);
    expect(loaded(modules, "dist/normalize/entry.js")).not.toEqual([]);
    expect(answers[1]?.result).toEqual({
      contents: [{ uri: "fixture://own/blob/1", mimeType: "text/plain", text: "Resource 1: This is a base64 blob" }],
    });
    expect(NOT_AT_START.flatMap((part) => loaded(modules, part))).toEqual([]);
  });

  it("with a config file zod loads, and an image to fit loads the image modules", async () => {
    const dir = tempDir("mcpn-fit-");
    writeFileSync(join(dir, "photo.png"), await smallPng());
    const config = join(dir, "proxy.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { images: { command: process.execPath, args: [IMAGE_SERVER] } },
        normalize: { images: { maxDimension: 100 } },
      }),
    );
    const { modules, answers } = await loadsOf(
      ["--config", config],
      [{ method: "tools/call", params: { name: "image", arguments: { file: "photo.png", mimeType: "image/png" } } }],
      { FIXTURE_IMAGES_DIR: dir },
    );
    expect(loaded(modules, "node_modules/zod/")).not.toEqual([]);
    expect(loaded(modules, "dist/fit/images/fitImage.js")).not.toEqual([]);
    const content = (answers[1]!.result as { content: Array<{ type: string; data: string }> }).content;
    expect(content[0]?.type).toBe("image");
    // Fitted: the 800 × 600 PNG came back smaller than it went out.
    expect(Buffer.from(content[0]!.data, "base64").length).toBeLessThan((await smallPng()).length);
  });
});
