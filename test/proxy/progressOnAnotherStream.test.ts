/**
 * A streamable HTTP upstream that sends the progress of a request already answered on another
 * request's response stream: the progress names its own request by its token, so it goes to the
 * host's GET stream, never with the other request (an SDK client takes a token it does not
 * know for an error). A hand-written upstream, so the stream it comes on is chosen exactly.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gathered, openSession, post, rpc } from "../badInput/mcpHttp.js";
import { until } from "../helpers/polling.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { serveConfig } from "../reliability/helpers.js";

const PROGRESS = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "tok-A", progress: 1 } };

let upstream: Server;
let serve: ServeProcess;
let url: string;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const msg = JSON.parse(body);
      const session = { "mcp-session-id": "S1" };
      if (msg.id === undefined) return void res.writeHead(202, session).end();
      if (msg.method === "initialize") {
        res.writeHead(200, { ...session, "content-type": "application/json" });
        const info = { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} } };
        return void res.end(
          JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: { ...info, serverInfo: { name: "u", version: "1" } } }),
        );
      }
      res.writeHead(200, { ...session, "content-type": "text/event-stream" });
      const event = (m: unknown) => res.write(`data: ${JSON.stringify(m)}\n\n`);
      // "b": first the progress of "a" (answered already), then its own answer.
      if (msg.params?.name === "b") event(PROGRESS);
      event({ jsonrpc: "2.0", id: msg.id, result: { content: [{ type: "text", text: `${msg.params?.name} done` }] } });
      res.end();
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  serve = await serveConfig({
    mcpServers: { up: { url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp` } },
  });
  url = `${serve.url}/mcp/up`;
});

afterAll(async () => {
  await serve?.stop();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe("progress of an answered request on another request's stream", () => {
  it("goes to the GET stream, not with the request whose stream carried it", async () => {
    const session = await openSession(url);
    const reading = new AbortController();
    const get = await fetch(url, {
      headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
      signal: reading.signal,
    });
    const onGet = gathered(get);
    onGet.ended.catch(() => {});
    try {
      const call = (id: number, name: string, meta: Record<string, unknown> = {}) =>
        post(url, rpc(id, "tools/call", { name, arguments: {}, _meta: meta }), session);
      expect(JSON.stringify((await call(1, "a", { progressToken: "tok-A" })).messages)).toContain("a done");
      expect((await call(2, "b")).messages.map((m) => m.id)).toEqual([2]);
      await until(
        () => onGet.messages,
        (messages) => messages.length > 0,
        5_000,
        "the progress on the GET stream",
      );
      expect(onGet.messages).toEqual([PROGRESS]);
    } finally {
      reading.abort();
    }
  }, 20_000);
});
