/**
 * A host that sends without reading, and sends what the proxy answers itself (requests that are
 * not JSON-RPC 2.0, frames that are not JSON), must not make the proxy hold its answers without
 * bound: once more than `limits.hostBufferBytes` waits for the host, the proxy stops reading it
 * until it takes some. Checked from outside: `serve` in front of the fixture server, a WebSocket
 * host that stops reading its socket and floods, the proxy's RSS read from /proc.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startFixtureServe, type ServeProcess } from "../helpers/proxyProcess.js";

let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop();
  serve = undefined;
});

function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) / 1024;
}

describe("a host that floods requests the proxy refuses, reading nothing", () => {
  it("is no longer read once its answers pile up: the proxy's memory stays bounded, /healthz answers", async () => {
    serve = await startFixtureServe();
    const pid = serve.child.pid!;
    const host = new WebSocket(`${serve.url.replace(/^http/, "ws")}/ws/fx`, "mcp");
    await new Promise((resolve, reject) => host.once("open", resolve).once("error", reject));
    // The host reads nothing from here on.
    (host as unknown as { _socket: { pause(): void } })._socket.pause();
    const before = rssMiB(pid);
    let peak = before;
    const frame = JSON.stringify({ jsonrpc: "1.0", id: 1, method: "m".repeat(2000) });
    const until = Date.now() + 5000;
    while (Date.now() < until) {
      // Only while the proxy takes them: what it does not read waits in the host's own buffers.
      if (host.bufferedAmount < 1 << 20) for (let i = 0; i < 200; i++) host.send(frame);
      await new Promise((resolve) => setTimeout(resolve, 5));
      peak = Math.max(peak, rssMiB(pid));
    }
    const health = await fetch(`${serve.url}/healthz`, { signal: AbortSignal.timeout(2000) });
    expect(health.status).toBe(200);
    // Unbounded, each refusal (about 2 KB) piles up: about 20 MiB a second here.
    expect(peak - before).toBeLessThan(60);
    host.terminate();
  });
});
