/**
 * A streamable HTTP upstream that sends the progress of a request already answered on another
 * request's response stream: the progress names its own request by its token, so it goes to the
 * host's GET stream, never with the other request (an SDK client takes a token it does not
 * know for an error). A hand-written upstream, so the stream it comes on is chosen exactly.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/** The `data` of every SSE event in `response`'s body (a JSON body: itself), until it ends or `enough` holds. */
async function dataOf(response: Response, enough: (data: string[]) => boolean = () => false): Promise<string[]> {
  if (response.headers.get("content-type")?.startsWith("application/json")) return [await response.text()];
  const data: string[] = [];
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    for (let end = text.indexOf("\n\n"); end !== -1; end = text.indexOf("\n\n")) {
      const line = text
        .slice(0, end)
        .split("\n")
        .find((l) => l.startsWith("data: "));
      text = text.slice(end + 2);
      if (line !== undefined) data.push(line.slice(6));
    }
    if (enough(data)) break;
  }
  return data;
}

describe("progress of an answered request on another request's stream", () => {
  it("goes to the GET stream, not with the request whose stream carried it", async () => {
    const base = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const init = await fetch(url, {
      method: "POST",
      headers: base,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "h", version: "1" } },
      }),
    });
    await init.text();
    const headers = {
      ...base,
      "mcp-session-id": init.headers.get("mcp-session-id")!,
      "mcp-protocol-version": "2025-06-18",
    };
    const post = (m: unknown) => fetch(url, { method: "POST", headers, body: JSON.stringify(m) });
    await (await post({ jsonrpc: "2.0", method: "notifications/initialized" })).text();
    const get = await fetch(url, { headers: { ...headers, accept: "text/event-stream" } });
    const onGet = dataOf(get, (data) => data.some((d) => d.includes("tok-A")));
    const call = (id: number, name: string, meta: Record<string, unknown> = {}) =>
      post({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {}, _meta: meta } });
    expect((await dataOf(await call(1, "a", { progressToken: "tok-A" }))).join()).toContain("a done");
    const onB = await dataOf(await call(2, "b"));
    expect(onB.map((d) => JSON.parse(d).id)).toEqual([2]);
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("not on the GET stream")), 5_000),
    );
    expect((await Promise.race([onGet, timeout])).map((d) => JSON.parse(d))).toContainEqual(PROGRESS);
  }, 20_000);
});
