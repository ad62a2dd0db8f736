/**
 * No client can hold the listener's connections for long with requests it answers without a
 * token: a refused WebSocket upgrade, a CORS preflight or a `/healthz` probe that sends a body
 * it never finishes, and `/metrics` requests pipelined faster than documents can be made. Each
 * connection goes within `limits.closeTimeoutMs` (or after one document), so `limits.maxConnections`
 * cannot be filled by a client that keeps its side open. A real `serve`, raw sockets.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, serveConfig } from "../reliability/helpers.js";

const TOKEN = "s3cret-token-for-tests";
const CLOSE_TIMEOUT_MS = 500;

let serve: ServeProcess;
let port: number;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
    auth: { bearerTokens: [TOKEN] },
    limits: { closeTimeoutMs: CLOSE_TIMEOUT_MS },
  });
  port = Number(new URL(serve.url).port);
});
afterAll(async () => {
  await serve?.stop();
});

/**
 * Sends `request` on a fresh connection and never ends its side (as an attacker keeping
 * connections open does); what came back, and whether the proxy let go of the connection in time.
 * Once the proxy has ended its side, a byte is sent now and then: a connection the proxy still
 * holds takes it; one it has let go answers with a reset.
 */
async function held(request: string, waitMs = 5000): Promise<{ received: string; closedByProxy: boolean }> {
  const socket: Socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
  let received = "";
  let poke: NodeJS.Timeout | undefined;
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("latin1");
  });
  socket.on("end", () => {
    poke = setInterval(() => socket.write("x"), 100);
  });
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.write(request);
  const closedByProxy = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), waitMs);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  clearInterval(poke);
  socket.destroy();
  return { received, closedByProxy };
}

const upgrade = (path: string, extra = "") =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${0}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
  `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mcp\r\n${extra}\r\n`;

describe("connections a client opens without a token", () => {
  it("a refused WebSocket upgrade (401, 404, 403) is answered, then closed", async () => {
    const host = `127.0.0.1:${port}`;
    for (const [request, status] of [
      [upgrade("/ws/fx").replace("127.0.0.1:0", host), 401],
      [upgrade("/nope", `Authorization: Bearer ${TOKEN}\r\n`).replace("127.0.0.1:0", host), 404],
      [upgrade("/ws/fx", `Authorization: Bearer ${TOKEN}\r\n`).replace("127.0.0.1:0", "evil.example"), 403],
    ] as const) {
      const { received, closedByProxy } = await held(request);
      expect(received, request).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(closedByProxy, request).toBe(true);
    }
  }, 30_000);

  it("a preflight or a /healthz probe with a body it never finishes is answered, then cut", async () => {
    const chunked = "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
    for (const [request, status] of [
      [
        `OPTIONS /mcp/fx HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://localhost:1\r\n` +
          `Access-Control-Request-Method: POST\r\n${chunked}`,
        204,
      ],
      [`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${chunked}`, 200],
    ] as const) {
      const { received, closedByProxy } = await held(request);
      expect(received, request).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(closedByProxy, request).toBe(true);
    }
  }, 30_000);

  it("/metrics pipelined many times over: one document is made, the rest refused, the connection closed", async () => {
    const one = `GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`;
    const { received, closedByProxy } = await held(one.repeat(2000), 10_000);
    expect(closedByProxy).toBe(true);
    const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    expect(statuses[0]).toBe("200");
    expect(statuses.filter((s) => s === "200").length).toBeLessThanOrEqual(2);
    expect(received).toMatch(/One \/metrics request at a time per connection/);
  }, 30_000);
});
