/**
 * `limits.maxSkippedMessageBytes` and `limits.maxPendingPongs` reach a real proxy's upstreams,
 * `serve`'s and `stdio`'s: a stdio upstream's line without end is cut once it has run the
 * configured bytes past `maxMessageBytes` (its request answered `-32003`, the upstream ended
 * naming both limits), and a WebSocket upstream flooding pings faster than it takes the pongs is
 * ended once the configured number wait. Each set well below its default, so a proxy that kept
 * the default would say another number (or read on far longer).
 */
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { connectStdioWithConfig, raw } from "../helpers/proxyProcess.js";
import { initializedWs, RAW_UPSTREAM, serveConfig, waitForStderr } from "../reliability/helpers.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const LIMITS = { maxMessageBytes: 1024 * 1024, maxSkippedMessageBytes: 3 * 1024 * 1024, maxPendingPongs: 7 };
const CUT =
  /wrote a line that ran on for (\d+) bytes without end \(limits\.maxMessageBytes is 1048576, limits\.maxSkippedMessageBytes 3145728; the proxy ended it\)/;

/** A WebSocket MCP server that answers `initialize` and floods pings once a tool is called. */
async function pingFlooder(): Promise<string> {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1", handleProtocols: () => "mcp" });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  wss.on("connection", (ws) => {
    let timer: NodeJS.Timeout | undefined;
    ws.on("close", () => clearInterval(timer));
    ws.on("message", (data) => {
      const msg = JSON.parse(data.toString()) as {
        id?: number;
        method?: string;
        params?: { protocolVersion?: string };
      };
      if (msg.method === "initialize") {
        const result = {
          protocolVersion: msg.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "pings", version: "1" },
        };
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }));
      } else if (msg.method === "tools/call") {
        timer = setInterval(() => {
          if (ws.readyState === ws.OPEN) for (let i = 0; i < 200; i++) ws.ping("p");
        }, 5);
      }
    });
  });
  cleanups.push(() => new Promise<void>((resolve) => wss.close(() => resolve())));
  return `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`;
}

describe("limits.maxSkippedMessageBytes and limits.maxPendingPongs on serve", () => {
  it("a stdio upstream's line without end: its request gets -32003, the upstream is ended past the configured bytes", async () => {
    const serve = await serveConfig({
      mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } },
      limits: LIMITS,
    });
    cleanups.push(() => serve.stop());
    const host = await initializedWs(serve.url, "raw");
    cleanups.push(() => host.close());
    const answer = await host.request(2, "tools/call", { name: "x", _endless: true }, 15_000);
    expect(answer).toMatchObject({ id: 2, error: { code: -32003 } });
    const line = await waitForStderr(serve, CUT, 10_000);
    const bytes = Number(CUT.exec(line)![1]);
    // The host is told what the log tells: cut, where, and that the upstream is ended.
    expect((answer as { error: { message: string } }).error.message).toBe(
      `the upstream's answer ran on for ${bytes} bytes without end, over limits.maxMessageBytes and ` +
        "limits.maxSkippedMessageBytes: it was cut, and the upstream connection ended",
    );
    expect(bytes).toBeGreaterThan(4 * 1024 * 1024);
    expect(bytes).toBeLessThan(6 * 1024 * 1024);
  }, 30_000);

  it("a WebSocket upstream flooding pings is ended once the configured number of pongs wait", async () => {
    const url = await pingFlooder();
    const serve = await serveConfig({ mcpServers: { pings: { url } }, limits: LIMITS });
    cleanups.push(() => serve.stop());
    const host = await initializedWs(serve.url, "pings");
    cleanups.push(() => host.close());
    const answer = await host.request(2, "tools/call", { name: "x" }, 15_000);
    expect(answer).toMatchObject({ id: 2, error: {} });
    await waitForStderr(serve, /sent pings faster than it took their answers \(7 waiting, limits\.maxPendingPongs\)/);
  }, 30_000);
});

describe("limits.maxSkippedMessageBytes on stdio", () => {
  it("a stdio upstream's line without end: its request gets -32003, and the proxy says why it ended it", async () => {
    const host = await connectStdioWithConfig(
      { mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } }, limits: LIMITS },
      "raw",
    );
    cleanups.push(() => host.close());
    await expect(
      raw(host.client, "tools/call", { name: "x", _endless: true }, { timeout: 15_000 }),
    ).rejects.toMatchObject({
      code: -32003,
    });
    await expect.poll(() => CUT.test(host.stderr()), { timeout: 10_000 }).toBe(true);
  }, 30_000);
});
