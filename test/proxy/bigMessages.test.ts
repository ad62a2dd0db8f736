/**
 * Large messages are normal: a 50 MiB text-in-base64 resource through `stdio` and
 * through `/mcp` arrives as text, whole. Times are printed for the record, not asserted.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { CLI, FIXTURE_SERVER } from "../helpers/paths.js";
import { connect, hostTransport, raw, startFixtureServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { INITIALIZE_PARAMS, startRawStdio } from "../helpers/rawStdio.js";
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

it(`a ${MIB} MiB text-in-base64 resource through stdio arrives as text`, async () => {
  // A raw host with a linear reader: the SDK's stdio client would take minutes to frame 50 MiB.
  const host = startRawStdio(process.execPath, [CLI, "stdio", "--", process.execPath, FIXTURE_SERVER]);
  try {
    await host.request(1, "initialize", INITIALIZE_PARAMS);
    host.notify("notifications/initialized");
    const started = performance.now();
    const response = await host.request(2, "resources/read", { uri: `fixture://big/${MIB}` }, 170_000);
    const ms = performance.now() - started;
    const [entry] = (response.result as { contents: Array<{ text?: string; blob?: string; mimeType?: string }> })
      .contents;
    expect(entry!.blob).toBeUndefined();
    expect(entry!.mimeType).toBe("text/plain");
    expect(entry!.text === expectedText).toBe(true);
    expect(host.problems).toEqual([]);
    console.log(`${MIB} MiB through stdio: ${ms.toFixed(0)} ms`);
  } finally {
    await host.close();
  }
}, 180_000);

it(`a ${MIB} MiB text-in-base64 resource through /mcp arrives as text (the SDK's streamable HTTP client)`, async () => {
  const host = await connect(hostTransport("mcp", { url: serve.url }));
  try {
    const started = performance.now();
    const result = await raw(host.client, "resources/read", { uri: `fixture://big/${MIB}` }, { timeout: 170_000 });
    const ms = performance.now() - started;
    const [entry] = result.contents as Array<{ text?: string; blob?: string; mimeType?: string }>;
    expect(entry!.blob).toBeUndefined();
    expect(entry!.mimeType).toBe("text/plain");
    expect(entry!.text === expectedText).toBe(true);
    console.log(`${MIB} MiB through /mcp: ${ms.toFixed(0)} ms`);
  } finally {
    await host.close();
  }
}, 180_000);
