/**
 * Numbers `JSON.parse` rounds, through the stateless pool, which renumbers what it shares between
 * hosts: a host's progress token past 2^53 comes back on its progress notifications as the host
 * wrote it (the upstream sees the pool's token), and an upstream's own request id past 2^53 comes
 * back on the host's answer as the upstream wrote it (the host sees the pool's id). The fixture
 * reads and writes ids as text, never through `JSON.parse`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig } from "../reliability/helpers.js";
import { STATELESS_HEADERS } from "../helpers/statelessHeaders.js";

const BIG = "123456789012345678901234567890";
const BIG_ID = "9007199254740993";

/**
 * Tool `progress`: a progress notification with the token as it came, then an answer. Tool
 * `ask`: asks roots/list under id BIG (written as text), then answers the call with the raw line
 * of the host's answer.
 */
const UPSTREAM = `
const out = (line) => process.stdout.write(line + "\\n");
const raw = (line, name) => line.match(new RegExp('"' + name + '":(-?[0-9][0-9.eE+-]*|"[^"]*")'))[1];
let call;
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize")
    return out(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "exact", version: "1" } } }));
  if (m.method === "tools/call" && m.params.name === "progress") {
    out('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":' + raw(line, "progressToken") + ',"progress":1}}');
    return out('{"jsonrpc":"2.0","id":' + raw(line, "id") + ',"result":{"content":[]}}');
  }
  if (m.method === "tools/call") {
    call = raw(line, "id");
    return out('{"jsonrpc":"2.0","id":${BIG},"method":"roots/list","params":{}}');
  }
  if (m.method === undefined && call !== undefined)
    out('{"jsonrpc":"2.0","id":' + call + ',"result":{"content":[{"type":"text","text":' + JSON.stringify(line) + '}]}}');
});
`;

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({ mcpServers: { exact: { command: process.execPath, args: ["-e", UPSTREAM] } } });
});
afterAll(async () => {
  await serve?.stop();
});

/** The data lines of an SSE (or the one JSON) answer, as text. */
async function dataOf(response: Response): Promise<string[]> {
  const text = await response.text();
  if (!(response.headers.get("content-type") ?? "").includes("event-stream")) return [text];
  return text
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim());
}

describe("the stateless pool and numbers past 2^53", () => {
  it("a host's progress token comes back on its progress notification as written", async () => {
    const body = `{"jsonrpc":"2.0","id":${BIG_ID},"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":${BIG}}}}`;
    const response = await fetch(`${serve.url}/mcp/exact`, {
      method: "POST",
      headers: STATELESS_HEADERS,
      body,
      signal: AbortSignal.timeout(10_000),
    });
    const data = await dataOf(response);
    const progress = data.find((line) => line.includes("notifications/progress"));
    expect(progress).toContain(`"progressToken":${BIG},`);
    expect(data.find((line) => line.includes('"result"'))).toContain(`"id":${BIG_ID},`);
  });

  it("an upstream's request id comes back on the host's answer as the upstream wrote it", async () => {
    const call = await fetch(`${serve.url}/mcp/exact`, {
      method: "POST",
      headers: STATELESS_HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ask", arguments: {} } }),
      signal: AbortSignal.timeout(10_000),
    });
    const reader = call.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes("roots/list")) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the stream ended before the question: ${text}`);
      text += decoder.decode(value, { stream: true });
    }
    const question = JSON.parse(/data: (\{.*roots\/list.*\})/.exec(text)![1]!) as { id: string };
    expect(question.id).not.toBe(BIG);
    const answered = await fetch(`${serve.url}/mcp/exact`, {
      method: "POST",
      headers: STATELESS_HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: question.id, result: { roots: [] } }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(answered.status).toBe(202);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const result = JSON.parse(/data: (\{.*"result".*\})/.exec(text)![1]!) as {
      result: { content: Array<{ text: string }> };
    };
    expect(result.result.content[0]!.text).toBe(`{"jsonrpc":"2.0","id":${BIG},"result":{"roots":[]}}`);
  });
});
