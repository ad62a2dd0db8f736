/**
 * A stateful streamable HTTP server that ends its session (restarted, or it expired it) answers
 * that session's id with 404. The proxy must not keep the host's session alive on a dead
 * upstream session: the request gets an error that says so, the host's session ends (its next
 * request gets 404, which tells an SDK host to initialize again), and a new session works. The
 * upstream is the SDK's own server (the fixture's, whose sessions the test can end); the host
 * is the SDK's client over `/mcp` of a real `serve`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { startStreamableHttpFixture } from "../fixtures/upstream-servers/httpFixtures.js";
import { connect, startServe } from "../helpers/proxyProcess.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("an HTTP upstream that ends its session", () => {
  it("ends the host's session too: the call in flight gets an error, the next request 404, a new session works", async () => {
    const upstream = await startStreamableHttpFixture();
    cleanups.push(upstream.close);
    const proxy = await startServe(["--name", "up", "--url", upstream.url]);
    cleanups.push(proxy.stop);
    const endpoint = new URL(`${proxy.url}/mcp/up`);

    const host = await connect(new StreamableHTTPClientTransport(endpoint));
    cleanups.push(host.close);
    const first = await host.client.callTool({ name: "echo", arguments: { text: "before" } });
    expect(first.content).toEqual([{ type: "text", text: "before" }]);
    const sessionId = (host.transport as StreamableHTTPClientTransport).sessionId;
    expect(sessionId).toBeDefined();

    await upstream.endSessions();
    await expect(host.client.callTool({ name: "echo", arguments: { text: "after" } })).rejects.toThrow(
      /HTTP 404.*the upstream ended its session/,
    );
    // The host's session is over at the proxy: its id gets 404, whatever it sends.
    await expect
      .poll(
        async () =>
          (
            await fetch(endpoint, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                "mcp-session-id": sessionId!,
              },
              body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
            })
          ).status,
        { timeout: 5_000 },
      )
      .toBe(404);
    // The server still answers: its ended session is named, not counted as the server being down.
    const health = (await (await fetch(`${proxy.url}/healthz`)).json()) as {
      status: string;
      servers: Record<
        string,
        { status: string; upstreamFailures: number; consecutiveFailures: number; lastError?: string }
      >;
    };
    expect(health.status).toBe("ok");
    expect(health.servers.up).toMatchObject({ upstreamFailures: 0, consecutiveFailures: 0 });
    expect(health.servers.up!.status).not.toBe("down");
    expect(health.servers.up!.lastError).toMatch(/HTTP 404.*the upstream ended its session/);

    const again = await connect(new StreamableHTTPClientTransport(endpoint));
    cleanups.push(again.close);
    const next = await again.client.callTool({ name: "echo", arguments: { text: "new session" } });
    expect(next.content).toEqual([{ type: "text", text: "new session" }]);
  });

  it("a server whose sessions never answer a request (404 to each, notifications and GET accepted) is shown failing", async () => {
    // Replicas behind a balancer that does not keep a session to one of them: each session is
    // given by one replica and unknown to the one that gets its next request. Notifications are
    // acknowledged and the GET stream is served without a look at the session (some replicas
    // do): only an answered request shows a session works.
    let sessions = 0;
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        if (req.method === "OPTIONS") return void res.writeHead(204).end();
        if (req.method === "GET")
          return void res.writeHead(200, { "content-type": "text/event-stream" }).write(": open\n\n");
        if (req.method !== "POST") return void res.writeHead(405).end();
        const msg = JSON.parse(body) as { id?: number; method?: string; params?: { protocolVersion?: string } };
        if (msg.id === undefined) return void res.writeHead(202).end();
        if (msg.method !== "initialize")
          return void res
            .writeHead(404, { "content-type": "application/json" })
            .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}');
        sessions++;
        res.writeHead(200, { "content-type": "application/json", "mcp-session-id": `s${sessions}` });
        res.end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: msg.id,
            result: {
              protocolVersion: msg.params?.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: "replicas", version: "1" },
            },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(
      () =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(resolve);
        }),
    );
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const proxy = await startServe(["--name", "up", "--url", url]);
    cleanups.push(proxy.stop);
    for (let i = 0; i < 3; i++) {
      const host = await connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp/up`))).catch(() => null);
      await expect(host?.client.listTools() ?? Promise.reject(new Error("no session"))).rejects.toThrow();
      await host?.close().catch(() => {});
    }
    const health = (await (await fetch(`${proxy.url}/healthz`)).json()) as {
      status: string;
      servers: Record<string, { status: string; upstreamFailures: number }>;
    };
    expect(health.servers.up!.upstreamFailures).toBeGreaterThan(0);
    expect(health.servers.up!.status).toBe("down");
    expect(health.status).toBe("degraded");
  });
});
