/**
 * Legacy HTTP+SSE (`/sse/NAME` + `/messages/NAME`) with the SDK's real SSEClientTransport.
 */
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JSONRPC } from "../../../src/errors/jsonRpcCodes.js";
import { progressGate } from "../../server/helpers/mcpTestServer.js";
import { connectClient, startFrontend, until, type RunningFrontend } from "../../server/helpers/frontend.js";

let running: RunningFrontend;

beforeEach(async () => {
  running = await startFrontend({ maxMessageBytes: 1024 * 1024 });
});
afterEach(async () => {
  await running.close();
});

describe("legacy SSE host", () => {
  it("initializes, lists and calls tools, with progress and mid-call sampling/elicitation", async () => {
    const client = await connectClient(new SSEClientTransport(new URL(`${running.url}/sse/demo`)));
    try {
      expect((await client.listTools()).tools).toHaveLength(4);
      const seen: number[] = [];
      const result = await client.callTool({ name: "progress", arguments: { steps: 2, gated: true } }, undefined, {
        onprogress: (p) => {
          seen.push(p.progress);
          progressGate.emit("seen", p.progress);
        },
      });
      expect(result.content).toEqual([{ type: "text", text: "done after 2" }]);
      expect(seen).toEqual([1, 2]);
      const asked = await client.callTool({ name: "ask", arguments: {} });
      expect(asked.content).toEqual([{ type: "text", text: 'sampled 4, elicited {"name":"Ada"}' }]);
      expect(running.sessions[0]!.info).toMatchObject({ server: "demo", kind: "sse", stateless: false });
    } finally {
      await client.close();
    }
  });

  it("announces the endpoint first, answers POSTs 202, and ends the session when the stream closes", async () => {
    const controller = new AbortController();
    const stream = await fetch(`${running.url}/sse/demo`, {
      headers: { accept: "text/event-stream" },
      signal: controller.signal,
    });
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("\n\n")) text += (await reader.read()).value ?? "";
    const match = /^event: endpoint\ndata: (\/messages\/demo\?sessionId=[0-9a-f-]{36})\n\n/.exec(text);
    expect(match).not.toBeNull();
    const endpoint = `${running.url}${match![1]}`;

    const accepted = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(accepted.status).toBe(202);
    while (!text.includes('"id":1')) text += (await reader.read()).value ?? "";
    expect(text).toContain('event: message\ndata: {"result":{},"jsonrpc":"2.0","id":1}\n\n');

    const tooBig = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "x", params: { pad: "p".repeat(1536 * 1024) } }),
    });
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as { error: { code: number } }).error.code).toBe(JSONRPC.MESSAGE_TOO_LARGE);

    controller.abort();
    await running.sessions[0]!.closed;
    await until(() => running.frontend.sessionsInUse === 0);
    const gone = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping" }),
    });
    expect(gone.status).toBe(404);
  });

  it("refuses GET on /messages and POST on /sse with 405", async () => {
    expect((await fetch(`${running.url}/messages/demo?sessionId=x`)).status).toBe(405);
    expect((await fetch(`${running.url}/sse/demo`, { method: "POST", body: "{}" })).status).toBe(405);
  });
});
