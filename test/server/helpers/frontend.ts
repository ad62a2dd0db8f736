/**
 * Starts the real HTTP listener on 127.0.0.1 port 0 with test MCP servers behind it.
 * Returns a cleanup, as every helper does.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { createHttpFrontend, type HttpFrontend } from "../../../src/server/httpFrontend.js";
import type { HttpFrontendOptions } from "../../../src/server/frontendOptions.js";
import { bridgeSessions, type RecordedSession } from "./mcpTestServer.js";

export interface RunningFrontend {
  readonly url: string;
  readonly port: number;
  readonly frontend: HttpFrontend;
  readonly sessions: RecordedSession[];
  close(): Promise<void>;
}

export async function startFrontend(overrides: Partial<HttpFrontendOptions> = {}): Promise<RunningFrontend> {
  const bridge = bridgeSessions();
  const frontend = createHttpFrontend({
    serverNames: ["demo"],
    onSession: bridge.onSession,
    health: () => ({ status: "ok" }),
    sseKeepAliveMs: 0,
    ...overrides,
  });
  const { url, port } = await frontend.listen(0, "127.0.0.1");
  return { url, port, frontend, sessions: bridge.sessions, close: () => frontend.close() };
}

/** A connected SDK client with sampling and elicitation answered; close() is its cleanup. */
export async function connectClient(transport: Transport): Promise<Client> {
  const client = new Client(
    { name: "host-test-client", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  const { CreateMessageRequestSchema, ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: "assistant",
    model: "test",
    content: { type: "text", text: "4" },
  }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }));
  await client.connect(transport);
  return client;
}

/** Resolves when `predicate` holds, checking after each event loop turn (bounded by the test timeout). */
export async function until(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((resolve) => setImmediate(resolve));
}
