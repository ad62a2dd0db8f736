/**
 * A pooled upstream asking stateless hosts without end: like a session's, its questions waiting
 * at once for hosts are bounded by `limits.maxUpstreamRequests` (each is remembered, with a timer,
 * until a host answers or `requestTimeoutMs` passes); one more is answered at once, not forwarded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig } from "../reliability/helpers.js";

/** Asks the host five questions, then answers the call with the errors it got back for them. */
const UPSTREAM = `
const out = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
let call;
const refused = [];
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize")
    return out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "asks", version: "1" } } });
  if (m.method === "tools/call") {
    call = m.id;
    for (let id = 1; id <= 5; id++)
      out({ jsonrpc: "2.0", id: "q" + id, method: "elicitation/create", params: { message: "question " + id, requestedSchema: { type: "object", properties: {} } } });
    return;
  }
  if (m.method === undefined && m.error !== undefined) {
    refused.push(m.id + ": " + m.error.message);
    if (refused.length === 2) out({ jsonrpc: "2.0", id: call, result: { content: [{ type: "text", text: refused.join("; ") }] } });
    return;
  }
  if (m.id !== undefined && m.method !== undefined) out({ jsonrpc: "2.0", id: m.id, result: {} });
});
`;
const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2026-07-28",
};

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { asks: { command: process.execPath, args: ["-e", UPSTREAM] } },
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
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "asks", arguments: {} } }),
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
});
