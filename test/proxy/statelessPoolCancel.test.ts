/**
 * A pooled upstream that withdraws a question it asked a stateless host (its own
 * `notifications/cancelled`): the host is told under the id the question reached it with, not the
 * upstream's, which named nothing — or, as here, another question the host then dropped, leaving
 * the upstream's call waiting for an answer that never came.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig } from "../reliability/helpers.js";
import { STATELESS_HEADERS } from "../helpers/statelessHeaders.js";

/** Asks the host twice (its ids 7, then 2), withdraws the second, and answers the call with the first's answer. */
const UPSTREAM = `
const out = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
let call;
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize")
    return out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "asks", version: "1" } } });
  if (m.method === "tools/call") {
    call = m.id;
    const ask = (id, message) => out({ jsonrpc: "2.0", id, method: "elicitation/create", params: { message, requestedSchema: { type: "object", properties: {} } } });
    ask(7, "first");
    setTimeout(() => ask(2, "second"), 50);
    setTimeout(() => out({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "withdrawn" } }), 200);
    return;
  }
  if (m.method === undefined && m.id === 7)
    return out({ jsonrpc: "2.0", id: call, result: { content: [{ type: "text", text: "first answered" }] } });
  if (m.method === undefined) return out({ jsonrpc: "2.0", id: call, error: { code: -1, message: "answered " + m.id } });
  if (m.id !== undefined) out({ jsonrpc: "2.0", id: m.id, result: {} });
});
`;

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { asks: { command: process.execPath, args: ["-e", UPSTREAM] } },
    limits: { requestTimeoutMs: 10_000 },
  });
});
afterAll(async () => {
  await serve?.stop();
});

describe("a pooled upstream withdrawing a question it asked a stateless host", () => {
  it("the cancel names the question as the host got it; the other question is answered and the call completes", async () => {
    const url = `${serve.url}/mcp/asks`;
    const response = await fetch(url, {
      method: "POST",
      headers: STATELESS_HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "asks", arguments: {} } }),
      signal: AbortSignal.timeout(15_000),
    });
    const asked = new Map<unknown, string>();
    let cancelled: unknown;
    let result: Record<string, unknown> | undefined;
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const data = buffer
          .slice(0, end)
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5))
          .join("\n");
        buffer = buffer.slice(end + 2);
        if (data === "") continue;
        const message = JSON.parse(data) as { id?: unknown; method?: string; params?: Record<string, unknown> };
        if (message.method === "elicitation/create") asked.set(message.id, String(message.params?.message));
        if (message.method === "notifications/cancelled") {
          cancelled = message.params?.requestId;
          // The host drops what was withdrawn and answers the rest.
          for (const [id, question] of asked)
            if (id !== cancelled)
              await fetch(url, {
                method: "POST",
                headers: STATELESS_HEADERS,
                body: JSON.stringify({ jsonrpc: "2.0", id, result: { action: "accept", content: { question } } }),
              });
        }
        if (message.id === 1) result = message as Record<string, unknown>;
      }
    }
    expect(asked.size).toBe(2);
    expect(asked.get(cancelled)).toBe("second");
    expect(result).toMatchObject({ id: 1, result: { content: [{ text: "first answered" }] } });
  });
});
