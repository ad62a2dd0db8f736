/**
 * A host that POSTs its body a byte a chunk (`Transfer-Encoding: chunked`): what the proxy holds
 * stays near the body's size (a Buffer kept per chunk held hundreds of bytes for each byte), and
 * the message is read whole.
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig } from "../reliability/helpers.js";

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { echo: { command: process.execPath, args: ["-e", "process.stdin.resume()"] } },
    // Its initialize is never answered: the stop does not wait for it.
    limits: { shutdownGraceMs: 200 },
  });
});
afterAll(async () => {
  await serve?.stop();
});

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** POSTs `body` to `path`, one byte a chunk, all written at once; the status line of the answer. */
function postByteChunks(path: string, body: string): Promise<string> {
  const { hostname, port } = new URL(serve.url);
  const framed = Array.from(Buffer.from(body), (byte) => `1\r\n${String.fromCharCode(byte)}\r\n`).join("");
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n${framed}0\r\n\r\n`,
      );
    });
    let answer = "";
    socket.setTimeout(60_000, () => socket.destroy(new Error("no answer in 60 s")));
    socket.on("data", (data) => {
      answer += data.toString("latin1");
      if (answer.includes("\r\n")) {
        resolve(answer.slice(0, answer.indexOf("\r\n")));
        socket.destroy();
      }
    });
    socket.on("error", reject);
  });
}

describe("a POST body sent a byte a chunk", () => {
  it("holds little more than its size while it is read, and is read whole", async () => {
    const pid = serve.child.pid!;
    // An initialize whose clientInfo carries 768 KiB: read whole, it opens a session (200).
    const padding = "x".repeat(768 * 1024);
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: padding, version: "1" } },
    });
    const before = rssMiB(pid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMiB(pid));
    }, 20);
    const status = postByteChunks("/mcp/echo", body);
    // The upstream never answers: the session opens, and the initialize waits; the status line is
    // not what this measures. Sampled until the body has been read (the log says the session opened).
    const deadline = Date.now() + 45_000;
    while (!serve.stderr().includes("session opened") && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    clearInterval(sampler);
    void status.catch(() => undefined);
    expect(serve.stderr()).toContain("session opened");
    // Before: ~300 MiB for this body; now the body (0.75 MiB), its parse, and slabs.
    expect(peak - before, `RSS grew ${Math.round(peak - before)} MiB`).toBeLessThan(120);
  }, 60_000);
});
