/**
 * `/mcp/NAME` with the SDK's real StreamableHTTPClientTransport and raw fetch, on port 0.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JSONRPC } from "../../../src/errors/jsonRpcCodes.js";
import { connectClient, startFrontend, until, type RunningFrontend } from "../../server/helpers/frontend.js";

let running: RunningFrontend;
const cleanups: Array<() => Promise<unknown>> = [];

beforeEach(async () => {
  running = await startFrontend();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await running.close();
});

async function client(): Promise<{
  client: Awaited<ReturnType<typeof connectClient>>;
  transport: StreamableHTTPClientTransport;
}> {
  const transport = new StreamableHTTPClientTransport(new URL(`${running.url}/mcp/demo`));
  const c = await connectClient(transport);
  cleanups.push(() => c.close());
  return { client: c, transport };
}

const ACCEPT_BOTH = "application/json, text/event-stream";

function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${running.url}/mcp/demo`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: ACCEPT_BOTH, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** The JSON-RPC messages of an SSE response body, in order. */
async function sseMessages(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .map((event) => event.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice("data: ".length)));
}

/** The JSON-RPC messages of an answer in either form (a JSON body, or an SSE stream). */
async function answerMessages(response: Response): Promise<unknown[]> {
  if (response.headers.get("content-type") === "text/event-stream") return sseMessages(response);
  const body = (await response.json()) as unknown;
  return Array.isArray(body) ? body : [body];
}

/** Reads an SSE response event by event, so a test can answer a request mid-stream. */
function sseReader(response: Response): { next(): Promise<Record<string, unknown>> } {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return {
    async next() {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end !== -1) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event.split("\n").find((line) => line.startsWith("data: "));
          if (data !== undefined) return JSON.parse(data.slice(6)) as Record<string, unknown>;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("SSE stream ended");
        buffer += value;
      }
    },
  };
}

async function rawInitialize(): Promise<string> {
  const init = await post({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: { sampling: {}, elicitation: {} },
      clientInfo: { name: "raw", version: "1" },
    },
  });
  const sessionId = init.headers.get("mcp-session-id")!;
  expect(sessionId).toBeTruthy();
  await init.text();
  expect(
    (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": sessionId })).status,
  ).toBe(202);
  return sessionId;
}

describe("streamable HTTP host", () => {
  it("initializes, lists and calls tools, and assigns an Mcp-Session-Id", async () => {
    const { client: c, transport } = await client();
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const tools = await c.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(["ask", "big", "echo", "progress"]);
    const result = await c.callTool({ name: "echo", arguments: { text: "héllo" } });
    expect(result.content).toEqual([{ type: "text", text: "héllo" }]);
    expect(running.sessions).toHaveLength(1);
    expect(running.sessions[0]!.info).toMatchObject({
      server: "demo",
      kind: "streamable-http",
      stateless: false,
      sessionId: transport.sessionId,
    });
  });

  it("delivers progress notifications to the SDK caller during a tool call", async () => {
    const { client: c } = await client();
    const seen: number[] = [];
    const result = await c.callTool({ name: "progress", arguments: { steps: 3 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect(seen).toEqual([1, 2, 3]);
    expect(result.content).toEqual([{ type: "text", text: "done after 3" }]);
  });

  it("puts progress on the POST's own SSE stream, before the result (raw wire)", async () => {
    const response = await post({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "progress", arguments: { steps: 2 }, _meta: { progressToken: "tok" } },
    });
    expect(await sseMessages(response)).toEqual([
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "tok", progress: 1, total: 2 } },
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "tok", progress: 2, total: 2 } },
      { jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "done after 2" }] } },
    ]);
  });

  it("sends a mid-call server→client request on the call's stream and takes its answer by POST (raw wire)", async () => {
    const sessionId = await rawInitialize();
    const call = await post(
      { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "ask", arguments: {} } },
      { "mcp-session-id": sessionId },
    );
    const events = sseReader(call);
    const sampling = await events.next();
    expect(sampling).toMatchObject({ method: "sampling/createMessage" });
    const answer1 = await post(
      {
        jsonrpc: "2.0",
        id: sampling.id,
        result: { role: "assistant", model: "m", content: { type: "text", text: "4" } },
      },
      { "mcp-session-id": sessionId },
    );
    expect(answer1.status).toBe(202);
    const elicitation = await events.next();
    expect(elicitation).toMatchObject({ method: "elicitation/create" });
    await post(
      { jsonrpc: "2.0", id: elicitation.id, result: { action: "accept", content: { name: "Bo" } } },
      { "mcp-session-id": sessionId },
    );
    expect(await events.next()).toEqual({
      jsonrpc: "2.0",
      id: 10,
      result: { content: [{ type: "text", text: 'sampled 4, elicited {"name":"Bo"}' }] },
    });
  }, 10_000);

  it("carries server→client requests (sampling, elicitation) mid-call and their answers back", async () => {
    const { client: c } = await client();
    const result = await c.callTool({ name: "ask", arguments: {} });
    expect(result.content).toEqual([{ type: "text", text: 'sampled 4, elicited {"name":"Ada"}' }]);
  });

  it("answers a stateless 2026-07-28 POST (no initialize, no session) and passes its mcp-* headers", async () => {
    const headers = { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo" };
    const response = await post(
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { text: "stateless" } } },
      headers,
    );
    expect(response.status).toBe(200);
    // Answered before anything else was sent for it: one JSON body (lazy SSE).
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("mcp-session-id")).toBeNull();
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: { content: [{ type: "text", text: "stateless" }] },
    });
    const session = running.sessions[0]!;
    expect(session.info).toMatchObject({ stateless: true, kind: "streamable-http" });
    expect(session.received[0]!.extra?.requestInfo?.headers).toEqual(headers);
    // The one-POST session ends with its POST: the proxy can end the upstream.
    await session.closed;
    await until(() => running.frontend.sessionsInUse === 0);
  });

  it("answers with one JSON body when the host accepts only JSON, and a batch with an array", async () => {
    const single = await post(
      { jsonrpc: "2.0", id: "a", method: "tools/list" },
      { accept: "application/json", "mcp-protocol-version": "2026-07-28" },
    );
    expect(single.headers.get("content-type")).toBe("application/json");
    const body = (await single.json()) as { id: string; result: { tools: unknown[] } };
    expect(body.id).toBe("a");
    expect(body.result.tools).toHaveLength(4);

    const batch = await post(
      [
        { jsonrpc: "2.0", id: 2, method: "ping" },
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } },
        { jsonrpc: "2.0", id: 1, method: "ping" },
      ],
      { accept: "application/json" },
    );
    expect(await batch.json()).toEqual([
      { jsonrpc: "2.0", id: 2, result: {} },
      { jsonrpc: "2.0", id: 1, result: {} },
    ]);
  });

  it("never rejects a protocol version it does not know", async () => {
    const { transport } = await client();
    const response = await post(
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { "mcp-session-id": transport.sessionId!, "mcp-protocol-version": "2099-01-01" },
    );
    expect(response.status).toBe(200);
    expect(await answerMessages(response)).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
  });

  it("sends unrelated server messages on the GET stream, queueing them until it opens", async () => {
    const sessionId = await rawInitialize();
    const session = running.sessions[0]!;
    await session.transport.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    const get = await fetch(`${running.url}/mcp/demo`, {
      headers: { accept: "text/event-stream", "mcp-session-id": sessionId },
    });
    expect(get.status).toBe(200);
    expect(get.headers.get("mcp-session-id")).toBe(sessionId);
    const events = sseReader(get);
    expect(await events.next()).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    await session.transport.send({ jsonrpc: "2.0", method: "notifications/resources/list_changed" });
    expect(await events.next()).toEqual({ jsonrpc: "2.0", method: "notifications/resources/list_changed" });
    // A response to nobody is dropped (reported through onerror), never sent on the GET stream.
    const errors: Error[] = [];
    session.transport.onerror = (error) => errors.push(error);
    await session.transport.send({ jsonrpc: "2.0", id: 12345, result: {} });
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/Response to request 12345 dropped/)]);
  });

  it("answers 405 to a GET without a session (stateless hosts only POST)", async () => {
    const get = await fetch(`${running.url}/mcp/demo`, { headers: { accept: "text/event-stream" } });
    expect(get.status).toBe(405);
  });

  it("answers 202 to notifications and responses", async () => {
    const { transport } = await client();
    const response = await post(
      { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
      { "mcp-session-id": transport.sessionId! },
    );
    expect(response.status).toBe(202);
  });

  it("answers 404 to an unknown session, 405 to PUT, and 400 to a body that is not JSON-RPC", async () => {
    const unknown = await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": "no-such-session" });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(/Session not found/);

    const put = await fetch(`${running.url}/mcp/demo`, { method: "PUT" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, POST, DELETE");

    const garbage = await post("{not json");
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as { error: { code: number } }).error.code).toBe(JSONRPC.PARSE_ERROR);
    const invalidUtf8 = await fetch(`${running.url}/mcp/demo`, {
      method: "POST",
      headers: { accept: "application/json" },
      body: Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}}'),
      ]),
    });
    expect(invalidUtf8.status).toBe(400);
    expect(((await invalidUtf8.json()) as { error: { message: string } }).error.message).toMatch(/not valid UTF-8/);
    const bom = await post(`\uFEFF${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}`, {
      accept: "application/json",
    });
    expect(await bom.json()).toEqual({ result: {}, jsonrpc: "2.0", id: 1 });
    const notRpc = await post({ hello: 1 });
    expect(notRpc.status).toBe(400);
    expect(((await notRpc.json()) as { error: { code: number } }).error.code).toBe(JSONRPC.INVALID_REQUEST);
    expect(running.sessions).toHaveLength(1); // the BOM ping's one-POST session
  });

  it("DELETE ends the session: onclose fires and the id is gone", async () => {
    const { transport } = await client();
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    await running.sessions[0]!.closed;
    const after = await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": sessionId });
    expect(after.status).toBe(404);
    expect(running.frontend.sessionsInUse).toBe(0);
  });

  it("ends a stateless session when the host disconnects before the answer", async () => {
    const controller = new AbortController();
    const pending = fetch(`${running.url}/mcp/demo`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT_BOTH },
      // `ask` waits for a sampling answer that never comes: the POST stays open.
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ask", arguments: {} } }),
      signal: controller.signal,
    });
    const response = await pending;
    expect(response.status).toBe(200);
    controller.abort();
    await until(() => running.sessions.length === 1);
    await running.sessions[0]!.closed;
    await until(() => running.frontend.sessionsInUse === 0);
  });
});

describe("streamable HTTP host limits", () => {
  it("ends a session left idle (no request, no open stream) after sessionIdleTimeoutMs", async () => {
    await running.close();
    running = await startFrontend({ sessionIdleTimeoutMs: 50 });
    const sessionId = await rawInitialize();
    await running.sessions[0]!.closed;
    expect((await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": sessionId })).status).toBe(404);
  });

  it("answers a body over maxMessageBytes with 413 and MESSAGE_TOO_LARGE, and the session goes on", async () => {
    await running.close();
    running = await startFrontend({ maxMessageBytes: 64 * 1024 });
    const { client: c, transport } = await client();
    const big = await post(
      {
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "y".repeat(100_000) } },
      },
      { "mcp-session-id": transport.sessionId! },
    );
    expect(big.status).toBe(413);
    const body = (await big.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(JSONRPC.MESSAGE_TOO_LARGE);
    expect(body.error.message).toMatch(/maxMessageBytes \(65536 bytes\)/);
    await expect(c.callTool({ name: "echo", arguments: { text: "still here" } })).resolves.toMatchObject({
      content: [{ text: "still here" }],
    });
  });

  it("carries a 50 MiB tool result", async () => {
    const { client: c } = await client();
    const size = 50 * 1024 * 1024;
    const started = performance.now();
    const result = await c.callTool({ name: "big", arguments: { bytes: size } });
    const ms = performance.now() - started;
    expect((result.content as Array<{ text: string }>)[0]!.text.length).toBe(size);
    console.error(`50 MiB tool result over /mcp (SDK client): ${ms.toFixed(0)} ms`);
  });

  it("takes a 50 MiB POST body and delivers it as parsed", async () => {
    const { transport } = await client();
    const size = 50 * 1024 * 1024;
    const body = `{"jsonrpc":"2.0","method":"notifications/big","params":{"blob":"${"B".repeat(size)}"}}`;
    const started = performance.now();
    const response = await post(body, { "mcp-session-id": transport.sessionId! });
    const ms = performance.now() - started;
    expect(response.status).toBe(202);
    const session = running.sessions[0]!;
    const last = session.received[session.received.length - 1]!.message as unknown as {
      method: string;
      params: { blob: string };
    };
    expect(last.method).toBe("notifications/big");
    expect(last.params.blob.length).toBe(size);
    console.error(`50 MiB POST body over /mcp: ${ms.toFixed(0)} ms`);
  });
});
