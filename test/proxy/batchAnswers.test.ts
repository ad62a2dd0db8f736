/**
 * A batch, where the protocol has them (2025-03-26), is answered as one: the upstream's array of
 * answers reaches a stdio or WebSocket host as one array (JSON-RPC 2.0 §6), as it would going
 * direct, and a streamable HTTP host's POST gets one JSON array. An SSE host's batch is split, as
 * on `/mcp`: an SDK server (which cannot read a batch over stdio) answers each request.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, FIXTURE_SERVER, ROOT } from "../helpers/paths.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { sleep, until } from "../helpers/polling.js";
import { startRawStdio } from "../helpers/rawStdio.js";
import { rawWs, serveConfig } from "../reliability/helpers.js";

const ECHO_SERVER = join(ROOT, "test", "fixtures", "upstream-servers", "stdioEchoServer.mjs");
const initialize = (protocolVersion: string) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "batch-host", version: "1" } },
});
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };
const BATCH = [
  { jsonrpc: "2.0", id: 2, method: "echo", params: { n: 2 } },
  { jsonrpc: "2.0", method: "notifications/x" },
  { jsonrpc: "2.0", id: 3, method: "echo", params: { n: 3 } },
];
const ANSWERS = [
  { jsonrpc: "2.0", id: 2, result: { params: { n: 2 } } },
  { jsonrpc: "2.0", id: 3, result: { params: { n: 3 } } },
];

/** What `find` sees in `messages`, once it arrives. */
const seen = <T>(messages: readonly unknown[], find: (m: unknown) => boolean, what: string): Promise<T> =>
  until(
    () => messages.find(find),
    (hit) => hit !== undefined,
    10_000,
    what,
  ) as Promise<T>;

/** A legacy SSE host: the stream's `message` events, parsed, and the endpoint to POST to. */
async function rawSse(
  url: string,
): Promise<{ messages: unknown[]; post(body: unknown): Promise<number>; end(): void }> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: "text/event-stream" }, signal: controller.signal });
  const messages: unknown[] = [];
  let endpoint: string | undefined;
  let buffer = "";
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const type = /^event: (.*)$/m.exec(event)?.[1];
          const data = event
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trimStart())
            .join("\n");
          if (type === "endpoint") endpoint = new URL(data, url).href;
          else if (type === "message") messages.push(JSON.parse(data));
        }
      }
    } catch {
      // Aborted at the end of the test.
    }
  })();
  for (const deadline = Date.now() + 10_000; endpoint === undefined && Date.now() < deadline; ) await sleep(20);
  if (endpoint === undefined) throw new Error("no endpoint event");
  return {
    messages,
    post: async (body) =>
      (
        await fetch(endpoint!, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        })
      ).status,
    end: () => controller.abort(),
  };
}

const isArray = (m: unknown): boolean => Array.isArray(m);
const answerTo = (id: number) => (m: unknown) => !Array.isArray(m) && (m as { id?: unknown }).id === id;

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: {
      echo: { command: process.execPath, args: [ECHO_SERVER] },
      sdk: { command: process.execPath, args: [FIXTURE_SERVER] },
    },
    limits: { requestTimeoutMs: 5_000 },
  });
});
afterAll(async () => {
  await serve?.stop();
});

describe("a batch's answers on protocol 2025-03-26", () => {
  it("stdio: one line holding the array", async () => {
    const host = startRawStdio(process.execPath, [CLI, "stdio", "--", process.execPath, ECHO_SERVER]);
    try {
      await host.request(1, "initialize", initialize("2025-03-26").params);
      host.child.stdin.write(`${JSON.stringify(INITIALIZED)}\n${JSON.stringify(BATCH)}\n`);
      expect(await seen(host.messages, isArray, "an array")).toEqual(ANSWERS);
      expect(host.messages.filter((m) => m.id === 2 || m.id === 3)).toEqual([]);
    } finally {
      await host.close();
    }
  });

  it("WebSocket: one frame holding the array", async () => {
    const host = await rawWs(serve.url, "echo");
    try {
      await host.request(1, "initialize", initialize("2025-03-26").params);
      host.send(JSON.stringify(INITIALIZED));
      host.send(JSON.stringify(BATCH));
      expect(await seen(host.messages, isArray, "an array")).toEqual(ANSWERS);
      expect(host.messages.filter((m) => answerTo(2)(m) || answerTo(3)(m))).toEqual([]);
    } finally {
      await host.close();
    }
  });

  it("streamable HTTP: the POST's body is the array", async () => {
    const url = `${serve.url}/mcp/echo`;
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-03-26",
    };
    const init = await fetch(url, { method: "POST", headers, body: JSON.stringify(initialize("2025-03-26")) });
    const session = init.headers.get("mcp-session-id")!;
    await init.text();
    const withSession = { ...headers, "mcp-session-id": session };
    await (await fetch(url, { method: "POST", headers: withSession, body: JSON.stringify(INITIALIZED) })).text();
    const answered = await fetch(url, {
      method: "POST",
      headers: { ...withSession, accept: "application/json" },
      body: JSON.stringify(BATCH),
    });
    expect(answered.status).toBe(200);
    expect(JSON.parse(await answered.text())).toEqual(ANSWERS);
  });
});

describe("an SSE host's batch", () => {
  it.each(["2025-03-26", "2025-06-18"])(
    "on %s: split, and each request answered by an SDK server, as an event of its own",
    async (version) => {
      const host = await rawSse(`${serve.url}/sse/sdk`);
      try {
        await host.post(initialize(version));
        await seen(host.messages, answerTo(1), "the initialize answer");
        await host.post(INITIALIZED);
        expect(
          await host.post([
            { jsonrpc: "2.0", id: 2, method: "ping" },
            { jsonrpc: "2.0", id: 3, method: "tools/list" },
          ]),
        ).toBe(202);
        expect(await seen(host.messages, answerTo(2), "the answer to 2")).toMatchObject({ result: {} });
        expect(await seen(host.messages, answerTo(3), "the answer to 3")).toMatchObject({
          result: { tools: expect.any(Array) },
        });
      } finally {
        host.end();
      }
    },
  );
});

/**
 * A streamable HTTP server that answers a batched POST with one JSON array (as servers of
 * 2025-03-26 may), each request with its params; GET streams it has none of.
 */
async function batchAnsweringServer(): Promise<{ url: string; server: Server; posts: unknown[] }> {
  const posts: unknown[] = [];
  const server = createServer(async (req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    for await (const chunk of req) body += chunk;
    const message = JSON.parse(body) as unknown;
    posts.push(message);
    const answer = (m: { id: number; method: string; params?: { protocolVersion?: string } }) =>
      m.method === "initialize"
        ? {
            jsonrpc: "2.0",
            id: m.id,
            result: {
              protocolVersion: m.params?.protocolVersion,
              capabilities: {},
              serverInfo: { name: "batch-http", version: "1" },
            },
          }
        : { jsonrpc: "2.0", id: m.id, result: { params: m.params } };
    const requests = (Array.isArray(message) ? message : [message]).filter(
      (m: { id?: unknown; method?: unknown }) => m.id !== undefined && typeof m.method === "string",
    );
    if (requests.length === 0) return void res.writeHead(202).end();
    // An array for a batch, and for a request of method "as-array" (one answer in an array).
    const asArray = Array.isArray(message) || (message as { method?: unknown }).method === "as-array";
    const out = asArray ? requests.map(answer) : answer(requests[0]);
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "batch-session" });
    res.end(JSON.stringify(out));
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server, posts };
}

describe("a batch's answers from a streamable HTTP server, on protocol 2025-03-26", () => {
  it("a JSON array answering the batched POST reaches a stdio host as one array", async () => {
    const upstream = await batchAnsweringServer();
    const host = startRawStdio(process.execPath, [CLI, "stdio", "--url", upstream.url]);
    try {
      await host.request(1, "initialize", initialize("2025-03-26").params);
      host.child.stdin.write(`${JSON.stringify(INITIALIZED)}\n${JSON.stringify(BATCH)}\n`);
      expect(await seen(host.messages, isArray, "an array")).toEqual(ANSWERS);
      expect(host.messages.filter((m) => m.id === 2 || m.id === 3)).toEqual([]);
      // The batch went to the server as one POST.
      expect(upstream.posts.filter((post) => Array.isArray(post))).toEqual([BATCH]);
    } finally {
      await host.close();
      upstream.server.closeAllConnections();
      upstream.server.close();
    }
  });

  it("on 2025-06-18, where a host cannot read an array, an array's answer reaches it as a message of its own", async () => {
    const upstream = await batchAnsweringServer();
    const host = startRawStdio(process.execPath, [CLI, "stdio", "--url", upstream.url]);
    try {
      await host.request(1, "initialize", initialize("2025-06-18").params);
      host.child.stdin.write(`${JSON.stringify(INITIALIZED)}\n`);
      expect(await host.request(2, "as-array", { n: 2 })).toEqual(ANSWERS[0]);
      expect(host.messages.filter(isArray)).toEqual([]);
    } finally {
      await host.close();
      upstream.server.closeAllConnections();
      upstream.server.close();
    }
  });
});
