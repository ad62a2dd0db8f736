import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { relatedRequestOf } from "../../../src/transports/jsonrpc.js";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { JSONRPC } from "../../../src/errors/jsonRpcCodes.js";
import {
  StreamableHttpUpstreamTransport,
  type HttpUpstreamOptions,
} from "../../../src/transports/upstream/streamableHttpUpstream.js";
import type { JSONRPCMessage } from "../../../src/transports/types.js";
import {
  startStatelessFixture,
  startStatusFixture,
  startStreamableHttpFixture,
} from "../../fixtures/upstream-servers/httpFixtures.js";
import { collect, INITIALIZE, INITIALIZED, type Collected } from "./collect.js";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";
import { silentLogger, type Logger } from "../../../src/observe/logger.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connect(
  options: Omit<HttpUpstreamOptions, "maxMessageBytes"> & { maxMessageBytes?: number },
): Promise<{ transport: StreamableHttpUpstreamTransport; got: Collected }> {
  const transport = new StreamableHttpUpstreamTransport({
    maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    ...options,
  });
  const got = collect(transport);
  await transport.start();
  cleanups.push(() => transport.close());
  return { transport, got };
}

async function initialize(transport: StreamableHttpUpstreamTransport, got: Collected): Promise<void> {
  await transport.send(INITIALIZE(1));
  expect((await got.response(1)).result).toMatchObject({
    protocolVersion: "2025-06-18",
    serverInfo: { name: "upstream-fixture" },
  });
  await transport.send(INITIALIZED);
}

const call = (id: string | number, name: string, args: Record<string, unknown> = {}): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Asked {
  id?: number;
  method: string;
  params?: { name?: string };
}

/**
 * A hand-written streamable HTTP server at a free port (closed after the test): `initialize` is
 * answered as JSON with session "s1", a notification (no id) with 202; every other POST by
 * `answer`. Resolves with its URL.
 */
async function handWrittenServer(answer: (asked: Asked, res: ServerResponse) => void): Promise<string> {
  const server = createHttpServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      if (req.method !== "POST") return void res.writeHead(405).end();
      const asked = JSON.parse(body) as Asked;
      if (asked.id === undefined) return void res.writeHead(202).end();
      if (asked.method !== "initialize") return answer(asked, res);
      const result = { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "upstream-fixture" } };
      res
        .writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: asked.id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe("StreamableHttpUpstreamTransport against the SDK's StreamableHTTPServerTransport", () => {
  it("initializes with a session, lists and calls tools (SSE responses), notifications both ways, GET stream, DELETE on close", async () => {
    const fixture = await startStreamableHttpFixture();
    cleanups.push(fixture.close);
    const { transport, got } = await connect({ url: fixture.url, headers: { Authorization: "Bearer static-token" } });
    await initialize(transport, got);
    const session = transport.sessionId;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);

    await transport.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(((await got.response(2)).result as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual([
      "echo",
      "big",
      "notify",
      "chatter",
      "announce",
      "received",
    ]);

    // A server notification tied to a request arrives on that request's POST stream, before its response.
    await transport.send(call(3, "notify"));
    await got.response(3);
    const related = got.messages.findIndex((m) => "method" in m && m.method === "notifications/message");
    expect(related).toBeGreaterThan(-1);
    expect(related).toBeLessThan(got.messages.findIndex((m) => "id" in m && m.id === 3));

    // An unrelated one arrives on the GET stream, opened after notifications/initialized.
    await fixture.getStreamOpen;
    await transport.send(call(4, "announce"));
    await got.next(
      (m) =>
        "method" in m &&
        m.method === "notifications/message" &&
        (m.params as { data?: unknown }).data === "unsolicited",
    );

    // Client → server notification.
    await transport.send({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
    await transport.send(call(5, "received"));
    expect((await got.response(5)).result).toMatchObject({
      content: [{ text: JSON.stringify(["notifications/roots/list_changed"]) }],
    });

    const posts = fixture.requests.filter((r) => r.method === "POST");
    expect(posts[0]?.headers["mcp-session-id"]).toBeUndefined();
    expect(posts[0]?.headers["mcp-protocol-version"]).toBeUndefined();
    for (const post of posts.slice(1)) {
      expect(post.headers["mcp-session-id"]).toBe(session);
      expect(post.headers["mcp-protocol-version"]).toBe("2025-06-18");
    }
    for (const request of fixture.requests) expect(request.headers.authorization).toBe("Bearer static-token");
    expect(
      posts.every(
        (p) =>
          p.headers.accept === "application/json, text/event-stream" &&
          p.headers["content-type"] === "application/json",
      ),
    ).toBe(true);
    expect(fixture.requests.find((r) => r.method === "GET")?.headers.accept).toBe("text/event-stream");

    await transport.close();
    expect(got.isClosed()).toBe(true);
    expect(fixture.deletedSessions).toEqual([session]);
    expect(got.problems).toEqual([]);
  });

  it("reads application/json responses (enableJsonResponse)", async () => {
    const fixture = await startStreamableHttpFixture({ enableJsonResponse: true });
    cleanups.push(fixture.close);
    const { transport, got } = await connect({ url: fixture.url });
    await initialize(transport, got);
    await transport.send(call("j", "echo", { text: "héllo 😀" }));
    expect((await got.response("j")).result).toEqual({ content: [{ type: "text", text: "héllo 😀" }] });
  });

  it("receives a 50 MiB result over an SSE response", async () => {
    const fixture = await startStreamableHttpFixture();
    cleanups.push(fixture.close);
    const { transport, got } = await connect({ url: fixture.url });
    await initialize(transport, got);
    const size = 50 * 1024 * 1024;
    const started = performance.now();
    await transport.send(call("big", "big", { bytes: size }));
    const response = await got.response("big", 60_000);
    console.log(`streamable HTTP upstream: 50 MiB tools/call result in ${(performance.now() - started).toFixed(0)} ms`);
    expect((response.result as { content: Array<{ text: string }> }).content[0]?.text.length).toBe(size);
    got.messages.length = 0;
  });

  it.each([
    ["an SSE event", false],
    ["a JSON answer whose id comes last (as the SDK writes it)", true],
  ])("reports %s over maxMessageBytes as too-large with its POST's id, and answers nothing twice", async (_, json) => {
    const fixture = await startStreamableHttpFixture({ enableJsonResponse: json });
    cleanups.push(fixture.close);
    const { transport, got } = await connect({ url: fixture.url, maxMessageBytes: 64 * 1024 });
    await initialize(transport, got);
    await transport.send(call(9, "big", { bytes: 100_000 }));
    expect(await got.nextProblem()).toMatchObject({ kind: "too-large", id: 9 });
    await transport.send(call(10, "echo", { text: "after" }));
    await got.response(10);
    expect(got.messages.some((m) => "id" in m && m.id === 9)).toBe(false);
  });

  it("passes the stateless 2026-07-28 protocol through: forwarded mcp-* headers, no initialize, no session", async () => {
    const fixture = await startStatelessFixture();
    cleanups.push(fixture.close);
    const { transport, got } = await connect({ url: fixture.url });
    const forwardHeaders = {
      "mcp-protocol-version": "2026-07-28",
      "Mcp-Method": "tools/list",
      "mcp-session-id": "host-session",
      authorization: "Bearer host-token-for-proxy",
    };
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { forwardHeaders });
    expect((await got.response(1)).result).toEqual({
      method: "tools/list",
      mcpMethod: "tools/list",
      futureField: { kept: true },
    });
    await transport.send(
      { jsonrpc: "2.0", method: "notifications/whatever" },
      { forwardHeaders: { "mcp-protocol-version": "2026-07-28" } },
    );
    // Without forwarded headers the version seen last is still sent.
    await transport.send({ jsonrpc: "2.0", id: 2, method: "resources/list" });
    expect((await got.response(2)).result).toMatchObject({ method: "resources/list" });
    const posts = fixture.requests.filter((r) => r.method === "POST");
    expect(posts).toHaveLength(3);
    for (const post of posts) {
      expect(post.headers["mcp-session-id"]).toBeUndefined();
      expect(post.headers.authorization).toBeUndefined();
      expect(post.headers["mcp-protocol-version"]).toBe("2026-07-28");
    }
    expect(transport.sessionId).toBeUndefined();
    expect(got.errors).toEqual([]);
  });

  it("answers a request with a JSON-RPC error when the upstream answers 500, naming URL and status, never header values", async () => {
    const fixture = await startStatusFixture(500);
    cleanups.push(fixture.close);
    const { transport, got } = await connect({
      url: `${fixture.url}?api_key=query-secret`,
      headers: { Authorization: "Bearer header-secret" },
    });
    await transport.send(call(7, "echo", { text: "x" }));
    const response = await got.response(7);
    expect(response.error?.code).toBe(JSONRPC.UPSTREAM_UNAVAILABLE);
    expect(response.error?.message).toBe(
      `upstream ${fixture.url} answered POST tools/call with HTTP 500 Internal Server Error: upstream is having a bad day`,
    );
    expect((await got.nextError()).message).toBe(response.error?.message);
    expect(JSON.stringify([response, got.errors.map((e) => e.message)])).not.toMatch(/secret/);
    // A notification that fails has nobody to answer: onerror only.
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect((await got.nextError()).message).toContain("HTTP 500");
    expect(got.messages).toHaveLength(1);
  });

  it("an answer that is not JSON (an HTML page sent as application/json, a message of the server's own over the limit) is named so; a 202 to a request is logged", async () => {
    // Answers tools/call "page" with an HTML body and "accepted" with 202 and nothing.
    const url = await handWrittenServer((asked, res) => {
      if (asked.params?.name === "accepted") return void res.writeHead(202).end();
      const headers = { "content-type": "application/json", "mcp-session-id": "s1" };
      if (asked.params?.name === "asks") {
        // A request of the server's own, over maxMessageBytes, under the id of the request it answers.
        const params = { messages: [{ role: "user", content: { type: "text", text: "a".repeat(100_000) } }] };
        const own = { jsonrpc: "2.0", id: asked.id, method: "sampling/createMessage", params };
        return void res.writeHead(200, headers).end(JSON.stringify(own));
      }
      if (asked.params?.name === "notice") {
        // A message of the server's own, over maxMessageBytes, where the answer should be.
        const params = { level: "info", data: "n".repeat(100_000) };
        return void res.writeHead(200, headers).end(JSON.stringify({ jsonrpc: "2.0", method: "notice", params }));
      }
      res.writeHead(200, headers).end("<html><body>502 Bad Gateway</body></html>");
    });
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (msg) => warnings.push(msg), child: () => logger };
    const { transport, got } = await connect({ url, logger, openServerStream: false, maxMessageBytes: 64 * 1024 });
    await initialize(transport, got);
    await transport.send(call(7, "page"));
    const response = await got.response(7);
    expect(response.error?.message).toBe(
      `upstream ${url} answered POST tools/call with a JSON body that could not be read (invalid-json)`,
    );
    for (const [id, name] of [
      [6, "notice"],
      [5, "asks"],
    ] as const) {
      await transport.send(call(id, name));
      expect((await got.response(id)).error?.message, name).toMatch(
        /answered POST tools\/call with a JSON body of \d+ bytes, over limits\.maxMessageBytes$/,
      );
    }
    await transport.send(call(8, "accepted"));
    for (const deadline = Date.now() + 5_000; warnings.length < 2 && Date.now() < deadline; )
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(warnings).toContain("upstream answered a request with 202 and no body; its answer may never come");
  });

  it("an answer over maxMessageBytes is known by its start however it is written: an SSE event in many data lines, a JSON body in one chunk or many", async () => {
    const pad = "p".repeat(100_000);
    const url = await handWrittenServer((asked, res) => {
      const headers = { "mcp-session-id": "s1" };
      if (asked.params?.name === "json-pieces") {
        // Written in pieces the client reads one by one; the one that goes over the limit begins
        // with what, glued to the first few, would read as the top of another answer.
        const pieces = [
          "{",
          '"jsonrpc"',
          ":",
          '"2.0",',
          `"result":{"structuredContent":{"x":"${"a".repeat(1000)}","y":{`,
          `"id":99,"result":"${"b".repeat(3000)}"}}},`,
          `"content":[]},"id":${asked.id}}`,
        ];
        res.writeHead(200, { ...headers, "content-type": "application/json" });
        void (async () => {
          for (const piece of pieces) {
            res.write(piece);
            await new Promise((resolve) => setTimeout(resolve, 15));
          }
          res.end();
        })();
        return;
      }
      if (asked.params?.name === "json") {
        // One write, one chunk: the whole body is over the limit at its first read.
        return void res
          .writeHead(200, { ...headers, "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: asked.id, result: { pad: pad.slice(0, 5000) } }));
      }
      // SSE: the answer's JSON cut over data lines (joined with LF: still JSON), its id last,
      // alone on its line, or in the first lines.
      const lines =
        asked.params?.name === "lines-id-last"
          ? ['{"jsonrpc":"2.0","result":{', `"pad":"${pad}"},`, `"id":${asked.id}}`]
          : ["{", `"jsonrpc":"2.0","id":${asked.id},`, `"result":{"pad":"${pad}"}`, "}"];
      res.writeHead(200, { ...headers, "content-type": "text/event-stream" });
      res.end(`event: message\n${lines.map((line) => `data: ${line}`).join("\n")}\n\n`);
    });
    // The JSON body is small enough to come in one chunk, over a limit smaller still.
    const small = await connect({ url, openServerStream: false, maxMessageBytes: 2000 });
    await initialize(small.transport, small.got);
    const { transport, got } = await connect({ url, openServerStream: false, maxMessageBytes: 64 * 1024 });
    await initialize(transport, got);
    for (const [id, name] of [
      [11, "json"],
      [14, "json-pieces"],
      [12, "lines"],
      [13, "lines-id-last"],
    ] as const) {
      const on = name.startsWith("json") ? small : { transport, got };
      await on.transport.send(call(id, name));
      const problem = await on.got.nextProblem();
      expect(problem, name).toMatchObject({ kind: "too-large", id });
      // Taken for the answer it is (the proxy then answers the request with -32003), not a message of the server's own.
      expect(problem.asks, name).toBeUndefined();
    }
  });

  it("an SSE event over maxMessageBytes of another type than message answers nothing: the real answer after it is delivered", async () => {
    const url = await handWrittenServer((asked, res) => {
      const echo = JSON.stringify({ jsonrpc: "2.0", id: asked.id, result: { pad: "d".repeat(5000) } });
      const answer = JSON.stringify({ jsonrpc: "2.0", id: asked.id, result: { content: [] } });
      res.writeHead(200, { "mcp-session-id": "s1", "content-type": "text/event-stream" });
      res.end(`event: debug\ndata: ${echo}\n\nevent: message\ndata: ${answer}\n\n`);
    });
    const { transport, got } = await connect({ url, openServerStream: false, maxMessageBytes: 2000 });
    await initialize(transport, got);
    await transport.send(call(21, "echo"));
    expect(await got.response(21)).toEqual({ jsonrpc: "2.0", id: 21, result: { content: [] } });
    expect(got.problems).toEqual([]);
  });

  it("never quotes back what it sent: header values and the injected fetch's secrets echoed in an error are redacted", async () => {
    // A server that echoes the request's credentials in its error body and status text.
    let bodyKind: "text" | "json" | "unreadable" | "fetch-throws" | "long-reason" = "text";
    const server = createHttpServer((req, res) => {
      req.resume();
      const echo = `auth=${req.headers.authorization} key=${req.headers["x-api-key"]} oauth=${req.headers["x-oauth"]} url=${req.url}`;
      const token = String(req.headers.authorization).split(" ")[1];
      if (bodyKind === "unreadable") {
        res.writeHead(200, { "content-type": "application/json" }).end(`not JSON: ${echo}`);
        return;
      }
      if (bodyKind === "long-reason") {
        // A reason phrase of kilobytes, the secret at its end: cut, and the cut never shows it.
        res.writeHead(503, `${"x".repeat(95)} ${token} ${"y".repeat(8000)}`).end();
      } else if (bodyKind === "text") {
        res.writeHead(500, `Broken ${token}`, { "content-type": "text/plain" }).end(`${echo} token=${token}`);
      } else {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: `refused ${echo}` } }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const { transport, got } = await connect({
      url: `${url}?api_key=query-secret-4`,
      headers: { Authorization: "Bearer header-secret-1", "X-Api-Key": "key-secret-2" },
      // What an OAuth layer does: its own token goes out in a header the configuration never named.
      fetch: (target, init) => {
        // A token fetch cannot send (a control character in it) is quoted in fetch's own error.
        if (bodyKind === "fetch-throws")
          throw new TypeError('Headers.set: "Bearer oauth-secret-3\r\nX-Injected: yes" is an invalid header value.');
        return fetch(target, {
          ...init,
          headers: { ...(init?.headers as Record<string, string>), "x-oauth": "oauth-secret-3" },
        });
      },
      secrets: () => ["oauth-secret-3"],
    });
    await transport.send(call(7, "echo", { text: "x" }));
    const text = (await got.response(7)).error?.message;
    expect(text).toBe(
      `upstream ${url} answered POST tools/call with HTTP 500 Broken [redacted]: ` +
        "auth=[redacted] key=[redacted] oauth=[redacted] url=/mcp?api_key=[redacted] token=[redacted]",
    );
    bodyKind = "json";
    await transport.send(call(8, "echo", { text: "x" }));
    expect((await got.response(8)).error?.message).toBe(
      `upstream ${url} answered POST tools/call with HTTP 401 Unauthorized: ` +
        "refused auth=[redacted] key=[redacted] oauth=[redacted] url=/mcp?api_key=[redacted]",
    );
    bodyKind = "long-reason";
    await transport.send(call(20, "echo", { text: "x" }));
    expect((await got.response(20)).error?.message).toBe(
      `upstream ${url} answered POST tools/call with HTTP 503 ${"x".repeat(95)} [red`,
    );
    // An answer that cannot be read is reported with an excerpt (the log quotes it): redacted too.
    bodyKind = "unreadable";
    await transport.send(call(9, "echo", { text: "x" }));
    await expect.poll(() => got.problems.length, { timeout: 5_000 }).toBe(1);
    expect(got.problems[0]?.excerpt).toContain("auth=[redacted]");
    bodyKind = "fetch-throws";
    await transport.send(call(10, "echo", { text: "x" }));
    expect((await got.response(10)).error?.message).toMatch(
      /^cannot reach upstream .* \(POST tools\/call\): Headers\.set: "Bearer \[redacted\]/,
    );
    expect(JSON.stringify([got.messages, got.problems, got.errors.map((e) => e.message)])).not.toMatch(/secret/);
  });

  it.each([undefined, 0, 50])(
    "what the host sends right after initialize (piped at once) waits for its session id (ackTimeoutMs %s)",
    async (ackTimeoutMs) => {
      const seen: Array<{ method: string; session: string | undefined }> = [];
      const server = createHttpServer(async (req, res) => {
        let body = "";
        for await (const chunk of req) body += chunk;
        if (req.method !== "POST") return res.writeHead(405).end();
        const message = JSON.parse(body) as { id?: number; method?: string };
        seen.push({
          method: message.method ?? "response",
          session: req.headers["mcp-session-id"] as string | undefined,
        });
        if (message.method === "initialize") {
          // A server that takes a moment to set a session up.
          await new Promise((resolve) => setTimeout(resolve, 200));
          const result = { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "upstream-fixture" } };
          return res
            .writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" })
            .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
        }
        if (req.headers["mcp-session-id"] !== "s1") return res.writeHead(400).end("Bad Request: no valid session");
        if (message.id === undefined) return res.writeHead(202).end();
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { content: [] } }));
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
      const { transport, got } = await connect({ url, openServerStream: false, ackTimeoutMs });
      await Promise.all([transport.send(INITIALIZE(1)), transport.send(INITIALIZED), transport.send(call(2, "echo"))]);
      expect((await got.response(2)).result).toEqual({ content: [] });
      expect(seen).toEqual([
        { method: "initialize", session: undefined },
        { method: "notifications/initialized", session: "s1" },
        { method: "tools/call", session: "s1" },
      ]);
      expect(got.errors).toEqual([]);
    },
  );

  it("reads a server that compresses its answers unasked (gzip JSON, br SSE) as going direct does", async () => {
    const server = createHttpServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      if (req.method !== "POST") return res.writeHead(405).end();
      const message = JSON.parse(body) as { id?: number; method: string };
      if (message.id === undefined) return res.writeHead(202).end();
      const answer = JSON.stringify({
        jsonrpc: "2.0",
        id: message.id,
        result:
          message.method === "initialize"
            ? { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "upstream-fixture" } }
            : { content: [{ type: "text", text: "ü".repeat(3000) }] },
      });
      if (message.method === "initialize")
        return res
          .writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "mcp-session-id": "s1" })
          .end(gzipSync(answer));
      res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "br" });
      res.end(brotliCompressSync(`event: message\ndata: ${answer}\n\n`));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const { transport, got } = await connect({ url, openServerStream: false });
    await initialize(transport, got);
    await transport.send(call(2, "echo"));
    expect((await got.response(2)).result).toEqual({ content: [{ type: "text", text: "ü".repeat(3000) }] });
    expect(got.problems).toEqual([]);
  });

  it("ends the connection when the server answers 404 for its session (the session is gone), without a DELETE", async () => {
    const fixture = await startStreamableHttpFixture({ enableJsonResponse: true });
    cleanups.push(fixture.close);
    const { transport, got } = await connect({ url: fixture.url, openServerStream: false });
    await initialize(transport, got);
    expect(transport.sessionId).toBeDefined();
    await fixture.endSessions();
    await transport.send(call(7, "echo", { text: "x" }));
    const response = await got.response(7);
    expect(response.error?.code).toBe(JSONRPC.UPSTREAM_UNAVAILABLE);
    expect(response.error?.message).toMatch(/HTTP 404 Not Found: .*; the upstream ended its session$/);
    await expect.poll(() => got.isClosed(), { timeout: 2_000 }).toBe(true);
    expect(fixture.deletedSessions).toEqual([]);
    expect(fixture.requests.filter((r) => r.method === "DELETE")).toEqual([]);
  });

  it("start() rejects for an unreachable port; a request after the upstream went away gets a JSON-RPC error", async () => {
    const port = await freePort();
    const unreachable = new StreamableHttpUpstreamTransport({
      url: `http://127.0.0.1:${port}/mcp`,
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    await expect(unreachable.start()).rejects.toMatchObject({
      code: "UPSTREAM_UNREACHABLE",
      message: expect.stringContaining(`cannot reach upstream http://127.0.0.1:${port}/mcp`),
    });

    const fixture = await startStreamableHttpFixture();
    const { transport, got } = await connect({ url: fixture.url });
    await initialize(transport, got);
    await fixture.close();
    await transport.send(call(8, "echo", { text: "x" }));
    const response = await got.response(8);
    expect(response.error?.code).toBe(JSONRPC.UPSTREAM_UNAVAILABLE);
    expect(response.error?.message).toMatch(/cannot reach upstream .* \(POST tools\/call\): .*ECONNREFUSED/);
  });

  it("uses the injected fetch", async () => {
    const seen: string[] = [];
    const fakeUpstream: HttpUpstreamOptions["fetch"] = async (url, init) => {
      seen.push(`${init?.method} ${String(url)}`);
      if (init?.method === "OPTIONS") return new Response(null, { status: 204 });
      const message = JSON.parse(String(init?.body)) as { id: number };
      return new Response(
        JSON.stringify([
          { jsonrpc: "2.0", id: message.id, result: { a: 1 } },
          { jsonrpc: "2.0", method: "notifications/x" },
        ]),
        { headers: { "content-type": "application/json" } },
      );
    };
    const { transport, got } = await connect({ url: "http://upstream.invalid/mcp", fetch: fakeUpstream });
    await transport.send({ jsonrpc: "2.0", id: 1, method: "x" });
    // An array answering one request (not a batch) is taken apart; what follows the answer
    // still belongs to that request (its POST's stream, not another's).
    expect((await got.response(1)).result).toEqual({ a: 1 });
    const notification = await got.next((m) => "method" in m && m.method === "notifications/x");
    expect(relatedRequestOf(got.extraOf(notification))).toBe(1);
    expect(seen).toEqual(["OPTIONS http://upstream.invalid/mcp", "POST http://upstream.invalid/mcp"]);
  });
});
