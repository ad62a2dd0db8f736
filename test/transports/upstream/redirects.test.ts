/**
 * Redirects of HTTP upstreams are followed only within the upstream's origin: what is configured
 * for a server (its `headers`) and the session's messages never reach another origin, whichever
 * request is redirected (streamable HTTP's, the legacy SSE stream's GET or its POSTs); each
 * request goes out once. Real servers on port 0: the upstream, and another origin that records
 * what reaches it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { readAll } from "./bodyText.js";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";
import { nodeFetch } from "../../../src/transports/upstream/nodeFetch.js";
import { sameOriginRedirects } from "../../../src/transports/upstream/sameOriginRedirects.js";
import { SseUpstreamTransport } from "../../../src/transports/upstream/sseUpstream.js";
import { StreamableHttpUpstreamTransport } from "../../../src/transports/upstream/streamableHttpUpstream.js";
import { probe } from "../../../src/upstreamAuth/challenge.js";
import { networkErrorText } from "../../../src/transports/upstream/upstreamMessages.js";

const servers: Server[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly apiKey: string | undefined;
  readonly body: string;
}

/** A server that records every request and answers with `handler`; its base URL and what it saw. */
async function serve(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<{ base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const body = Buffer.concat(parts).toString("utf8");
    const apiKey = req.headers["x-api-key"] as string | undefined;
    seen.push({ method: req.method ?? "", url: req.url ?? "", apiKey, body });
    handler(req, res, body);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const echo = (req: IncomingMessage, res: ServerResponse, body: string): void => {
  res
    .writeHead(200, { "content-type": "application/json" })
    .end(JSON.stringify({ url: req.url, method: req.method, body }));
};

describe("a redirect of an HTTP upstream", () => {
  it("is answered as it came by node:http: each request goes out once", async () => {
    const { base, seen } = await serve((req, res, body) =>
      req.url === "/old" ? res.writeHead(307, { location: "/new" }).end() : echo(req, res, body),
    );
    const response = await nodeFetch(`${base}/old`, { method: "POST", body: "hello" });
    expect(response.status).toBe(307);
    expect(response.headers.get("location")).toBe("/new");
    expect(seen.map((s) => s.url)).toEqual(["/old"]);
  });

  it("within the origin is followed as fetch follows it, each hop once", async () => {
    const { base, seen } = await serve((req, res, body) => {
      if (req.url === "/old") res.writeHead(307, { location: "/new" }).end();
      else if (req.url === "/see-other") res.writeHead(303, { location: `${base}/new` }).end();
      else echo(req, res, body);
    });
    const fetchSame = sameOriginRedirects(nodeFetch);
    const kept = await fetchSame(`${base}/old`, { method: "POST", body: "hello", headers: { "x-api-key": "k" } });
    expect(JSON.parse(await readAll(kept))).toEqual({ url: "/new", method: "POST", body: "hello" });
    const seeOther = await fetchSame(`${base}/see-other`, { method: "POST", body: "hello" });
    expect(JSON.parse(await readAll(seeOther))).toEqual({ url: "/new", method: "GET", body: "" });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(["POST /old", "POST /new", "POST /see-other", "GET /new"]);
  });

  it("to another origin is refused, naming where it pointed; nothing reaches that origin", async () => {
    const other = await serve(echo);
    const { base } = await serve((req, res) => res.writeHead(308, { location: `${other.base}${req.url}` }).end());
    const failure = await sameOriginRedirects(nodeFetch)(`${base}/mcp`, { method: "POST", body: "{}" }).catch(
      (error: unknown) => error,
    );
    expect(networkErrorText(failure)).toMatch(
      new RegExp(`redirected \\(HTTP 308\\) to ${other.base}/ \\(another origin\\): not followed`),
    );
    expect(other.seen).toEqual([]);
  });
});

describe("an HTTP upstream redirected to another origin", () => {
  it("streamable HTTP: the session cannot open, and its headers go nowhere else", async () => {
    const other = await serve(echo);
    const { base, seen } = await serve((req, res) => res.writeHead(307, { location: `${other.base}${req.url}` }).end());
    const transport = new StreamableHttpUpstreamTransport({
      url: `${base}/mcp`,
      headers: { "X-Api-Key": "configured-secret" },
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    cleanups.push(() => transport.close());
    await expect(transport.start()).rejects.toThrow(/another origin/);
    expect(seen).toHaveLength(1);
    expect(other.seen).toEqual([]);
  });

  it("legacy SSE: neither the stream's GET nor the endpoint's POSTs are followed there", async () => {
    const other = await serve(echo);
    const moved = await serve((_req, res) => res.writeHead(307, { location: `${other.base}/sse` }).end());
    const stream = new SseUpstreamTransport({
      url: `${moved.base}/sse`,
      headers: { "X-Api-Key": "configured-secret" },
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    cleanups.push(() => stream.close());
    await expect(stream.start()).rejects.toThrow(/another origin/);

    const posts = await serve((req, res) => {
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "text/event-stream" }).write("event: endpoint\ndata: /messages\n\n");
        return;
      }
      res.writeHead(307, { location: `${other.base}/steal` }).end();
    });
    const transport = new SseUpstreamTransport({
      url: `${posts.base}/sse`,
      headers: { "X-Api-Key": "configured-secret" },
      maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes,
    });
    const errors: string[] = [];
    transport.onerror = (error) => errors.push(error.message);
    const answers: unknown[] = [];
    transport.onmessage = (message) => answers.push(message);
    await transport.start();
    cleanups.push(() => transport.close());
    await transport.send({ jsonrpc: "2.0", id: 1, method: "ping" }).catch((error: Error) => errors.push(error.message));
    const deadline = Date.now() + 2000;
    while (answers.length === 0 && errors.length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(JSON.stringify([...answers, ...errors])).toMatch(/another origin/);
    expect(posts.seen.filter((s) => s.method === "POST")).toHaveLength(1);
    expect(other.seen).toEqual([]);
  });

  it("the OAuth layer's first probe (it carries the configured headers) is not followed there either", async () => {
    const other = await serve(echo);
    const { base } = await serve((req, res) => res.writeHead(307, { location: `${other.base}${req.url}` }).end());
    const failure = await probe(`${base}/mcp`, (url, init) => fetch(url, init), { "X-Api-Key": "configured" }).catch(
      (error: unknown) => error,
    );
    expect(networkErrorText(failure)).toMatch(/another origin/);
    expect(other.seen).toEqual([]);
  });
});
