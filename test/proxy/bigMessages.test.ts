/**
 * Large messages are normal (issue 3): a 50 MiB text-in-base64 resource through `stdio` and
 * through `/mcp` arrives as text, whole. Times are printed for the record, not asserted.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI, FIXTURE_SERVER } from "../helpers/paths.js";
import { connect, hostTransport, raw, startFixtureServe, type ServeProcess } from "../helpers/proxyProcess.js";
// @ts-expect-error -- a plain .mjs fixture without types
import { bigBlob } from "../fixtures/servers/fixture-server.mjs";

const MIB = 50;
let serve: ServeProcess;
let expectedText: string;

beforeAll(async () => {
  serve = await startFixtureServe();
  expectedText = Buffer.from(bigBlob(MIB) as string, "base64").toString("utf8");
});
afterAll(async () => {
  await serve?.stop();
});

for (const kind of ["stdio", "mcp"] as const) {
  it(`a ${MIB} MiB text-in-base64 resource through ${kind} arrives as text`, async () => {
    const transport =
      kind === "stdio"
        ? new StdioClientTransport({ command: process.execPath, args: [CLI, "stdio", "--", process.execPath, FIXTURE_SERVER], stderr: "pipe", maxBufferSize: 512 * 1024 * 1024 } as never)
        : hostTransport("mcp", { url: serve.url });
    const host = await connect(transport);
    try {
      const started = performance.now();
      const result = await raw(host.client, "resources/read", { uri: `fixture://big/${MIB}` }, { timeout: 120_000 });
      const ms = performance.now() - started;
      const [entry] = result.contents as Array<{ text?: string; blob?: string; mimeType?: string }>;
      expect(entry!.blob).toBeUndefined();
      expect(entry!.mimeType).toBe("text/plain");
      expect(entry!.text!.length).toBe(expectedText.length);
      expect(entry!.text === expectedText).toBe(true);
      console.log(`${MIB} MiB through ${kind}: ${ms.toFixed(0)} ms`);
    } finally {
      await host.close();
    }
  }, 180_000);
}
