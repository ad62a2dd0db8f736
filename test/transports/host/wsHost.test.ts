/**
 * `/ws/NAME` with the SDK's real WebSocketClientTransport (over `ws`, since Node 20 has no
 * global WebSocket) and a raw `ws` client.
 */
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { progressGate } from "../../server/helpers/mcpTestServer.js";
import { connectClient, startFrontend, type RunningFrontend } from "../../server/helpers/frontend.js";

let running: RunningFrontend;
const globals = globalThis as { WebSocket?: unknown };
const originalWebSocket = globals.WebSocket;

beforeAll(() => {
  globals.WebSocket = WebSocket;
});
afterAll(() => {
  globals.WebSocket = originalWebSocket;
});
beforeEach(async () => {
  running = await startFrontend({ maxMessageBytes: 64 * 1024 * 1024 });
});
afterEach(async () => {
  await running.close();
});

function wsUrl(path: string): string {
  return `${running.url.replace(/^http/, "ws")}${path}`;
}

function open(path: string, protocols: string[] = ["mcp"]): Promise<WebSocket> {
  const socket = new WebSocket(wsUrl(path), protocols, { maxPayload: 256 * 1024 * 1024 });
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Waits for the first session and collects what its transport reports through onproblem. */
async function watchProblems(): Promise<unknown[]> {
  const problems: unknown[] = [];
  await new Promise<void>((resolve) => {
    const check = (): void => {
      const session = running.sessions[0];
      if (session === undefined) return void setImmediate(check);
      session.transport.onproblem = (problem) => problems.push(problem);
      resolve();
    };
    check();
  });
  return problems;
}

function nextMessage(socket: WebSocket): Promise<unknown> {
  return new Promise((resolve) => socket.once("message", (data) => resolve(JSON.parse(String(data)))));
}

describe("WebSocket host", () => {
  it("initializes, lists and calls tools, with progress, sampling and elicitation", async () => {
    const client = await connectClient(new WebSocketClientTransport(new URL(wsUrl("/ws/demo"))));
    try {
      expect((await client.listTools()).tools).toHaveLength(4);
      const seen: number[] = [];
      await client.callTool({ name: "progress", arguments: { steps: 3, gated: true } }, undefined, {
        onprogress: (p) => {
          seen.push(p.progress);
          progressGate.emit("seen", p.progress);
        },
      });
      expect(seen).toEqual([1, 2, 3]);
      const asked = await client.callTool({ name: "ask", arguments: {} });
      expect(asked.content).toEqual([{ type: "text", text: 'sampled 4, elicited {"name":"Ada"}' }]);
      expect(running.sessions[0]!.info).toMatchObject({ server: "demo", kind: "websocket", stateless: false });
    } finally {
      await client.close();
    }
  });

  it("negotiates subprotocol mcp and fires onclose when the host disconnects", async () => {
    const socket = await open("/ws/demo");
    expect(socket.protocol).toBe("mcp");
    const reply = nextMessage(socket);
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: "p", method: "ping" }));
    expect(await reply).toEqual({ jsonrpc: "2.0", id: "p", result: {} });
    socket.terminate();
    await running.sessions[0]!.closed;
    expect(running.frontend.sessionsInUse).toBe(0);
  });

  it("reports a frame that is not JSON through onproblem and keeps the session", async () => {
    const socket = await open("/ws/demo");
    const problems = await watchProblems();
    const reply = nextMessage(socket);
    socket.send("this is not json");
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }));
    expect(await reply).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    expect(problems).toEqual([{ kind: "invalid-json", bytes: 16, excerpt: "this is not json" }]);
    socket.close();
  });

  it("text and binary frames: blank ones are skipped, invalid UTF-8 in a binary frame is a problem, in a text frame ws closes with 1007", async () => {
    const socket = await open("/ws/demo");
    const problems = await watchProblems();
    let reply = nextMessage(socket);
    socket.send(" \r\n\t ");
    socket.send(Buffer.from(" \n"), { binary: true });
    socket.send(Buffer.from([0x7b, 0xff, 0x7d]), { binary: true });
    socket.send(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: "b", method: "ping" })), { binary: true });
    expect(await reply).toEqual({ jsonrpc: "2.0", id: "b", result: {} });
    reply = nextMessage(socket);
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: "é", method: "ping" }));
    expect(await reply).toEqual({ jsonrpc: "2.0", id: "é", result: {} });
    expect(problems).toEqual([{ kind: "invalid-json", bytes: 3, excerpt: "{\ufffd}" }]);
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    // A text frame whose payload is not UTF-8 (sent raw: ws would not build one).
    const frame = Buffer.from([0x81, 0x83, 0, 0, 0, 0, 0x7b, 0xff, 0x7d]);
    (socket as unknown as { _socket: { write(b: Buffer): void } })._socket.write(frame);
    expect(await closed).toBe(1007);
  });

  it("a host that sends a close frame, or a bad frame, and holds its TCP open is cut off after closeTimeoutMs", async () => {
    await running.close();
    running = await startFrontend({ closeTimeoutMs: 300 });
    // Masked close frames: code 1000, then 999 (not allowed on the wire: ws fails the connection).
    for (const code of [1000, 999]) {
      const socket = await open("/ws/demo");
      await watchProblems();
      const session = running.sessions[running.sessions.length - 1]!;
      const tcp = (socket as unknown as { _socket: import("node:net").Socket })._socket;
      // The host reads no more: it never answers the proxy's close frame nor ends its side.
      tcp.removeAllListeners("data");
      tcp.removeAllListeners("end");
      tcp.allowHalfOpen = true;
      tcp.on("error", () => undefined);
      const payload = Buffer.alloc(2);
      payload.writeUInt16BE(code);
      tcp.write(Buffer.concat([Buffer.from([0x88, 0x82, 0, 0, 0, 0]), payload]));
      const started = Date.now();
      const ended = await Promise.race([
        session.closed.then(() => Date.now() - started),
        new Promise<number>((resolve) => setTimeout(() => resolve(-1), 5000)),
      ]);
      // ws's own wait for the host's end is 30 s: the session, its slot and its upstream held that long.
      expect(ended, `close code ${code}`).toBeGreaterThanOrEqual(0);
      expect(ended).toBeLessThan(2000);
      socket.terminate();
    }
    expect(running.frontend.sessionsInUse).toBe(0);
  });

  it("carries a 50 MiB tool result", async () => {
    const client = await connectClient(new WebSocketClientTransport(new URL(wsUrl("/ws/demo"))));
    try {
      const size = 50 * 1024 * 1024;
      const started = performance.now();
      const result = await client.callTool({ name: "big", arguments: { bytes: size } });
      const ms = performance.now() - started;
      expect((result.content as Array<{ text: string }>)[0]!.text.length).toBe(size);
      console.error(`50 MiB tool result over /ws: ${ms.toFixed(0)} ms`);
    } finally {
      await client.close();
    }
  });

  it("closes a connection whose frame is over maxMessageBytes (1009) and frees its slot", async () => {
    await running.close();
    running = await startFrontend({ maxMessageBytes: 1024 });
    const socket = await open("/ws/demo");
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "x", params: { pad: "p".repeat(4096) } }));
    expect(await closed).toBe(1009);
    await running.sessions[0]!.closed;
    expect(running.frontend.sessionsInUse).toBe(0);
  });
});
