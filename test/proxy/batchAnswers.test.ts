/**
 * A batch, where the protocol has them (2025-03-26), is answered as one: the upstream's array of
 * answers reaches a stdio or WebSocket host as one array (JSON-RPC 2.0 §6), as it would going
 * direct, and a streamable HTTP host's POST gets one JSON array. An SSE host's batch is split, as
 * on `/mcp`: an SDK server (which cannot read a batch over stdio) answers each request.
 */
import { writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listen, readBody } from "../fixtures/upstream-servers/httpFixtures.js";
import { CLI, FIXTURE_SERVER, ROOT } from "../helpers/paths.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { sleep, until } from "../helpers/polling.js";
import { startRawStdio } from "../helpers/rawStdio.js";
import { rawWs, serveConfig, tempDir, waitForStderr } from "../reliability/helpers.js";

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

/** A `/mcp` session on 2025-03-26, initialized: the headers its POSTs carry. */
async function mcpSession(url: string): Promise<Record<string, string>> {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-03-26",
  };
  const init = await fetch(url, { method: "POST", headers, body: JSON.stringify(initialize("2025-03-26")) });
  await init.text();
  const withSession = { ...headers, "mcp-session-id": init.headers.get("mcp-session-id")! };
  await (await fetch(url, { method: "POST", headers: withSession, body: JSON.stringify(INITIALIZED) })).text();
  return withSession;
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

  it("stdio: what the proxy answers itself (a page read, a refusal) is inside the upstream's array", async () => {
    const dir = tempDir();
    const config = join(dir, "proxy.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { echo: { command: process.execPath, args: [ECHO_SERVER] } },
        normalize: { maxResultBytes: 1024 },
      }),
    );
    const host = startRawStdio(process.execPath, [CLI, "stdio", "--config", config, "--server", "echo"]);
    try {
      await host.request(1, "initialize", initialize("2025-03-26").params);
      const page = { jsonrpc: "2.0", id: 4, method: "resources/read", params: { uri: "mcp-normalizer://spill/x/1" } };
      const refused = { jsonrpc: "2.0", id: 5, method: "echo", params: "not params" };
      host.child.stdin.write(`${JSON.stringify(INITIALIZED)}\n${JSON.stringify([page, ...BATCH, refused])}\n`);
      const answers = await seen<Array<Record<string, unknown>>>(host.messages, isArray, "an array");
      // The upstream's array as it wrote it, then the proxy's answers (JSON-RPC lets a batch's come in any order).
      expect(answers.map((m) => m.id)).toEqual([2, 3, 5, 4]);
      expect(answers.slice(0, 2)).toEqual(ANSWERS);
      expect(answers[2]).toMatchObject({ id: 5, error: { code: -32600 } });
      expect(answers[3]).toMatchObject({ id: 4, error: { code: -32002 } });
      await sleep(300);
      expect(host.messages.filter((m) => !Array.isArray(m) && m.id !== 1)).toEqual([]);
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
    const withSession = await mcpSession(url);
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

interface ServerModes {
  /** A batch is answered with an SSE stream: one event holding the array, the stream ended 300 ms later. */
  readonly sse?: boolean;
  /** A batch is answered with an SSE stream: one event per answer, as SDK servers write them. */
  readonly eventEach?: boolean;
  /** A log notification between a batch's answers. */
  readonly notifyBetween?: boolean;
  /** A request of method "garbage" is answered with what is no message around its answer. */
  readonly garbage?: boolean;
}

/**
 * A streamable HTTP server that answers a batched POST with one JSON array (as servers of
 * 2025-03-26 may), each request with its params, and a request of method "as-array" with its
 * answer in an array; GET streams it has none of.
 */
async function batchAnsweringServer(
  modes: ServerModes = {},
): Promise<{ url: string; posts: unknown[]; close(): Promise<void> }> {
  const posts: unknown[] = [];
  const answering = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    const message = await readBody(req);
    posts.push(message);
    const answer = (m: { id: number; method: string; params?: { protocolVersion?: string } }) =>
      m.method === "initialize"
        ? {
            jsonrpc: "2.0",
            id: m.id,
            result: {
              protocolVersion: m.params?.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: "batch-http", version: "1" },
            },
          }
        : { jsonrpc: "2.0", id: m.id, result: { params: m.params } };
    const requests = (Array.isArray(message) ? message : [message]).filter(
      (m: { id?: unknown; method?: unknown }) => m.id !== undefined && typeof m.method === "string",
    );
    if (requests.length === 0) return void res.writeHead(202).end();
    const first = requests[0] as { method: string };
    let out: unknown;
    if (first.method === "garbage" && modes.garbage) out = [1, "x", null, [answer(requests[0])], answer(requests[0])];
    else if (first.method === "empty") out = [];
    else if (Array.isArray(message) || first.method === "as-array") {
      const answers: unknown[] = requests.map(answer);
      if (modes.notifyBetween)
        answers.splice(1, 0, {
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "info", data: "between" },
        });
      out = answers;
    } else out = answer(requests[0]);
    if (modes.eventEach && Array.isArray(out)) {
      res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "batch-session" });
      for (const each of out) res.write(`event: message\ndata: ${JSON.stringify(each)}\n\n`);
      setTimeout(() => res.end(), 100);
      return;
    }
    if (modes.sse && Array.isArray(message)) {
      res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "batch-session" });
      res.write(`event: message\ndata: ${JSON.stringify(out)}\n\n`);
      setTimeout(() => res.end(), 300);
      return;
    }
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "batch-session" });
    res.end(JSON.stringify(out));
  };
  const { url, close } = await listen((req, res) => void answering(req, res), "/mcp");
  return { url, posts, close };
}

/** `stdio --url` in front of a batch-answering server, initialized on `version`. */
async function stdioInFront(version: string, modes: ServerModes = {}) {
  const upstream = await batchAnsweringServer(modes);
  const host = startRawStdio(process.execPath, [CLI, "stdio", "--url", upstream.url]);
  await host.request(1, "initialize", initialize(version).params);
  host.child.stdin.write(`${JSON.stringify(INITIALIZED)}\n`);
  return {
    upstream,
    host,
    end: async () => {
      await host.close();
      await upstream.close();
    },
  };
}

describe("a batch's answers from a streamable HTTP server", () => {
  it("on 2025-03-26, a JSON array answering the batched POST reaches a stdio host as one array", async () => {
    const { upstream, host, end } = await stdioInFront("2025-03-26");
    try {
      host.child.stdin.write(`${JSON.stringify(BATCH)}\n`);
      expect(await seen(host.messages, isArray, "an array")).toEqual(ANSWERS);
      expect(host.messages.filter((m) => m.id === 2 || m.id === 3)).toEqual([]);
      // The batch went to the server as one POST.
      expect(upstream.posts.filter((post) => Array.isArray(post))).toEqual([BATCH]);
    } finally {
      await end();
    }
  });

  it("on 2025-03-26, answers sent as one event each reach a stdio host as one array", async () => {
    const { host, end } = await stdioInFront("2025-03-26", { eventEach: true });
    try {
      host.child.stdin.write(`${JSON.stringify(BATCH)}\n`);
      expect(await seen(host.messages, isArray, "an array")).toEqual(ANSWERS);
      await sleep(200);
      expect(host.messages.filter((m) => m.id === 2 || m.id === 3)).toEqual([]);
    } finally {
      await end();
    }
  });

  it.each([
    ["2025-03-26", "which has batches, not for one request"],
    ["2025-06-18", "where a host cannot read an array"],
  ])("on %s (%s), an array answering one request reaches the host as that answer alone", async (version) => {
    const { host, end } = await stdioInFront(version);
    try {
      expect(await host.request(2, "as-array", { n: 2 }, 10_000)).toEqual(ANSWERS[0]);
      expect(host.messages.filter(isArray)).toEqual([]);
    } finally {
      await end();
    }
  });

  it("an empty array answering one request: the host gets an error at once, and the log names the array", async () => {
    const { host, end } = await stdioInFront("2025-03-26");
    try {
      const answer = await host.request(2, "empty", {}, 10_000);
      expect(answer.error).toMatchObject({ code: -32001 });
      await until(
        () => host.stderr(),
        (text) => text.includes("upstream answered with an empty array; it answers nothing"),
        10_000,
        "the log line",
      );
    } finally {
      await end();
    }
  });

  it("an array on an SSE event answers its requests: once the stream ends, none of them gets an error", async () => {
    const { host, end } = await stdioInFront("2025-03-26", { sse: true });
    try {
      host.child.stdin.write(`${JSON.stringify(BATCH)}\n`);
      expect(await seen(host.messages, isArray, "an array")).toEqual(ANSWERS);
      // The stream ends 300 ms after the event; a request still thought waiting would get an error then.
      await sleep(1000);
      expect(host.messages.filter((m) => m.id === 2 || m.id === 3)).toEqual([]);
      expect(host.stderr()).not.toContain("before answering");
    } finally {
      await end();
    }
  });

  /** A `/mcp` session through a proxy in front of the batch-answering server: `url`, its headers, the server. */
  async function inSession(
    test: (url: string, withSession: Record<string, string>, upstream: { posts: unknown[] }) => Promise<void>,
  ): Promise<void> {
    const upstream = await batchAnsweringServer();
    const proxy = await serveConfig({ mcpServers: { http: { url: upstream.url } } });
    try {
      const url = `${proxy.url}/mcp/http`;
      await test(url, await mcpSession(url), upstream);
    } finally {
      await proxy.stop();
      await upstream.close();
    }
  }

  it("a /mcp host's batch that uses one id twice is refused whole (400), nothing of it sent on", async () => {
    await inSession(async (url, withSession, upstream) => {
      const twice = { jsonrpc: "2.0", id: 10, method: "echo", params: { n: 10 } };
      const answered = await fetch(url, { method: "POST", headers: withSession, body: JSON.stringify([twice, twice]) });
      expect(answered.status).toBe(400);
      expect(await answered.text()).toContain("id 10 is used twice in one batch; nothing of it was sent");
      // The session goes on, and the server never saw the batch.
      const next = await fetch(url, {
        method: "POST",
        headers: { ...withSession, accept: "application/json" },
        body: JSON.stringify({ ...twice, id: 11 }),
      });
      expect(JSON.parse(await next.text())).toMatchObject({ id: 11, result: { params: { n: 10 } } });
      expect(upstream.posts.filter((post) => JSON.stringify(post).includes('"id":10'))).toEqual([]);
    });
  });

  it("a /mcp host's batch with two ids past 2^53 that read as one number is refused naming both as written", async () => {
    await inSession(async (url, withSession, upstream) => {
      // Two ids an int64 host may send: JSON.parse reads both as 9007199254740992.
      const body =
        '[{"jsonrpc":"2.0","id":9007199254740993,"method":"echo"},' +
        '{"jsonrpc":"2.0","id":9007199254740992,"method":"echo"}]';
      const answered = await fetch(url, { method: "POST", headers: withSession, body });
      expect(answered.status).toBe(400);
      expect(await answered.text()).toContain(
        "ids 9007199254740993 and 9007199254740992 of one batch read as one number",
      );
      expect(upstream.posts.filter((post) => JSON.stringify(post).includes("9007199254740992"))).toEqual([]);
    });
  });

  it("refused so, a batch with no session yet (stateless, or a first POST) opens none: it holds no slot", async () => {
    const upstream = await batchAnsweringServer();
    const proxy = await serveConfig({
      mcpServers: { http: { url: upstream.url } },
      limits: { maxSessionsPerClient: 2 },
    });
    const url = `${proxy.url}/mcp/http`;
    const headers = (version: string) => ({
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": version,
    });
    const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });
    try {
      for (let i = 0; i < 3; i++) {
        const stateless = await fetch(url, {
          method: "POST",
          headers: headers("2026-07-28"),
          body: JSON.stringify([ping(5), ping(5)]),
        });
        expect(stateless.status).toBe(400);
        await stateless.text();
        const opening = await fetch(url, {
          method: "POST",
          headers: headers("2025-03-26"),
          body: JSON.stringify([initialize("2025-03-26"), ping(1)]),
        });
        expect(opening.status).toBe(400);
        expect(opening.headers.get("mcp-session-id")).toBeNull();
        await opening.text();
      }
      // No session was opened for any of them (nor an upstream connection started).
      const health = (await (await fetch(`${proxy.url}/healthz`)).json()) as {
        servers: Record<string, { sessionsOpened: number }>;
      };
      expect(health.servers.http!.sessionsOpened).toBe(0);
      // Six refused POSTs later, this client still has its two sessions to open.
      const served = await fetch(url, {
        method: "POST",
        headers: headers("2026-07-28"),
        body: JSON.stringify(ping(6)),
      });
      expect(served.status).toBe(200);
      await served.text();
      const opened = await fetch(url, {
        method: "POST",
        headers: headers("2025-03-26"),
        body: JSON.stringify(initialize("2025-03-26")),
      });
      expect(opened.status).toBe(200);
      expect(opened.headers.get("mcp-session-id")).not.toBeNull();
      await opened.text();
    } finally {
      await proxy.stop();
      await upstream.close();
    }
  });

  it("a WebSocket host's batch: a notification between the answers reaches it, inside the one array", async () => {
    const upstream = await batchAnsweringServer({ notifyBetween: true });
    const proxy = await serveConfig({ mcpServers: { http: { url: upstream.url } } });
    const host = await rawWs(proxy.url, "http");
    try {
      await host.request(1, "initialize", initialize("2025-03-26").params);
      host.send(JSON.stringify(INITIALIZED));
      host.send(JSON.stringify(BATCH));
      expect(await seen(host.messages, isArray, "an array")).toEqual([
        ANSWERS[0],
        { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "between" } },
        ANSWERS[1],
      ]);
    } finally {
      await host.close();
      await proxy.stop();
      await upstream.close();
    }
  });

  it("a stateless POST: what is no message around the answer is dropped and logged, the answer has the host's id", async () => {
    const upstream = await batchAnsweringServer({ garbage: true });
    const proxy = await serveConfig({ mcpServers: { http: { url: upstream.url } } });
    try {
      const answered = await fetch(`${proxy.url}/mcp/http`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "garbage", params: { n: 7 } }),
      });
      const text = await answered.text();
      const messages = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as unknown);
      const bodies = messages.length > 0 ? messages : [JSON.parse(text) as unknown];
      expect(bodies).toEqual([{ jsonrpc: "2.0", id: 7, result: { params: { n: 7 } } }]);
      await waitForStderr(proxy, /not a JSON-RPC message; not forwarded/);
    } finally {
      await proxy.stop();
      await upstream.close();
    }
  });
});
