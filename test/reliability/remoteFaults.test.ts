/**
 * A remote upstream that is down, slow or drops the connection: a clear error per request, a
 * configurable request timeout, reconnection for new sessions — `serve --url` in
 * front of a real SDK streamable HTTP server that the test stops, slows and cuts off.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, hostTransport, raw, type ServeProcess } from "../helpers/proxyProcess.js";
import { post } from "../badInput/mcpHttp.js";
import { getJson, initializedWs, serveConfig } from "./helpers.js";
import { startRemoteUpstream, type RemoteUpstream } from "../fixtures/upstream-servers/remoteUpstream.js";
import { listen, readBody } from "../fixtures/upstream-servers/httpFixtures.js";

/** What opening a session to `name` through `serve` came to: "connected", or why it failed. */
function sessionOpening(serve: ServeProcess, name: string): Promise<string> {
  return connect(hostTransport("mcp", { url: serve.url, name })).then(
    async (host) => {
      await host.close();
      return "connected";
    },
    (error: Error) => error.message,
  );
}

function text(result: Record<string, unknown>): string {
  return (result.content as Array<{ text: string }>)[0]!.text;
}

describe("a remote upstream", () => {
  let upstream: RemoteUpstream;
  let serve: ServeProcess;
  beforeAll(async () => {
    upstream = await startRemoteUpstream();
    serve = await serveConfig({ mcpServers: { remote: { url: upstream.url } }, limits: { requestTimeoutMs: 600 } });
  });
  afterAll(async () => {
    await serve?.stop();
    await upstream?.stop();
  });

  it("slow: the request gets a timeout error naming limits.requestTimeoutMs; the session goes on", async () => {
    const host = await connect(hostTransport("mcp", { url: serve.url, name: "remote" }));
    try {
      const started = Date.now();
      const slow = await raw(host.client, "tools/call", { name: "slow", arguments: { ms: 5000 } }).then(
        () => "answered",
        (error: Error) => error.message,
      );
      expect(slow).toMatch(/did not answer tools\/call within 600 ms \(limits\.requestTimeoutMs\)/);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(text(await raw(host.client, "tools/call", { name: "ok" }))).toBe("ok");
    } finally {
      await host.close();
    }
  });

  it("drops the connection mid-request: a clear error for that request; the session goes on", async () => {
    const host = await connect(hostTransport("mcp", { url: serve.url, name: "remote" }));
    try {
      const dropped = await raw(host.client, "tools/call", { name: "drop" }).then(
        () => "answered",
        (error: Error) => error.message,
      );
      expect(dropped).toMatch(/upstream http:\/\/127\.0\.0\.1:\d+\/mcp/);
      expect(dropped).toMatch(/fetch failed|socket|terminated|ended/i);
      expect(text(await raw(host.client, "tools/call", { name: "ok" }))).toBe("ok");
    } finally {
      await host.close();
    }
  });

  it("down: new sessions fail with an error naming the upstream and the cause; once it is back, new sessions connect again", async () => {
    const port = upstream.port;
    await upstream.stop();
    const refused = await sessionOpening(serve, "remote");
    expect(refused).toMatch(/cannot reach upstream http:\/\/127\.0\.0\.1:\d+\/mcp.*ECONNREFUSED/);
    const health = (await getJson(`${serve.url}/healthz`)).body as {
      servers: Record<string, { status: string; lastError: string }>;
    };
    expect(health.servers.remote).toMatchObject({ status: "down" });
    expect(health.servers.remote!.lastError).toContain("ECONNREFUSED");

    upstream = await startRemoteUpstream(port);
    const host = await connect(hostTransport("mcp", { url: serve.url, name: "remote" }));
    expect(text(await raw(host.client, "tools/call", { name: "ok" }))).toBe("ok");
    await host.close();
  });
});

describe("a remote upstream that restarts while a host only listens", () => {
  it("its 404 to the GET stream ends the host's session at once, named on /healthz", async () => {
    let upstream = await startRemoteUpstream();
    const serve = await serveConfig({ mcpServers: { remote: { url: upstream.url } } });
    try {
      const host = await initializedWs(serve.url, "remote");
      // The proxy's GET stream is open; the server restarts and knows no session any more.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const port = upstream.port;
      await upstream.stop();
      upstream = await startRemoteUpstream(port);
      const closed = await Promise.race([host.closed, new Promise((resolve) => setTimeout(resolve, 8_000, "open"))]);
      expect(closed, "the host's WebSocket is still open").toEqual(expect.any(Number));
      const health = (await getJson(`${serve.url}/healthz`)).body as {
        servers: Record<string, { lastError?: string }>;
      };
      expect(health.servers.remote!.lastError).toMatch(/GET stream with HTTP 404; the upstream ended its session/);
    } finally {
      await serve.stop();
      await upstream.stop();
    }
  });
});

describe("a remote upstream with no GET route (404 to every GET, where the spec says 405)", () => {
  it("keeps its sessions: they are served without a GET stream", async () => {
    const answerPosts = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      const asked = (await readBody(req)) as { id?: unknown; method: string } | undefined;
      if (req.method !== "POST") return void res.writeHead(404, { "content-type": "text/plain" }).end("Cannot GET");
      if (asked?.id === undefined) return void res.writeHead(202).end();
      const result =
        asked.method === "initialize"
          ? {
              protocolVersion: "2025-06-18",
              capabilities: { tools: {} },
              serverInfo: { name: "post-only", version: "1" },
            }
          : {};
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: asked.id, result }));
    };
    const postOnly = await listen((req, res) => void answerPosts(req, res), "/mcp");
    const serve = await serveConfig({ mcpServers: { plain: { url: postOnly.url } } });
    try {
      const host = await initializedWs(serve.url, "plain");
      // Past the GET stream's first try and its retry after the notification.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await host.request(2, "ping", {}, 5_000)).result).toEqual({});
      await host.close();
    } finally {
      await serve.stop();
      await postOnly.close();
    }
  });
});

describe("a remote upstream that refuses every initialize with an HTTP error (a wrong API key)", () => {
  it("is down on /healthz and /metrics with the status it answered; once it accepts, it is up again", async () => {
    const refusing = createServer((req, res) => {
      req.resume();
      res.writeHead(401, { "content-type": "text/plain" }).end("invalid API key");
    });
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
    const port = (refusing.address() as AddressInfo).port;
    const serve = await serveConfig({ mcpServers: { keyed: { url: `http://127.0.0.1:${port}/mcp` } } });
    let upstream: RemoteUpstream | undefined;
    try {
      const refused = await sessionOpening(serve, "keyed");
      expect(refused).toMatch(/answered POST initialize with HTTP 401/);
      const health = (await getJson(`${serve.url}/healthz`)).body as {
        status: string;
        servers: Record<string, { status: string; lastError: string; upstreamFailures: number }>;
      };
      expect(health.status).toBe("degraded");
      expect(health.servers.keyed).toMatchObject({ status: "down", upstreamFailures: 1 });
      expect(health.servers.keyed!.lastError).toMatch(/HTTP 401/);
      const metrics = await fetch(`${serve.url}/metrics`).then((response) => response.text());
      expect(metrics).toMatch(/upstream_down\{server="keyed"\} 1/);
      // Fixed (the server now takes the key): its next session works, and it is up again.
      refusing.closeAllConnections();
      await new Promise((resolve) => refusing.close(resolve));
      upstream = await startRemoteUpstream(port);
      const host = await connect(hostTransport("mcp", { url: serve.url, name: "keyed" }));
      expect(text(await raw(host.client, "tools/call", { name: "ok" }))).toBe("ok");
      const after = (await getJson(`${serve.url}/healthz`)).body as {
        status: string;
        servers: Record<string, { status: string }>;
      };
      expect(after.status).toBe("ok");
      expect(after.servers.keyed!.status).toBe("up");
      await host.close();
    } finally {
      await serve.stop();
      await upstream?.stop();
      refusing.closeAllConnections();
      refusing.close();
    }
  });

  it("a 400 to one host's initialize answers that request: the server is not marked down", async () => {
    const picky = createServer((req, res) => {
      req.resume();
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32602, message: "Invalid params" } }));
    });
    await new Promise<void>((resolve) => picky.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(picky.address() as AddressInfo).port}/mcp`;
    const serve = await serveConfig({ mcpServers: { picky: { url } } });
    try {
      const refused = await sessionOpening(serve, "picky");
      expect(refused).toMatch(/answered POST initialize with HTTP 400/);
      const health = (await getJson(`${serve.url}/healthz`)).body as {
        status: string;
        servers: Record<string, { status: string; upstreamFailures: number }>;
      };
      expect(health.status).toBe("ok");
      expect(health.servers.picky).toMatchObject({ upstreamFailures: 0 });
      expect(health.servers.picky!.status).not.toBe("down");
    } finally {
      await serve.stop();
      picky.closeAllConnections();
      picky.close();
    }
  });

  it("stateless hosts (no initialize) see it too: down while it refuses, up once it answers", async () => {
    let refusing = true;
    // A stateless server behind a door that refuses every POST with 401 until it is opened.
    const door = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        if (refusing) return void res.writeHead(401, { "content-type": "text/plain" }).end("invalid API key");
        if (req.method !== "POST") return void res.writeHead(405).end();
        const asked = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id?: unknown };
        if (asked.id === undefined) return void res.writeHead(202).end();
        const result = { content: [{ type: "text", text: "ok" }] };
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: asked.id, result }));
      });
    });
    await new Promise<void>((resolve) => door.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(door.address() as AddressInfo).port}/mcp`;
    const serve = await serveConfig({ mcpServers: { keyed: { url } } });
    const call = () =>
      post(
        `${serve.url}/mcp/keyed`,
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ok" } }),
        undefined,
        { "mcp-protocol-version": "2026-07-28" },
      );
    const health = async () =>
      (await getJson(`${serve.url}/healthz`)).body as {
        status: string;
        servers: Record<string, { status: string; lastError?: string }>;
      };
    try {
      const refused = await call();
      expect(JSON.stringify(refused.messages)).toMatch(/HTTP 401/);
      const down = await health();
      expect(down.status).toBe("degraded");
      expect(down.servers.keyed).toMatchObject({ status: "down" });
      expect(down.servers.keyed!.lastError).toMatch(/HTTP 401/);
      refusing = false;
      const answered = await call();
      expect(JSON.stringify(answered.messages), JSON.stringify(answered.messages)).toMatch(/"text":"ok"/);
      const up = await health();
      expect(up.status).toBe("ok");
      expect(up.servers.keyed!.status).toBe("up");
    } finally {
      await serve.stop();
      door.closeAllConnections();
      door.close();
    }
  });
});
