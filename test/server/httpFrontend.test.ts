/**
 * The HTTP listener: routes, health/metrics/report, and the security hooks (Origin, Host,
 * bearer tokens, maxSessions), on a real socket with the SDK's real clients.
 */
import { request } from "node:http";
import { connect } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { Logger } from "../../src/observe/logger.js";
import { hostName } from "../../src/server/requestGuard.js";
import { connectClient, startFrontend, until, type RunningFrontend } from "./helpers/frontend.js";

const running: RunningFrontend[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.close();
});

async function start(overrides: Parameters<typeof startFrontend>[0] = {}): Promise<RunningFrontend> {
  const r = await startFrontend(overrides);
  running.push(r);
  return r;
}

const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

function postInit(r: RunningFrontend, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${r.url}/mcp/demo`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: JSON.stringify(INIT),
  });
}

/** A raw GET with a chosen Host header (fetch does not let a caller set Host). */
function getWithHost(r: RunningFrontend, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: r.port, path, headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Opens a WebSocket; resolves with the HTTP status the upgrade was refused with, or 101. */
function wsStatus(r: RunningFrontend, path: string, headers: Record<string, string> = {}): Promise<number> {
  const socket = new WebSocket(`ws://127.0.0.1:${r.port}${path}`, ["mcp"], { headers });
  return new Promise((resolve, reject) => {
    socket.once("open", () => {
      socket.close();
      resolve(101);
    });
    socket.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    socket.once("error", reject);
  });
}

describe("routes", () => {
  it("serves /healthz from the callback, and /metrics, /report only when given", async () => {
    const r = await start({ health: async () => ({ status: "ok", servers: { demo: { status: "up" } } }) });
    const health = await fetch(`${r.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok", servers: { demo: { status: "up" } } });
    expect((await fetch(`${r.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${r.url}/report`)).status).toBe(404);

    const r2 = await start({
      metrics: async () => ({ contentType: "text/plain; version=0.0.4", body: "mcpn_bytes_saved_total 5\n" }),
      report: () => ({ contentType: "text/html; charset=utf-8", body: "<h1>report</h1>" }),
    });
    const metrics = await fetch(`${r2.url}/metrics`);
    expect(metrics.headers.get("content-type")).toBe("text/plain; version=0.0.4");
    expect(await metrics.text()).toBe("mcpn_bytes_saved_total 5\n");
    expect(await (await fetch(`${r2.url}/report`)).text()).toBe("<h1>report</h1>");
  });

  it("answers unknown paths and unknown server names 404 with a JSON error body", async () => {
    const r = await start();
    for (const path of ["/nope", "/mcp/other", "/mcp/demo/extra", "/mcp/%E0%A4%A"]) {
      const res = await fetch(`${r.url}${path}`, { method: "POST", body: "{}" });
      expect(res.status, path).toBe(404);
      const body = (await res.json()) as { error: { message: string } };
      expect(body.error.message).toMatch(/Not found/);
    }
    expect(await wsStatus(r, "/ws/other")).toBe(404);
    expect((await fetch(`${r.url}/ws/demo`)).status).toBe(426);
  });

  it("answers 406 to a session's GET whose Accept rules out text/event-stream, and streams when it allows it", async () => {
    const r = await start();
    const init = await postInit(r);
    const sessionId = init.headers.get("mcp-session-id") ?? "";
    expect(sessionId).not.toBe("");
    const get = (accept: string) =>
      fetch(`${r.url}/mcp/demo`, {
        headers: { accept, "mcp-session-id": sessionId },
        signal: AbortSignal.timeout(5000),
      });
    const refused = await get("application/json");
    expect(refused.status).toBe(406);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/text\/event-stream/);
    expect((await get("text/event-stream;q=0, application/json")).status).toBe(406);
    const controller = new AbortController();
    const stream = await fetch(`${r.url}/mcp/demo`, {
      headers: { accept: "text/event-stream", "mcp-session-id": sessionId },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    controller.abort();
  });

  it("routes a request target in absolute form (RFC 9112 §3.2.2) as its path: probes, the door and sessions alike", async () => {
    const r = await start({ bearerTokens: ["s3cret"], health: async () => ({ status: "ok" }) });
    const send = (target: string, method: string, headers: Record<string, string>, body?: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port: r.port, method, path: target, headers }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on("error", reject);
        req.end(body);
      });
    const origin = `http://127.0.0.1:${r.port}`;
    expect(await send(`${origin}/healthz`, "GET", {})).toEqual({ status: 200, body: '{"status":"ok"}' });
    expect((await send(`${origin}/healthz?probe=1`, "GET", {})).status).toBe(200);
    const posted = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    expect((await send(`${origin}/mcp/demo`, "POST", posted, JSON.stringify(INIT))).status).toBe(401);
    const served = await send(
      `${origin}/mcp/demo`,
      "POST",
      { ...posted, authorization: "Bearer s3cret" },
      JSON.stringify(INIT),
    );
    expect(served.status).toBe(200);
    expect(served.body).toContain('"protocolVersion"');
    expect((await send(`${origin}/nope`, "GET", { authorization: "Bearer s3cret" })).status).toBe(404);
  });

  it("routes percent-encoded server names", async () => {
    const r = await start({ serverNames: ["my server"] });
    expect(
      (
        await fetch(`${r.url}/mcp/my%20server`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify(INIT),
        })
      ).status,
    ).toBe(200);
  });
});

describe("Origin and Host checks", () => {
  it("refuses a foreign Origin with 403, allows loopback, listed, and absent origins", async () => {
    const r = await start({ allowedOrigins: ["https://app.example.com"] });
    const evil = await postInit(r, { origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    expect(((await evil.json()) as { error: { message: string } }).error.message).toMatch(
      /Origin "https:\/\/evil.example" is not allowed; add it to allowedOrigins/,
    );
    expect((await postInit(r, { origin: "null" })).status).toBe(403);
    expect((await postInit(r, { origin: "http://localhost:3000" })).status).toBe(200);
    expect((await postInit(r, { origin: "http://127.0.0.1:5173" })).status).toBe(200);
    expect((await postInit(r, { origin: "https://app.example.com" })).status).toBe(200);
    expect((await postInit(r)).status).toBe(200);
    expect(await wsStatus(r, "/ws/demo", { origin: "https://evil.example" })).toBe(403);
    expect(r.sessions).toHaveLength(4);
  });

  it("a page on another local port drives nothing: no WebSocket, no POST a browser sends without asking", async () => {
    const r = await start({ allowedOrigins: ["https://app.example.com"] });
    const page = { origin: "http://localhost:5173" };
    expect(await wsStatus(r, "/ws/demo", page)).toBe(403);
    // An event stream (EventSource: no preflight either) would open a session.
    expect((await fetch(`${r.url}/sse/demo`, { headers: page })).status).toBe(403);
    expect(await wsStatus(r, "/ws/demo", { origin: "https://app.example.com" })).toBe(101);
    expect(await wsStatus(r, "/ws/demo")).toBe(101);
    const simple = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${r.url}/mcp/demo`, {
        method: "POST",
        headers: { accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify(INIT),
      });
    const refused = await simple({ ...page, "content-type": "text/plain" });
    expect(refused.status).toBe(415);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /browser page \(Origin "http:\/\/localhost:5173"\) must send Content-Type: application\/json/,
    );
    expect((await simple({ ...page, "content-type": "application/x-www-form-urlencoded" })).status).toBe(415);
    expect((await simple(page)).status).toBe(415);
    // The two WebSockets let through, nothing else yet.
    expect(r.sessions).toHaveLength(2);
    // Not from a page (no Origin), or declared JSON (a browser sends it only after a preflight): served.
    expect((await simple({ "content-type": "text/plain" })).status).toBe(200);
    expect((await simple({ ...page, "content-type": "application/json; charset=utf-8" })).status).toBe(200);
    expect(r.sessions).toHaveLength(4);
  });

  it("a POST body with a content coding is refused with 415 naming it, before any session; identity is read", async () => {
    const r = await start();
    const { gzipSync } = await import("node:zlib");
    const gzipped = await fetch(`${r.url}/mcp/demo`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", "content-encoding": "gzip" },
      body: gzipSync(JSON.stringify(INIT)),
    });
    expect(gzipped.status).toBe(415);
    expect(gzipped.headers.get("accept-encoding")).toBe("identity");
    expect(((await gzipped.json()) as { error: { message: string } }).error.message).toBe(
      'Content-Encoding "gzip" is not accepted: send the body uncompressed',
    );
    // A wrong header on a plain body is not ignored either; /messages is guarded the same way.
    expect((await postInit(r, { "content-encoding": "br" })).status).toBe(415);
    const messages = await fetch(`${r.url}/messages/demo?sessionId=x`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "deflate" },
      body: "{}",
    });
    expect(messages.status).toBe(415);
    expect(r.sessions).toHaveLength(0);
    expect((await postInit(r, { "content-encoding": "identity" })).status).toBe(200);
  });

  it("refuses a Host that is not allowed (DNS rebinding), on every path", async () => {
    const r = await start();
    expect((await getWithHost(r, "/healthz", "evil.example")).status).toBe(403);
    const refused = JSON.parse((await getWithHost(r, "/healthz", "evil.example:8808")).body) as {
      error: { message: string };
    };
    expect(refused.error.message).toBe('Host header "evil.example:8808" is not allowed; add it to allowedHosts');
    expect((await getWithHost(r, "/healthz", `localhost:${r.port}`)).status).toBe(200);
    expect((await getWithHost(r, "/healthz", "[::1]:1")).status).toBe(200);
    expect(await wsStatus(r, "/ws/demo", { host: "evil.example" })).toBe(403);

    const opened = await start({ allowedHosts: ["proxy.internal:8808", "sidecar"] });
    expect((await getWithHost(opened, "/healthz", "proxy.internal:8808")).status).toBe(200);
    expect((await getWithHost(opened, "/healthz", "sidecar:1234")).status).toBe(200);
    expect((await getWithHost(opened, "/healthz", "proxy.internal:9999")).status).toBe(403);
    expect((await getWithHost(opened, "/healthz", "localhost")).status).toBe(403);
  });

  it("reads host names the way Host headers write them", () => {
    expect(hostName("LocalHost:80")).toBe("localhost");
    expect(hostName("[::1]:8808")).toBe("[::1]");
    expect(hostName("[::1]")).toBe("[::1]");
    expect(hostName("example.com")).toBe("example.com");
    expect(hostName("example.com:")).toBeUndefined();
  });
});

describe("CORS", () => {
  it("grants CORS only to listed origins, answering preflights without credentials", async () => {
    const r = await start({ allowedOrigins: ["https://app.example.com"], bearerTokens: ["s3cret"] });
    const preflight = (origin: string): Promise<Response> =>
      fetch(`${r.url}/mcp/demo`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type, mcp-session-id",
        },
      });
    const listed = await preflight("https://app.example.com");
    expect(listed.status).toBe(204);
    expect(listed.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(listed.headers.get("access-control-allow-headers")).toMatch(/mcp-session-id/);
    // A page's own header (the Inspector's API key header) is granted to a listed page too.
    const custom = await fetch(`${r.url}/mcp/demo`, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,mcp-protocol-version,x-mcp-proxy-auth, x-api-key",
      },
    });
    expect(custom.headers.get("access-control-allow-headers")).toMatch(/(^|, )x-mcp-proxy-auth, x-api-key$/);
    const loopback = await preflight("http://localhost:3000");
    expect(loopback.status).toBe(204);
    expect(loopback.headers.get("access-control-allow-origin")).toBeNull();
    expect((await preflight("https://evil.example")).status).toBe(403);

    const init = await postInit(r, { origin: "https://app.example.com", authorization: "Bearer s3cret" });
    expect(init.status).toBe(200);
    expect(init.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(init.headers.get("access-control-expose-headers")).toMatch(/mcp-session-id/);
    expect(init.headers.get("access-control-expose-headers")).toMatch(/mcp-protocol-version/);

    // An origin written differently from the list (case, default port) is granted as normalized.
    const odd = await preflight("HTTPS://App.Example.COM:443");
    expect(odd.status).toBe(204);
    expect(odd.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
  });
});

describe("bearer tokens", () => {
  it("answers 401 with WWW-Authenticate without a valid token, serves with one, and exempts /healthz", async () => {
    const r = await start({ bearerTokens: ["first-token", "s3cret"] });
    const none = await postInit(r);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="mcp-normalizer"');
    const wrong = await postInit(r, { authorization: "Bearer s3cre" });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    expect((await postInit(r, { authorization: "Basic s3cret" })).status).toBe(401);
    expect((await fetch(`${r.url}/healthz`)).status).toBe(200);
    expect(await wsStatus(r, "/ws/demo")).toBe(401);
    expect(await wsStatus(r, "/ws/demo", { authorization: "Bearer s3cret" })).toBe(101);

    const transport = new StreamableHTTPClientTransport(new URL(`${r.url}/mcp/demo`), {
      requestInit: { headers: { authorization: "bearer s3cret" } },
    });
    const client = await connectClient(transport);
    try {
      expect((await client.callTool({ name: "echo", arguments: { text: "authorized" } })).content).toEqual([
        { type: "text", text: "authorized" },
      ]);
    } finally {
      await client.close();
    }
  });
});

/** A logger keeping each warn line's message. */
function warnings(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message: string) => void lines.push(message),
    error: () => undefined,
    child: () => logger,
  } as unknown as Logger;
  return { logger, lines };
}

describe("refused requests", () => {
  /**
   * An upload of 10 GiB (`declared`, or chunked: `"chunked"`) the proxy refuses: its answer's
   * first bytes and how much got sent before the cut.
   */
  async function refusedUpload(
    r: RunningFrontend,
    head: string,
    declared = String(10 * 1024 ** 3),
  ): Promise<{ answer: string; sent: number }> {
    const socket = connect(r.port, "127.0.0.1");
    let answer = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("error", () => undefined);
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    const length = declared === "chunked" ? "transfer-encoding: chunked" : `content-length: ${declared}`;
    socket.write(`${head}\r\nhost: 127.0.0.1\r\n${length}\r\n\r\n`);
    const spaces = Buffer.alloc(1024 * 1024, 0x20);
    const chunk =
      declared === "chunked"
        ? Buffer.concat([Buffer.from(`${spaces.length.toString(16)}\r\n`), spaces, Buffer.from("\r\n")])
        : spaces;
    let sent = 0;
    const started = Date.now();
    // Writes until the proxy cuts the connection (or 256 MiB: read on and on, as before).
    while (!socket.destroyed && sent < 256 * 1024 * 1024 && Date.now() - started < 20_000) {
      if (!socket.write(chunk)) {
        await Promise.race([new Promise((resolve) => socket.once("drain", resolve)), closed]);
      }
      sent += chunk.length;
    }
    socket.destroy();
    await closed;
    return { answer, sent };
  }

  it("an upload refused at the door is read no further than lets the client see its 401; the connection is cut", async () => {
    const r = await start({ bearerTokens: ["s3cret"], closeTimeoutMs: 500 });
    const { answer, sent } = await refusedUpload(r, "POST /mcp/demo HTTP/1.1");
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    // 8 MiB read and thrown away, plus what the two sockets' buffers hold.
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it("a body sent far past the limit gets its 413 before its end, naming it; then the connection is cut", async () => {
    const r = await start({ closeTimeoutMs: 500, maxBodyBytes: 1024 * 1024 });
    // 10 GiB, and lengths past 2^53 (Node's parser takes them; as numbers they are rounded).
    for (const declared of [String(10 * 1024 ** 3), "9007199254740993", "18446744073709551615"]) {
      const started = Date.now();
      const { answer, sent } = await refusedUpload(
        r,
        "POST /mcp/demo HTTP/1.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream",
        declared,
      );
      expect(answer, declared).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer, declared).toContain("limits.maxBodyBytes (1048576 bytes)");
      // 64 MiB read and thrown away, plus what the two sockets' buffers hold.
      expect(sent, declared).toBeLessThan(128 * 1024 * 1024);
      expect(Date.now() - started, declared).toBeLessThan(10_000);
    }
  });

  it("a chunked body that runs far past the limit gets its 413 too, not a reset; then the connection is cut", async () => {
    const r = await start({ closeTimeoutMs: 500, maxBodyBytes: 1024 * 1024 });
    const { answer, sent } = await refusedUpload(
      r,
      "POST /mcp/demo HTTP/1.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream",
      "chunked",
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain("limits.maxBodyBytes");
    expect(sent).toBeLessThan(128 * 1024 * 1024);
  });

  it("so is one refused for its method or an unknown session, on /mcp and /messages", async () => {
    const r = await start({ closeTimeoutMs: 500 });
    for (const [head, status] of [
      ["PUT /mcp/demo HTTP/1.1", 405],
      ["POST /mcp/demo HTTP/1.1\r\nmcp-session-id: nope", 404],
      ["POST /messages/demo?sessionId=nope HTTP/1.1", 404],
    ] as const) {
      const { answer, sent } = await refusedUpload(r, head);
      expect(answer, head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(sent, head).toBeLessThan(64 * 1024 * 1024);
    }
  });

  it("a refused request whose small body has arrived keeps its keep-alive connection", async () => {
    const r = await start({ bearerTokens: ["s3cret"] });
    const socket = connect(r.port, "127.0.0.1");
    let answers = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (answers += chunk));
    const body = JSON.stringify(INIT);
    const post = `POST /mcp/demo HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    socket.write(post + post);
    await until(() => answers.match(/HTTP\/1\.1 401 /g)?.length === 2);
    expect(socket.destroyed).toBe(false);
    socket.destroy();
  });

  it("refused requests are logged once, then once per interval with their count", async () => {
    const { logger, lines } = warnings();
    const r = await start({ bearerTokens: ["s3cret"], logger });
    for (let i = 0; i < 200; i++) expect((await fetch(`${r.url}/metrics`)).status).toBe(401);
    expect(await wsStatus(r, "/ws/demo")).toBe(401);
    expect(lines.filter((line) => line === "request refused")).toHaveLength(1);
  });
});

describe("limits", () => {
  it("answers 503 with a JSON-RPC body once maxSessions are open, on every transport, and frees slots", async () => {
    const r = await start({ maxSessions: 1 });
    const first = await connectClient(new StreamableHTTPClientTransport(new URL(`${r.url}/mcp/demo`)));
    const full = await postInit(r);
    expect(full.status).toBe(503);
    const body = (await full.json()) as { jsonrpc: string; error: { code: number; message: string } };
    expect(body.jsonrpc).toBe("2.0");
    expect(body.error.message).toMatch(/limits\.maxSessions \(1\)/);
    expect((await fetch(`${r.url}/sse/demo`)).status).toBe(503);
    expect(await wsStatus(r, "/ws/demo")).toBe(503);
    // Stateless one-POST sessions count too.
    expect(
      (
        await fetch(`${r.url}/mcp/demo`, {
          method: "POST",
          headers: { accept: "application/json" },
          body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        })
      ).status,
    ).toBe(503);

    await (first.transport as StreamableHTTPClientTransport).terminateSession();
    await first.close();
    await until(() => r.frontend.sessionsInUse === 0);
    const second = new Client({ name: "second", version: "1" });
    await second.connect(new StreamableHTTPClientTransport(new URL(`${r.url}/mcp/demo`)));
    await second.close();
  });

  it("answers 413 to a body just over maxMessageBytes and to one far over it (then cut), and keeps serving", async () => {
    const r = await start({ maxMessageBytes: 1024 });
    expect((await fetch(`${r.url}/mcp/demo`, { method: "POST", body: "x".repeat(8 * 1024) })).status).toBe(413);
    // fetch reads the answer once it has sent its body: cut under it, it got a reset, not the 413.
    for (let i = 0; i < 8; i++) {
      const far = await fetch(`${r.url}/mcp/demo`, { method: "POST", body: "x".repeat(12 * 1024 * 1024) });
      expect(far.status).toBe(413);
    }
    expect((await fetch(`${r.url}/healthz`)).status).toBe(200);
  });

  it("answers 503 to a body that would take the bodies held at once past bodyBytesInFlight, then serves again", async () => {
    const r = await start({ maxMessageBytes: 1024 * 1024, bodyBytesInFlight: 1024 * 1024 });
    const body = JSON.stringify({ ...INIT, params: { ...INIT.params, _meta: { pad: "p".repeat(700 * 1024) } } });
    // The first upload sends all but its last byte and waits: its 700 KiB are held.
    const first = connect(r.port, "127.0.0.1");
    let firstAnswer = "";
    first.setEncoding("latin1");
    first.on("data", (chunk: string) => (firstAnswer += chunk));
    first.write(
      "POST /mcp/demo HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n" +
        `accept: application/json, text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, -1)}`,
    );
    const post = (): Promise<Response> =>
      fetch(`${r.url}/mcp/demo`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body,
      });
    // A second as large does not fit beside it (until the first's bytes have all been taken).
    let second = await post();
    for (let tries = 0; second.status === 200 && tries < 20; tries++) second = await post();
    expect(second.status).toBe(503);
    expect(((await second.json()) as { error: { message: string } }).error.message).toMatch(
      /limits\.bodyBytesInFlight \(1048576 bytes\); retry/,
    );
    first.write(body.slice(-1));
    await until(() => /\r\n\r\n\{/.test(firstAnswer));
    expect(firstAnswer).toMatch(/^HTTP\/1\.1 200 /);
    first.destroy();
    // Given back: the next one fits.
    expect((await post()).status).toBe(200);
  });

  it("takes bodyBytesInFlight as no less than the largest body allowed: one alone always fits", async () => {
    const r = await start({ maxMessageBytes: 4 * 1024 * 1024, bodyBytesInFlight: 1024 * 1024 });
    const body = JSON.stringify({ ...INIT, params: { ...INIT.params, _meta: { pad: "p".repeat(2 * 1024 * 1024) } } });
    const answer = await fetch(`${r.url}/mcp/demo`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body,
    });
    expect(answer.status).toBe(200);
  });

  it("close() ends every host session, firing each onclose", async () => {
    const r = await start();
    await connectClient(new StreamableHTTPClientTransport(new URL(`${r.url}/mcp/demo`)));
    const socket = new WebSocket(`ws://127.0.0.1:${r.port}/ws/demo`, ["mcp"]);
    await new Promise((resolve) => socket.once("open", resolve));
    await until(() => r.sessions.length === 2);
    await r.close();
    await Promise.all(r.sessions.map((s) => s.closed));
    expect(r.frontend.sessionsInUse).toBe(0);
  });
});
