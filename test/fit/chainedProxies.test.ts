/**
 * Two cutting proxies in a chain — an mcp-normalizer whose upstream is another, each with its own
 * `maxResultBytes`: the page links the inner one made reach the host through the outer one, which
 * does not hold them and forwards their reads, and the pages rebuild the text exactly.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, IMAGE_SERVER } from "../helpers/paths.js";
import { connectStdioWithConfig, raw, type Connected } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";

const INNER_MAX = 4096;
let host: Connected & { stderr(): string };

beforeAll(async () => {
  const innerConfig = join(tempDir("mcpn-chain-"), "inner.config.json");
  writeFileSync(
    innerConfig,
    JSON.stringify({
      mcpServers: { img: { command: process.execPath, args: [IMAGE_SERVER] } },
      normalize: { maxResultBytes: INNER_MAX },
    }),
  );
  host = await connectStdioWithConfig(
    {
      mcpServers: {
        inner: { command: process.execPath, args: [CLI, "stdio", "--config", innerConfig, "--server", "img"] },
      },
      normalize: { maxResultBytes: 200_000 },
    },
    "inner",
  );
});

afterAll(async () => {
  await host?.close();
});

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
});
