/**
 * A stateless host's answer over `limits.maxMessageBytes` to a pooled upstream's question: the
 * POST is refused 413, unread, and the upstream that asked is answered `-32003` at once (as a
 * session's would be), not left waiting `requestTimeoutMs`. The question goes out under the
 * pool's id; the answer's ends show it. Another client's oversized answer under that id (its own
 * bearer token: its own pool) tells the upstream nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig } from "../reliability/helpers.js";
import { STATELESS_HEADERS } from "../helpers/statelessHeaders.js";
import { gathered } from "../badInput/mcpHttp.js";

/** Tool `ask`: asks the host one question, then answers the call with what came back for it. */
const UPSTREAM = `
const out = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
let call;
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize")
    return out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "asks", version: "1" } } });
  if (m.method === "tools/call") {
    call = m.id;
    return out({ jsonrpc: "2.0", id: "q1", method: "elicitation/create", params: { message: "name?", requestedSchema: { type: "object", properties: {} } } });
  }
  if (m.method === undefined && m.id === "q1") {
    const got = m.error ? "error " + m.error.code + ": " + m.error.message : "result";
    out({ jsonrpc: "2.0", id: call, result: { content: [{ type: "text", text: got }] } });
  }
});
`;
const LIMIT = 100_000;
const TOKENS = ["token-of-the-asking-client", "token-of-another-client"];
const headers = (token: string) => ({ ...STATELESS_HEADERS, authorization: `Bearer ${token}` });

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { asks: { command: process.execPath, args: ["-e", UPSTREAM] } },
    auth: { bearerTokens: TOKENS },
    limits: { maxMessageBytes: LIMIT, requestTimeoutMs: 60_000 },
  });
});
afterAll(async () => {
  await serve?.stop();
});

/** A stateless POST, with `token`, of an answer to `id` over the limit: its status, its body read. */
async function postOversizedAnswer(token: string, id: unknown): Promise<number> {
  const response = await fetch(`${serve.url}/mcp/asks`, {
    method: "POST",
    headers: headers(token),
    body: JSON.stringify({ jsonrpc: "2.0", id, result: { action: "accept", content: { name: "x".repeat(LIMIT) } } }),
    signal: AbortSignal.timeout(10_000),
  });
  await response.text();
  return response.status;
}

describe("a stateless host's answer over maxMessageBytes", () => {
  it("is refused 413, and the upstream that asked gets -32003 at once; another client's tells it nothing", async () => {
    const call = await fetch(`${serve.url}/mcp/asks`, {
      method: "POST",
      headers: headers(TOKENS[0]!),
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ask", arguments: {} } }),
      signal: AbortSignal.timeout(20_000),
    });
    const { messages, ended } = gathered(call);
    await expect.poll(() => messages.length, { timeout: 10_000 }).toBe(1);
    const question = messages[0]!;
    expect(question).toMatchObject({ method: "elicitation/create" });
    expect(question.id).not.toBe("q1");

    expect(await postOversizedAnswer(TOKENS[1]!, question.id)).toBe(413);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(messages).toHaveLength(1);

    expect(await postOversizedAnswer(TOKENS[0]!, question.id)).toBe(413);
    await expect.poll(() => messages.length, { timeout: 5_000 }).toBe(2);
    await ended;
    const result = messages[1] as { id: number; result: { content: Array<{ text: string }> } };
    expect(result.id).toBe(1);
    expect(result.result.content[0]!.text).toMatch(
      /^error -32003: the host's answer of \d+ bytes is over limits\.maxMessageBytes$/,
    );
  }, 30_000);
});
