/**
 * `limits.maxBatch`: a host batch of more messages is refused whole — 413 with JSON-RPC -32600
 * naming the limit over HTTP, -32600 for each of its requests over stdio and WebSocket — and
 * nothing of it reaches the upstream (the batch carries a `crash` call: the upstream must live
 * on). A batch at the limit passes.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post } from "../badInput/mcpHttp.js";
import { CLI } from "../helpers/paths.js";
import { startRawStdio } from "../helpers/rawStdio.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, initializedWs, rawWs, serveConfig, tempDir, toolText } from "../reliability/helpers.js";

const MAX = 5;
const config = { mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } }, limits: { maxBatch: MAX } };
/** A protocol version that still has batches. */
const INIT = { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "batch-host", version: "1" } };

/** `MAX` pings and a crash call: one over the limit. */
const overBatch = (base: number) => [
  ...Array.from({ length: MAX }, (_, i) => ({ jsonrpc: "2.0", id: base + i, method: "ping" })),
  { jsonrpc: "2.0", id: base + MAX, method: "tools/call", params: { name: "crash", arguments: {} } },
];
const atLimit = (base: number) =>
  Array.from({ length: MAX }, (_, i) => ({ jsonrpc: "2.0", id: base + i, method: "ping" }));

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig(config);
});
afterAll(async () => {
  await serve?.stop();
});

describe("over streamable HTTP", () => {
  it("413, -32600 naming limits.maxBatch, nothing forwarded; a batch at the limit is answered", async () => {
    const url = `${serve.url}/mcp/fx`;
    const init = await post(
      url,
      JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: INIT }),
      undefined,
      { "mcp-protocol-version": "2025-03-26" },
    );
    const session = init.headers.get("mcp-session-id")!;
    await post(url, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), session);
    const pid = toolText(
      (
        await post(
          url,
          JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "pid" } }),
          session,
        )
      ).messages[0]!,
    );

    const refused = await post(url, JSON.stringify(overBatch(10)), session);
    expect(refused.status).toBe(413);
    expect(refused.messages).toHaveLength(1);
    expect(refused.messages[0]!.error).toMatchObject({
      code: -32600,
      message: expect.stringContaining(`exceeds limits.maxBatch (${MAX})`),
    });

    const answered = await post(url, JSON.stringify(atLimit(20)), session);
    expect(answered.status).toBe(200);
    expect(answered.messages.map((m) => m.id)).toEqual([20, 21, 22, 23, 24]);
    expect(
      toolText(
        (
          await post(
            url,
            JSON.stringify({ jsonrpc: "2.0", id: 30, method: "tools/call", params: { name: "pid" } }),
            session,
          )
        ).messages[0]!,
      ),
    ).toBe(pid);
  });
});

describe("over WebSocket", () => {
  it("each request of the batch gets -32600 naming the limit; nothing forwarded", async () => {
    const host = await rawWs(serve.url, "fx");
    await host.request(0, "initialize", INIT);
    host.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    const pid = toolText(await host.request(1, "tools/call", { name: "pid" }));
    const answers = Array.from({ length: MAX + 1 }, (_, i) => host.answerTo(10 + i));
    host.send(JSON.stringify(overBatch(10)));
    for (const answer of await Promise.all(answers))
      expect(answer.error).toMatchObject({ code: -32600, message: expect.stringContaining("limits.maxBatch") });
    expect(toolText(await host.request(30, "tools/call", { name: "pid" }))).toBe(pid);
    await host.close();
  });

  it("an initialized WebSocket session with the usual protocol refuses batches as before", async () => {
    const host = await initializedWs(serve.url, "fx");
    const answer = host.answerTo(40);
    host.send(JSON.stringify([{ jsonrpc: "2.0", id: 40, method: "ping" }]));
    expect((await answer).error).toMatchObject({
      code: -32600,
      message: expect.stringContaining("no JSON-RPC batches"),
    });
    await host.close();
  });
});

describe("over stdio", () => {
  it("each request of the batch gets -32600 naming the limit, in one array; nothing forwarded", async () => {
    const dir = tempDir();
    const file = join(dir, "proxy.config.json");
    writeFileSync(file, JSON.stringify(config));
    const host = startRawStdio(process.execPath, [CLI, "stdio", "--config", file, "--server", "fx"]);
    try {
      await host.request(0, "initialize", INIT);
      host.notify("notifications/initialized");
      const pid = toolText(await host.request(1, "tools/call", { name: "pid" }));
      host.child.stdin.write(`${JSON.stringify(overBatch(10))}\n`);
      const answered = await host.request(30, "tools/call", { name: "pid" });
      expect(toolText(answered)).toBe(pid);
      // A batch is answered with one array (JSON-RPC 2.0 §6), the refusals too.
      const arrays = host.messages.filter((m) => Array.isArray(m)) as unknown as Array<Array<Record<string, unknown>>>;
      expect(arrays).toHaveLength(1);
      const refused = arrays[0]!;
      expect(refused.map((m) => m.id)).toEqual(overBatch(10).map((m) => m.id));
      for (const m of refused)
        expect(m.error).toMatchObject({ code: -32600, message: expect.stringContaining(`limits.maxBatch (${MAX})`) });
    } finally {
      await host.close();
    }
  });
});
