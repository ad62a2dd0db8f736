/**
 * A session that waits for its upstream (a restart back-off after the last one died) does not
 * read its host meanwhile: what a WebSocket or SSE host sends waits in its socket, not in the
 * proxy's memory. Before, every frame and every POST was read and kept until the upstream came.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig } from "./helpers.js";

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const rssMiB = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
const FRAME = JSON.stringify({ jsonrpc: "2.0", method: "notifications/x", params: { pad: "x".repeat(1 << 20) } });

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: {
      dies: { command: process.execPath, args: ["-e", "process.exit(3)"] },
      // Refuses connections: the session fails once the upstream's connect does.
      refused: { url: "http://127.0.0.1:1/mcp" },
    },
    limits: { restartBackoffMs: 20_000, maxRestartBackoffMs: 20_000, shutdownGraceMs: 500 },
  });
});
afterAll(async () => {
  await serve?.stop();
});

describe("a host whose session waits for its upstream", () => {
  it("is not read meanwhile: 200 MiB of WebSocket frames wait in the host's socket, the proxy stays small", async () => {
    const url = `${serve.url.replace("http", "ws")}/ws/dies`;
    // The first session's upstream dies at once: the next one waits out the back-off.
    const first = new WebSocket(url, "mcp");
    await new Promise((resolve) => first.on("close", resolve));
    await sleep(300);
    const pid = serve.child.pid!;
    const before = rssMiB(pid);
    const host = new WebSocket(url, "mcp");
    await new Promise((resolve, reject) => host.on("open", resolve).on("error", reject));
    for (let i = 0; i < 200; i++) host.send(FRAME);
    await sleep(2000);
    const grown = rssMiB(pid) - before;
    // The frames the proxy did not take are still with the host.
    expect(host.bufferedAmount).toBeGreaterThan(100 * 2 ** 20);
    expect(grown).toBeLessThan(64);
    host.terminate();
  });

  it("whose session then fails to start is closed at once: its reply to the close frame is read", async () => {
    const host = new WebSocket(`${serve.url.replace("http", "ws")}/ws/refused`, "mcp");
    const opened = Date.now();
    host.on("open", () =>
      host.send(
        JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18" } }),
      ),
    );
    host.on("error", () => {});
    await new Promise<number>((resolve) => host.on("close", (c) => resolve(c)));
    // Not after limits.closeTimeoutMs (2 s) with the host's close reply unread.
    expect(Date.now() - opened).toBeLessThan(1500);
  });
});
