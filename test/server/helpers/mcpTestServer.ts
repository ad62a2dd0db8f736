/**
 * Test-only stand-in for the proxy: joins each host-side transport to a fresh SDK `McpServer`
 * through `InMemoryTransport.createLinkedPair()`, pumping messages both ways and forwarding
 * the server's `relatedRequestId` (so progress and mid-call requests take the request's
 * stream, as the real bridge does). Everything on the host side is the real thing: our
 * transports, real sockets, the SDK's real clients.
 */
import { EventEmitter } from "node:events";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CreateMessageResultSchema, ElicitResultSchema, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { HostSessionInfo } from "../../../src/transports/host/hostSession.js";
import type { JSONRPCMessage, MessageExtraInfo, ProxyTransport } from "../../../src/transports/types.js";

/**
 * Lets a test hold the `progress` tool until its client has seen each notification. The SDK's
 * Protocol dispatches notifications a microtask late but responses at once, so a client that
 * reads a progress notification and the result in one chunk (SSE and WebSocket clients do on
 * loopback) drops the progress. A real tool spreads its progress over time; the gate makes
 * the test do the same, deterministically.
 */
export const progressGate = new EventEmitter();

/** Waits for `progressGate.emit("seen", step)` when the call asked for it. */
function seen(step: number): Promise<void> {
  return new Promise((resolve) => {
    const check = (value: number): void => {
      if (value !== step) return;
      progressGate.off("seen", check);
      resolve();
    };
    progressGate.on("seen", check);
  });
}

/** A fresh MCP server with the tools the host-side tests need. */
export function createTestServer(): McpServer {
  const server = new McpServer({ name: "host-test-server", version: "1.0.0" });
  server.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: "text", text }],
  }));
  server.registerTool("big", { inputSchema: { bytes: z.number() } }, async ({ bytes }) => ({
    content: [{ type: "text", text: "x".repeat(bytes) }],
  }));
  server.registerTool(
    "progress",
    { inputSchema: { steps: z.number(), gated: z.boolean().optional() } },
    async ({ steps, gated }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        if (token === undefined) continue;
        const delivered = gated === true ? seen(i) : undefined;
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: i, total: steps },
        });
        await delivered;
      }
      return { content: [{ type: "text", text: `done after ${steps}` }] };
    },
  );
  server.registerTool("ask", { inputSchema: {} }, async (_args, extra) => {
    const sampled = await extra.sendRequest(
      {
        method: "sampling/createMessage",
        params: { messages: [{ role: "user", content: { type: "text", text: "2+2?" } }], maxTokens: 5 },
      },
      CreateMessageResultSchema,
    );
    const elicited = await extra.sendRequest(
      {
        method: "elicitation/create",
        params: { message: "name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } },
      },
      ElicitResultSchema,
    );
    const said = sampled.content.type === "text" ? sampled.content.text : "?";
    return { content: [{ type: "text", text: `sampled ${said}, elicited ${JSON.stringify(elicited.content)}` }] };
  });
  return server;
}

export interface RecordedSession {
  readonly info: HostSessionInfo;
  readonly transport: ProxyTransport;
  /** Every message the host sent, with the extra info the transport gave. */
  readonly received: Array<{ message: JSONRPCMessage; extra: MessageExtraInfo | undefined }>;
  /** Resolves when the host transport's `onclose` fires. */
  readonly closed: Promise<void>;
  isClosed(): boolean;
}

/** An `onSession` that bridges each host session to its own test McpServer, and records it. */
export function bridgeSessions(makeServer: () => McpServer = createTestServer): {
  sessions: RecordedSession[];
  onSession: (transport: ProxyTransport, info: HostSessionInfo) => Promise<void>;
} {
  const sessions: RecordedSession[] = [];
  const onSession = async (host: ProxyTransport, info: HostSessionInfo): Promise<void> => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    let related: RequestId | undefined;
    const serverSend = serverSide.send.bind(serverSide);
    // InMemoryTransport calls the peer's onmessage synchronously inside send(): the options of
    // the send being made are known while clientSide.onmessage runs.
    serverSide.send = (message, options) => {
      related = options?.relatedRequestId;
      const sent = serverSend(message, options);
      related = undefined;
      return sent;
    };
    clientSide.onmessage = (message) => {
      void host.send(message, related === undefined ? undefined : { relatedRequestId: related });
    };
    const received: RecordedSession["received"] = [];
    let closedFlag = false;
    const closed = new Promise<void>((resolve) => {
      host.onclose = () => {
        closedFlag = true;
        void clientSide.close();
        resolve();
      };
    });
    host.onmessage = (message, extra) => {
      received.push({ message, extra });
      void clientSide.send(message);
    };
    sessions.push({ info, transport: host, received, closed, isClosed: () => closedFlag });
    const server = makeServer();
    await server.connect(serverSide);
    await clientSide.start();
    await host.start();
  };
  return { sessions, onSession };
}
