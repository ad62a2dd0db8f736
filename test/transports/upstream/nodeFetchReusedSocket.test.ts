/**
 * An HTTP upstream's requests on a kept-alive connection the server closed meanwhile: the
 * request failed before any answer, on a socket the proxy reused, and goes again — once — on a
 * new connection, body and all. A failure on a new connection is the upstream's answer and is
 * reported, not tried again.
 *
 * The server is a real node:http server. It closes its idle kept-alive connections
 * (`closeIdleConnections`) in the same turn of the event loop as the client's next request, so
 * the client has not yet seen the close and hands the request to the dead socket: the case of a
 * server that timed the connection out, or restarted, just before a request went out. To fail a
 * request on a connection of its choosing, the server resets that connection when the request
 * arrives.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { nodeFetch, type ResponseLike } from "../../../src/transports/upstream/nodeFetch.js";
import { networkErrorText } from "../../../src/transports/upstream/upstreamMessages.js";

interface Received {
  /** Which connection it came on: 0 for the server's first, 1 for the next, … */
  readonly connection: number;
  readonly method: string;
  readonly body: string;
  readonly contentLength: string | undefined;
}

interface TestServer {
  readonly server: Server;
  readonly url: string;
  /** Every request the server read, in order. */
  readonly received: Received[];
  /** How many connections were opened to it. */
  connections(): number;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/**
 * A server that records each request (on which connection, with what body) and answers it with
 * `answer N` (N counting from 1), unless `reset(N)` says to reset its connection instead.
 */
async function start(reset: (n: number) => boolean = () => false): Promise<TestServer> {
  const received: Received[] = [];
  const connectionOf = new WeakMap<Socket, number>();
  let opened = 0;
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const body = Buffer.concat(parts).toString("utf8");
    const connection = connectionOf.get(req.socket)!;
    received.push({ connection, method: req.method!, body, contentLength: req.headers["content-length"] });
    if (reset(received.length)) req.socket.resetAndDestroy();
    else res.end(`answer ${received.length}`);
  });
  server.on("connection", (socket: Socket) => connectionOf.set(socket, opened++));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return { server, url, received, connections: () => opened };
}

async function text(response: ResponseLike): Promise<string> {
  const reader = response.body!.getReader();
  const parts: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(parts).toString("utf8");
    parts.push(value);
  }
}

/**
 * A first request, read to its end: its connection stays open, idle, for the next request of the
 * same kind (a GET stream's connections are kept apart from the requests').
 */
async function primeConnection(target: TestServer, method: "GET" | "POST"): Promise<void> {
  const init = method === "POST" ? { method, body: "{}" } : { method };
  expect(await text(await nodeFetch(target.url, init))).toBe("answer 1");
}

/** A JSON-RPC request of about 256 KiB (many TCP segments), with characters of 2 to 4 bytes. */
function bigRequest(): string {
  const note = "café 日本語 🎉 ".repeat(10_000);
  return JSON.stringify({
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "append", arguments: { note } },
  });
}

describe("nodeFetch on a kept-alive connection the server closed meanwhile", () => {
  it("a GET that lands on it goes again on a new connection and succeeds", async () => {
    const target = await start();
    await primeConnection(target, "GET");
    // Same turn: the client has not seen the close when it hands the request to the socket.
    target.server.closeIdleConnections();
    const response = await nodeFetch(target.url);
    expect(response.status).toBe(200);
    expect(await text(response)).toBe("answer 2");
    // The dead connection never carried it: it came once, on a new connection.
    expect(target.received.map((r) => r.connection)).toEqual([0, 1]);
    expect(target.connections()).toBe(2);
  });

  it("a POST that lands on it is sent again whole, and delivered once", async () => {
    const target = await start();
    await primeConnection(target, "POST");
    const body = bigRequest();
    target.server.closeIdleConnections();
    const response = await nodeFetch(target.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(await text(response)).toBe("answer 2");
    expect(target.received).toHaveLength(2);
    const delivered = target.received[1]!;
    expect(delivered).toMatchObject({ connection: 1, method: "POST", contentLength: String(Buffer.byteLength(body)) });
    expect(delivered.body === body).toBe(true);
  });

  it("when the new connection fails too, the request fails: tried once more, not again and again", async () => {
    // The first request is answered; every later one has its connection reset.
    const target = await start((n) => n > 1);
    await primeConnection(target, "POST");
    const error = await nodeFetch(target.url, { method: "POST", body: "{}" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(networkErrorText(error)).toMatch(/^fetch failed: ECONNRESET/);
    // On the kept-alive connection, then once on a new one.
    expect(target.received.map((r) => r.connection)).toEqual([0, 0, 1]);
    expect(target.connections()).toBe(2);
  });
});

describe("nodeFetch on a new connection the server resets", () => {
  it("fails with the reset in fetch's shape, and does not try again", async () => {
    const target = await start(() => true);
    const error = await nodeFetch(target.url, { method: "POST", body: '{"id":1}' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(networkErrorText(error)).toMatch(/^fetch failed: ECONNRESET/);
    expect(target.received).toEqual([{ connection: 0, method: "POST", body: '{"id":1}', contentLength: "8" }]);
    expect(target.connections()).toBe(1);
  });
});
