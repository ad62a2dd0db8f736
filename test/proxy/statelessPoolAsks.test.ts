/**
 * A pooled upstream asking stateless hosts without end: like a session's, its questions waiting
 * at once for hosts are bounded by `limits.maxUpstreamRequests` (each is remembered, with a timer,
 * until a host answers or `requestTimeoutMs` passes); one more is answered at once, not forwarded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig } from "../reliability/helpers.js";
import { STATELESS_HEADERS } from "../helpers/statelessHeaders.js";

/**
 * Tool `five`: asks the host five questions, then answers the call with the errors it got back.
 * Tool `twice`: asks twice under one id (d), withdraws d twice, asks two more, then answers the
 * call with the errors it got back.
 */
const UPSTREAM = `
const out = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const ask = (id, message) => out({ jsonrpc: "2.0", id, method: "elicitation/create", params: { message, requestedSchema: { type: "object", properties: {} } } });
let call;
let refused = [];
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize")
    return out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "asks", version: "1" } } });
  if (m.method === "tools/call" && m.params.name === "five") {
    call = m.id;
    refused = [];
    for (let id = 1; id <= 5; id++) ask("q" + id, "question " + id);
    return;
  }
  if (m.method === "tools/call") {
    call = m.id;
    refused = [];
    ask("d", "first");
    ask("d", "second");
    out({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "d" } });
    out({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "d" } });
    ask("e", "third");
    ask("f", "fourth");
    setTimeout(() => out({ jsonrpc: "2.0", id: call, result: { content: [{ type: "text", text: "refused: " + refused.join("; ") }] } }), 500);
    return;
  }
  if (m.method === undefined && m.error !== undefined) {
    refused.push(m.id + ": " + m.error.message);
    if (refused.length === 2 && refused[0].startsWith("q")) out({ jsonrpc: "2.0", id: call, result: { content: [{ type: "text", text: refused.join("; ") }] } });
    return;
  }
  if (m.id !== undefined && m.method !== undefined) out({ jsonrpc: "2.0", id: m.id, result: {} });
});
`;

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: {
      asks: { command: process.execPath, args: ["-e", UPSTREAM] },
      twice: { command: process.execPath, args: ["-e", UPSTREAM] },
    },
    limits: { requestTimeoutMs: 20_000, maxUpstreamRequests: 3 },
  });
});
afterAll(async () => {
  await serve?.stop();
});

/** The JSON-RPC messages of a POST's SSE answer, until it ends. */
async function messagesOf(response: Response): Promise<Array<Record<string, unknown>>> {
  const messages: Array<Record<string, unknown>> = [];
  const text = await response.text();
  for (const event of text.split("\n\n")) {
    const data = event
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5))
      .join("\n");
    if (data.trim() !== "") messages.push(JSON.parse(data) as Record<string, unknown>);
  }
  return messages;
}

describe("a pooled upstream asking stateless hosts more than maxUpstreamRequests at once", () => {
  it("the first three reach the host; the other two are answered -32000 at once, naming the limit", async () => {
    const response = await fetch(`${serve.url}/mcp/asks`, {
      method: "POST",
      headers: STATELESS_HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "five", arguments: {} } }),
      signal: AbortSignal.timeout(15_000),
    });
    const messages = await messagesOf(response);
    const asked = messages.filter((m) => m.method === "elicitation/create");
    expect(asked.map((m) => (m.params as { message: string }).message)).toEqual([
      "question 1",
      "question 2",
      "question 3",
    ]);
    const result = messages.find((m) => m.id === 1) as { result: { content: Array<{ text: string }> } };
    const why = "too many requests waiting for the host: limits.maxUpstreamRequests (3)";
    expect(result.result.content[0]!.text).toBe(`q4: ${why}; q5: ${why}`);
  });

  it("two questions under one id, withdrawn twice: both cancels reach the host, and neither holds a slot", async () => {
    // Another server's pool: the questions of the test before still wait in the first one's.
    const response = await fetch(`${serve.url}/mcp/twice`, {
      method: "POST",
      headers: STATELESS_HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "twice", arguments: {} } }),
      signal: AbortSignal.timeout(15_000),
    });
    const messages = await messagesOf(response);
    const asked = new Map(
      messages
        .filter((m) => m.method === "elicitation/create")
        .map((m) => [(m.params as { message: string }).message, m.id]),
    );
    const cancelled = messages
      .filter((m) => m.method === "notifications/cancelled")
      .map((m) => (m.params as { requestId: unknown }).requestId);
    expect(cancelled).toEqual([asked.get("first"), asked.get("second")]);
    // The two withdrawn hold no slot: both asked after them reach the host.
    expect([...asked.keys()]).toEqual(["first", "second", "third", "fourth"]);
    const result = messages.find((m) => m.id === 2) as { result: { content: Array<{ text: string }> } };
    expect(result.result.content[0]!.text).toBe("refused: ");
  });
});
