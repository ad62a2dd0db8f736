/**
 * Lazy SSE on `/mcp/NAME`: a POST whose host accepts both JSON and SSE is answered
 * with one JSON body when its answers come before anything else related to it, and with an SSE
 * stream opened at the first related message or at the end of the window otherwise. The test
 * plays the proxy itself (it answers each request by hand through the host transport), so it
 * decides what arrives first; the host side is real: sockets on port 0, raw fetch, the SDK's
 * client.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { JSONRPC } from "../../../src/errors/jsonRpcCodes.js";
import type { HostSessionInfo } from "../../../src/transports/host/hostSession.js";
import { StreamableHttpEndpoint } from "../../../src/transports/host/streamableHttpEndpoint.js";
import type { StreamableHttpHostSession } from "../../../src/transports/host/streamableHttpHost.js";
import type { JSONRPCMessage } from "../../../src/transports/types.js";
import { until } from "../../server/helpers/frontend.js";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";

type Message = Record<string, unknown>;

/** One host session as the proxy sees it: what the host sent, and the transport to answer on. */
interface Seen {
  readonly transport: StreamableHttpHostSession;
  readonly info: HostSessionInfo;
  readonly received: Message[];
  closed: boolean;
}

interface Fixture {
  readonly url: string;
  readonly endpoint: StreamableHttpEndpoint;
  readonly sessions: Seen[];
  /** Resolves with the request `id` once the host transport has handed it to the proxy. */
  request(id: unknown): Promise<{ session: Seen; message: Message }>;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `/mcp/demo` on 127.0.0.1 port 0; `initialize` and `ping` are answered at once, the rest by the test. */
async function start(
  options: { lazySseWindowMs?: number; sseKeepAliveMs?: number; maxQueuedMessages?: number } = {},
): Promise<Fixture> {
  const sessions: Seen[] = [];
  const endpoint = new StreamableHttpEndpoint(
    {
      server: "demo",
      maxMessageBytes: 1024 * 1024,
      closeTimeoutMs: 2000,
      sseKeepAliveMs: options.sseKeepAliveMs ?? 0,
      slots: { acquire: () => () => {} },
      maxSessions: 100,
      onSession: async (transport, info) => {
        const seen: Seen = { transport: transport as StreamableHttpHostSession, info, received: [], closed: false };
        sessions.push(seen);
        transport.onclose = () => {
          seen.closed = true;
        };
        transport.onmessage = (message) => {
          const m = message as Message;
          seen.received.push(m);
          if (m.method === "initialize")
            void transport.send({
              jsonrpc: "2.0",
              id: m.id as number,
              result: {
                protocolVersion: "2025-06-18",
                capabilities: { tools: {} },
                serverInfo: { name: "by-hand", version: "1" },
              },
            });
          if (m.method === "ping") void transport.send({ jsonrpc: "2.0", id: m.id as number, result: {} });
        };
        await transport.start();
      },
    },
    {
      lazySseWindowMs: options.lazySseWindowMs,
      idleTimeoutMs: DEFAULT_LIMITS.sessionIdleMs,
      maxQueuedMessages: options.maxQueuedMessages ?? DEFAULT_LIMITS.maxQueuedMessages,
      maxQueuedBytes: DEFAULT_LIMITS.maxQueuedBytes,
    },
  );
  const server: Server = createServer((req, res) => void endpoint.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    endpoint.closeAll();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp/demo`;
  const request = async (id: unknown): Promise<{ session: Seen; message: Message }> => {
    for (;;) {
      for (const session of sessions) {
        const message = session.received.find((m) => m.id === id && typeof m.method === "string");
        if (message !== undefined) return { session, message };
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { url, endpoint, sessions, request };
}

const ACCEPT_BOTH = "application/json, text/event-stream";

/** A batch of two tools/call requests, ids "a" and "b", in a session of a version with batches. */
function postBatchAB(url: string, sessionId: string, headers: Record<string, string> = {}): Promise<Response> {
  const batch = [
    { jsonrpc: "2.0", id: "a", method: "tools/call", params: {} },
    { jsonrpc: "2.0", id: "b", method: "tools/call", params: {} },
  ];
  return post(url, batch, { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-03-26", ...headers });
}

function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: ACCEPT_BOTH, ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

async function initialize(fx: Fixture): Promise<{ sessionId: string; session: Seen }> {
  const init = await post(fx.url, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  expect(init.headers.get("content-type")).toBe("application/json");
  const sessionId = init.headers.get("mcp-session-id")!;
  expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(await init.json()).toMatchObject({ jsonrpc: "2.0", id: 0, result: { serverInfo: { name: "by-hand" } } });
  return { sessionId, session: fx.sessions.at(-1)! };
}

/** The `data:` events of a whole SSE body. */
async function sseMessages(response: Response): Promise<Message[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .map((event) => event.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice("data: ".length)) as Message);
}

const result = (id: unknown, text: string): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id: id as number,
  result: { content: [{ type: "text", text }] },
});
const progress = (n: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: "t", progress: n },
});

/** What no JSON serializer writes (a BigInt: JSON.stringify throws TypeError); a depth alone it writes. */
function unwritable(): Record<string, unknown> {
  return { n: 1n };
}

describe("lazy SSE: which form a POST accepting both gets", () => {
  it("a request answered before anything else: application/json, the session id, the exact body", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const { sessionId } = await initialize(fx);
    const pending = post(
      fx.url,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" } },
      { "mcp-session-id": sessionId },
    );
    const { session } = await fx.request(1);
    await session.transport.send(result(1, "héllo 🌍"));
    const response = await pending;
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("mcp-session-id")).toBe(sessionId);
    const text = await response.text();
    expect(Number(response.headers.get("content-length"))).toBe(Buffer.byteLength(text));
    expect(JSON.parse(text)).toEqual(result(1, "héllo 🌍"));
    await until(() => session.transport.openStreams === 0);
  });

  it("an answer after the window: the stream opened when the window ended carries it", async () => {
    const fx = await start({ lazySseWindowMs: 5 });
    const { sessionId, session } = await initialize(fx);
    // fetch resolves with the headers: they only go out when the window ends, unanswered.
    const response = await post(
      fx.url,
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "slow" } },
      { "mcp-session-id": sessionId },
    );
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("mcp-session-id")).toBe(sessionId);
    await session.transport.send(result(2, "late"));
    expect(await sseMessages(response)).toEqual([result(2, "late")]);
  });

  it("a related message first: the stream opens at once with it, the answer follows on it", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const { sessionId } = await initialize(fx);
    const pending = post(
      fx.url,
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "p" } },
      { "mcp-session-id": sessionId },
    );
    const { session } = await fx.request(3);
    await session.transport.send(progress(1), { relatedRequestId: 3 });
    // The window is a minute long: only the related message can have opened the stream.
    const response = await pending;
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    await session.transport.send(
      { jsonrpc: "2.0", id: 900, method: "sampling/createMessage", params: {} },
      { relatedRequestId: 3 },
    );
    await session.transport.send(result(3, "done"));
    expect(await sseMessages(response)).toEqual([
      progress(1),
      { jsonrpc: "2.0", id: 900, method: "sampling/createMessage", params: {} },
      result(3, "done"),
    ]);
  });

  it("an unrelated server message does not open the stream: it waits for the GET stream, the answer is JSON", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const { sessionId } = await initialize(fx);
    const pending = post(
      fx.url,
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "x" } },
      { "mcp-session-id": sessionId },
    );
    const { session } = await fx.request(4);
    await session.transport.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    await session.transport.send(result(4, "ok"));
    const response = await pending;
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual(result(4, "ok"));
  });

  it("a batch answered quickly: one JSON array in request order, whatever order the answers came in", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const { sessionId } = await initialize(fx);
    const pending = post(
      fx.url,
      [
        { jsonrpc: "2.0", id: "a", method: "tools/call", params: {} },
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } },
        { jsonrpc: "2.0", id: "b", method: "tools/call", params: {} },
      ],
      { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-03-26" },
    );
    const { session } = await fx.request("b");
    await session.transport.send(result("b", "second"));
    await session.transport.send(result("a", "first"));
    const response = await pending;
    expect(response.headers.get("content-type")).toBe("application/json");
    const text = await response.text();
    expect(Number(response.headers.get("content-length"))).toBe(Buffer.byteLength(text));
    expect(JSON.parse(text)).toEqual([result("a", "first"), result("b", "second")]);
  });

  it("a batch with one answer held and a related message for the other: the stream starts with the held answer", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const { sessionId } = await initialize(fx);
    const pending = postBatchAB(fx.url, sessionId);
    const { session } = await fx.request("b");
    await session.transport.send(result("a", "quick"));
    await session.transport.send(progress(1), { relatedRequestId: "b" });
    const response = await pending;
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    await session.transport.send(result("b", "slow"));
    expect(await sseMessages(response)).toEqual([result("a", "quick"), progress(1), result("b", "slow")]);
  });

  it("a host that accepts only SSE always gets SSE; one that accepts only JSON gets JSON even with a related message", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const { sessionId } = await initialize(fx);
    const sseOnly = await post(
      fx.url,
      { jsonrpc: "2.0", id: 5, method: "ping" },
      { "mcp-session-id": sessionId, accept: "text/event-stream" },
    );
    expect(sseOnly.headers.get("content-type")).toBe("text/event-stream");
    expect(await sseMessages(sseOnly)).toEqual([{ jsonrpc: "2.0", id: 5, result: {} }]);

    const pending = post(
      fx.url,
      { jsonrpc: "2.0", id: 6, method: "tools/call", params: {} },
      { "mcp-session-id": sessionId, accept: "application/json" },
    );
    const { session } = await fx.request(6);
    // No stream to put it on: it waits for the GET stream, as before lazy SSE.
    await session.transport.send(progress(1), { relatedRequestId: 6 });
    await session.transport.send(result(6, "json"));
    const jsonOnly = await pending;
    expect(jsonOnly.headers.get("content-type")).toBe("application/json");
    expect(await jsonOnly.json()).toEqual(result(6, "json"));
    const get = await fetch(fx.url, { headers: { accept: "text/event-stream", "mcp-session-id": sessionId } });
    const reader = get.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes("\n\n")) seen += (await reader.read()).value ?? "";
    expect(seen).toBe(`event: message\ndata: ${JSON.stringify(progress(1))}\n\n`);
    await reader.cancel();
  });

  it("a window of 0 opens the stream up front (the form before lazy SSE)", async () => {
    const fx = await start({ lazySseWindowMs: 0 });
    const response = await post(
      fx.url,
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { "mcp-protocol-version": "2026-07-28" },
    );
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(await sseMessages(response)).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
  });

  it("a stateless 2026-07-28 POST: JSON when quick, SSE when slow; each one-POST session ends with its POST", async () => {
    const fx = await start({ lazySseWindowMs: 5 });
    const headers = { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call" };
    const quick = await post(fx.url, { jsonrpc: "2.0", id: 1, method: "ping" }, headers);
    expect(quick.headers.get("content-type")).toBe("application/json");
    expect(quick.headers.get("mcp-session-id")).toBeNull();
    expect(await quick.json()).toEqual({ jsonrpc: "2.0", id: 1, result: {} });

    const slow = await post(fx.url, { jsonrpc: "2.0", id: 2, method: "tools/call", params: {} }, headers);
    expect(slow.headers.get("content-type")).toBe("text/event-stream");
    const { session } = await fx.request(2);
    expect(session.info.stateless).toBe(true);
    await session.transport.send(result(2, "slow"));
    expect(await sseMessages(slow)).toEqual([result(2, "slow")]);
    await until(() => fx.sessions.every((s) => s.closed) && fx.endpoint.sessionCount === 0);
  });
});

describe("lazy SSE: endings", () => {
  it("the host disconnecting in the window ends the POST (a stateless session with it); a late answer is dropped, not sent", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const abort = new AbortController();
    const pending = post(
      fx.url,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: {} },
      { "mcp-protocol-version": "2026-07-28" },
      abort.signal,
    );
    const { session } = await fx.request(1);
    abort.abort();
    await expect(pending).rejects.toThrow();
    await until(() => session.closed);
    expect(session.transport.openStreams).toBe(0);
    expect(fx.endpoint.sessionCount).toBe(0);
    await expect(session.transport.send(result(1, "too late"))).resolves.toBeUndefined();
  });

  it("the host disconnecting in the window of a stateful session: the exchange ends, the session goes on", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const { sessionId, session } = await initialize(fx);
    const errors: Error[] = [];
    session.transport.onerror = (error) => errors.push(error);
    const abort = new AbortController();
    const pending = post(
      fx.url,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: {} },
      { "mcp-session-id": sessionId },
      abort.signal,
    );
    await fx.request(1);
    expect(session.transport.openStreams).toBe(1);
    abort.abort();
    await expect(pending).rejects.toThrow();
    await until(() => session.transport.openStreams === 0);
    await session.transport.send(result(1, "too late"));
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/Response to request 1 dropped/)]);
    // The id is free again, and the session answers.
    const again = await post(fx.url, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": sessionId });
    expect(await again.json()).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    expect(session.closed).toBe(false);
  });

  it("the session ending in the window: a JSON-RPC error under the request's id, as a JSON-only POST gets", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const { sessionId, session } = await initialize(fx);
    const pending = post(
      fx.url,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: {} },
      { "mcp-session-id": sessionId },
    );
    await fx.request(1);
    await session.transport.close();
    const response = await pending;
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: JSONRPC.UPSTREAM_UNAVAILABLE,
        message: expect.stringMatching(/session ended before the request was answered/),
      },
    });
  });

  it("the session ending while a batch holds one answer: the held answer, then the other's error, on a stream that then ends", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const { sessionId, session } = await initialize(fx);
    const pending = postBatchAB(fx.url, sessionId);
    await fx.request("b");
    await session.transport.send(result("a", "kept"));
    await session.transport.close();
    const response = await pending;
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(await sseMessages(response)).toEqual([
      result("a", "kept"),
      {
        jsonrpc: "2.0",
        id: "b",
        error: { code: JSONRPC.UPSTREAM_UNAVAILABLE, message: "The session ended before the request was answered" },
      },
    ]);
  });

  it("the session ending with a stream open: every request still waiting on it is answered with an error before it ends", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const { sessionId, session } = await initialize(fx);
    const pending = postBatchAB(fx.url, sessionId);
    await fx.request("b");
    // A related message opens the stream; neither request is answered when the session ends.
    await session.transport.send(progress(1), { relatedRequestId: "a" });
    const response = await pending;
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    await session.transport.close();
    const messages = await sseMessages(response);
    expect(messages[0]).toEqual(progress(1));
    expect(messages.slice(1)).toEqual(
      ["a", "b"].map((id) => ({
        jsonrpc: "2.0",
        id,
        error: { code: JSONRPC.UPSTREAM_UNAVAILABLE, message: "The session ended before the request was answered" },
      })),
    );
  });

  it("the session ending while a JSON-only batch holds one answer: it and an error for the other, never a stream", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const { sessionId, session } = await initialize(fx);
    const pending = postBatchAB(fx.url, sessionId, { accept: "application/json" });
    await fx.request("b");
    await session.transport.send(result("a", "held"));
    await session.transport.close();
    const response = await pending;
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toMatchObject([
      { id: "a", result: { content: [{ text: "held" }] } },
      { id: "b", error: { code: JSONRPC.UPSTREAM_UNAVAILABLE } },
    ]);
  });

  it("an answer that cannot be serialized rejects without answering or opening the stream; the error answer for its id is JSON", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const { sessionId } = await initialize(fx);
    const pending = post(
      fx.url,
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: {} },
      { "mcp-session-id": sessionId },
    );
    const { session } = await fx.request(7);
    await expect(session.transport.send({ jsonrpc: "2.0", id: 7, result: unwritable() })).rejects.toThrow(TypeError);
    await expect(
      session.transport.send(
        { jsonrpc: "2.0", method: "notifications/message", params: unwritable() },
        { relatedRequestId: 7 },
      ),
    ).rejects.toThrow(TypeError);
    // As the proxy does: the same id answered with an error.
    await session.transport.send({ jsonrpc: "2.0", id: 7, error: { code: -32603, message: "could not be forwarded" } });
    const response = await pending;
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32603, message: "could not be forwarded" },
    });
  });

  it("the window is never longer than the keepalive interval: the stream (and its keepalives) opens in time", async () => {
    const fx = await start({ lazySseWindowMs: 60_000, sseKeepAliveMs: 5 });
    const response = await post(
      fx.url,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: {} },
      { "mcp-protocol-version": "2026-07-28" },
    );
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes(": keepalive\n\n")) seen += (await reader.read()).value ?? "";
    const { session } = await fx.request(1);
    await session.transport.send(result(1, "after keepalives"));
    while (!seen.includes("after keepalives")) seen += (await reader.read()).value ?? "";
    expect(seen).toContain(`data: ${JSON.stringify(result(1, "after keepalives"))}\n\n`);
  });
});

describe("lazy SSE with the SDK's client", () => {
  it("StreamableHTTPClientTransport takes JSON answers and SSE ones in the same session", async () => {
    const fx = await start({ lazySseWindowMs: 60_000 });
    const types: string[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(fx.url), {
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (init?.method === "POST" && response.status === 200) types.push(response.headers.get("content-type") ?? "");
        return response;
      },
    });
    const client = new Client({ name: "sdk-host", version: "1" });
    await client.connect(transport);
    cleanups.push(() => client.close());
    const session = fx.sessions[0]!;
    session.transport.onmessage = (message) => {
      const m = message as Message;
      session.received.push(m);
      if (m.method !== "tools/call") return;
      const name = (m.params as { name: string }).name;
      if (name === "quick") void session.transport.send(result(m.id, "quick"));
      else {
        const log: JSONRPCMessage = {
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "info", data: "working" },
        };
        void session.transport
          .send(log, { relatedRequestId: m.id as number })
          .then(() => session.transport.send(result(m.id, "streamed")));
      }
    };
    expect((await client.callTool({ name: "quick", arguments: {} })).content).toEqual([
      { type: "text", text: "quick" },
    ]);
    expect((await client.callTool({ name: "streamed", arguments: {} })).content).toEqual([
      { type: "text", text: "streamed" },
    ]);
    expect(types).toEqual(["application/json", "application/json", "text/event-stream"]);
  });
});

describe("server messages queued while the host has no GET stream", () => {
  it("past maxQueuedMessages a notification is dropped before any request (each request is owed an answer)", async () => {
    const fx = await start({ maxQueuedMessages: 3 });
    const { sessionId, session } = await initialize(fx);
    const notification = (n: number): JSONRPCMessage => ({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { n },
    });
    const ask = (id: string): JSONRPCMessage => ({ jsonrpc: "2.0", id, method: "roots/list" }) as JSONRPCMessage;
    for (const message of [notification(1), ask("r1"), notification(2), ask("r2"), notification(3)])
      await session.transport.send(message);
    const controller = new AbortController();
    const stream = await fetch(fx.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": sessionId },
      signal: controller.signal,
    });
    const reader = stream.body!.getReader();
    let text = "";
    while ((text.match(/^data: /gm) ?? []).length < 3) {
      const { done, value } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString("utf8");
    }
    controller.abort();
    const got = text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as Message);
    expect(got.map((m) => m.id ?? (m.params as { n: number }).n)).toEqual(["r1", "r2", 3]);
  });
});
