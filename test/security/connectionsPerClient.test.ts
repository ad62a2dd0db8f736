/**
 * `limits.maxConnectionsPerClient`: connections a client holds open — half-sent headers need no
 * token — count against its address, and one more from it is closed as it arrives, logged; the
 * listener's other connections stay for other clients (probes, hosts). A real `serve`, raw sockets.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { resolveFrontendOptions } from "../../src/server/frontendOptions.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, serveConfig, waitForStderr } from "../reliability/helpers.js";

const PER_CLIENT = 5;
let serve: ServeProcess;
let port: number;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
    auth: { bearerTokens: ["s3cret-token-for-tests"] },
    limits: { maxConnectionsPerClient: PER_CLIENT },
  });
  port = Number(new URL(serve.url).port);
});
afterAll(async () => {
  await serve?.stop();
});

/** A connection that sends the start of a request and never finishes its headers. */
async function halfSent(): Promise<{ socket: Socket; closed: Promise<string> }> {
  const socket = connect({ port, host: "127.0.0.1" });
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("latin1");
  });
  socket.on("error", () => {});
  const closed = new Promise<string>((resolve) => socket.once("close", () => resolve(received)));
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  return { socket, closed };
}

describe("limits.maxConnectionsPerClient", () => {
  it("is half of maxConnections unless set, at least 16 (all of a smaller listener)", () => {
    const base = { serverNames: ["a"], onSession: async () => {}, health: () => ({ status: "ok" as const }) };
    expect(resolveFrontendOptions(base).maxConnectionsPerClient).toBe(DEFAULT_LIMITS.maxConnections / 2);
    expect(resolveFrontendOptions({ ...base, maxConnections: 9001 }).maxConnectionsPerClient).toBe(4501);
    expect(resolveFrontendOptions({ ...base, maxConnections: 20 }).maxConnectionsPerClient).toBe(16);
    expect(resolveFrontendOptions({ ...base, maxConnections: 2 }).maxConnectionsPerClient).toBe(2);
    expect(
      resolveFrontendOptions({ ...base, maxConnections: 9000, maxConnectionsPerClient: 7 }).maxConnectionsPerClient,
    ).toBe(7);
  });

  it("one more connection from a client holding its share is closed on arrival; one let go makes room", async () => {
    const held = await Promise.all(Array.from({ length: PER_CLIENT }, () => halfSent()));
    try {
      const extra = await halfSent();
      const outcome = await Promise.race([
        extra.closed.then((received) => `closed, got ${JSON.stringify(received)}`),
        new Promise<string>((resolve) => setTimeout(() => resolve("still open after 3 s"), 3_000)),
      ]);
      extra.socket.destroy();
      expect(outcome).toBe('closed, got ""');
      await waitForStderr(serve, /limits\.maxConnectionsPerClient are open from its address/);
      held.pop()!.socket.destroy();
      // Its close is counted as the proxy sees it: retried briefly.
      let status = 0;
      for (let tries = 0; tries < 20 && status !== 200; tries++) {
        status = await fetch(`${serve.url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
          (response) => response.status,
          () => 0,
        );
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status).toBe(200);
    } finally {
      for (const { socket } of held) socket.destroy();
    }
  });
});
