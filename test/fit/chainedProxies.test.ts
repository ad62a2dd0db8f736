/**
 * Two cutting proxies in a chain — an mcp-normalizer whose upstream is another, each with its own
 * `maxResultBytes`: the page links the inner one made reach the host through the outer one, which
 * does not hold them and forwards their reads, and the pages rebuild the text exactly — in a
 * `stdio` session, and for stateless requests to `serve` (no session: the client's pool).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, IMAGE_SERVER } from "../helpers/paths.js";
import { connectStdioWithConfig, raw, startServe, type Connected, type ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";

const INNER_MAX = 4096;
let host: Connected & { stderr(): string };
let serve: ServeProcess;

beforeAll(async () => {
  const dir = tempDir("mcpn-chain-");
  const innerConfig = join(dir, "inner.config.json");
  writeFileSync(
    innerConfig,
    JSON.stringify({
      mcpServers: { img: { command: process.execPath, args: [IMAGE_SERVER] } },
      normalize: { maxResultBytes: INNER_MAX },
    }),
  );
  const outer = {
    mcpServers: {
      inner: { command: process.execPath, args: [CLI, "stdio", "--config", innerConfig, "--server", "img"] },
    },
    normalize: { maxResultBytes: 200_000 },
  };
  host = await connectStdioWithConfig(outer, "inner");
  const outerConfig = join(dir, "outer.config.json");
  writeFileSync(outerConfig, JSON.stringify(outer));
  serve = await startServe(["--config", outerConfig]);
});

afterAll(async () => {
  await host?.close();
  await serve?.stop();
});

/** One stateless request to the outer `serve` (no session): its answer. */
async function stateless(
  id: number,
  method: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${serve.url}/mcp/inner`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", "mcp-protocol-version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    signal: AbortSignal.timeout(20_000),
  });
  return (await response.json()) as Record<string, unknown>;
}

/** The text of every page from `uri` on, following each page's link to the next. */
async function readPages(first: string): Promise<{ text: string; pages: number }> {
  let text = "";
  let pages = 0;
  for (let uri: string | null = first; uri !== null; pages++) {
    const page = await raw(host.client, "resources/read", { uri });
    const contents = page.contents as Array<{ text: string }>;
    text += contents[0]!.text;
    uri = contents[1] === undefined ? null : contents[1].text.trim();
  }
  return { text, pages };
}

describe("two cutting proxies in a chain", () => {
  it("the inner proxy's page links are read through the outer one and rebuild the text", async () => {
    const result = await raw(host.client, "tools/call", { name: "long", arguments: { unit: "é", repeat: 10_000 } });
    const content = result.content as Array<{ type: string; text?: string; uri?: string }>;
    expect(content[1]).toMatchObject({ type: "resource_link" });
    const rest = await readPages(content[1]!.uri!);
    expect(rest.pages).toBeGreaterThan(3);
    expect(content[0]!.text! + rest.text).toBe("é".repeat(10_000));
  }, 30_000);

  it("so are they for stateless requests, from the client's pool", async () => {
    const called = await stateless(1, "tools/call", { name: "long", arguments: { unit: "s", repeat: 10_000 } });
    const content = (called.result as { content: Array<{ type: string; text?: string; uri?: string }> }).content;
    expect(content[1]).toMatchObject({ type: "resource_link" });
    let text = content[0]!.text!;
    for (let uri: string | null = content[1]!.uri!, id = 2; uri !== null; id++) {
      const page = await stateless(id, "resources/read", { uri });
      expect(page.error).toBeUndefined();
      const contents = (page.result as { contents: Array<{ text: string }> }).contents;
      text += contents[0]!.text;
      uri = contents[1] === undefined ? null : contents[1].text.trim();
    }
    expect(text).toBe("s".repeat(10_000));
  }, 30_000);
});
