/**
 * An HTTP upstream's answer of more nodes than `maxMessageNodes` (the proxy passes
 * `limits.maxUpstreamMessageNodes`) is not parsed — as a JSON body (read in pieces) and as an SSE
 * event — and is reported as a `too-complex` problem under the id of the request it answers, so
 * the proxy can answer that request at once. Against a plain node:http server.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { StreamableHttpUpstreamTransport } from "../../../src/transports/upstream/streamableHttpUpstream.js";
import type { FramingProblem } from "../../../src/transports/types.js";
import { waitFor } from "../../helpers/polling.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const LIMIT = 1000;
/** An answer to `id` with `count` short strings in an array (about `count` nodes). */
const answer = (id: number, count: number): string =>
  JSON.stringify({ jsonrpc: "2.0", result: { items: Array.from({ length: count }, (_, k) => `${k}`) }, id });

it.each(["json", "sse"] as const)(
  "a %s answer over the limit is a too-complex problem under its id; one under it is a message",
  async (form) => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        if (req.method !== "POST") return void res.writeHead(405).end();
        const { id, params } = JSON.parse(body) as { id: number; params: { count: number } };
        const text = answer(id, params.count);
        if (form === "json") {
          res.writeHead(200, { "content-type": "application/json" });
          // Written in many small writes: read in pieces.
          for (let at = 0; at < text.length; at += 1000) res.write(text.slice(at, at + 1000));
          res.end();
        } else {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.end(`event: message\ndata: ${text}\n\n`);
        }
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const transport = new StreamableHttpUpstreamTransport({
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
      maxMessageBytes: 1 << 20,
      maxMessageNodes: LIMIT,
      openServerStream: false,
    });
    const problems: FramingProblem[] = [];
    const messages: unknown[] = [];
    transport.onproblem = (problem) => void problems.push(problem);
    transport.onmessage = (message) => void messages.push(message);
    try {
      await transport.start();
      await transport.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { count: LIMIT + 10 } } as never);
      await waitFor(() => problems.length > 0, 5000);
      expect(problems[0]).toMatchObject({ kind: "too-complex", id: 7, limit: LIMIT });
      expect(messages).toEqual([]);
      await transport.send({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { count: 10 } } as never);
      await waitFor(() => messages.length > 0, 5000);
      expect(messages[0]).toMatchObject({ id: 8, result: { items: expect.any(Array) } });
    } finally {
      await transport.close();
    }
  },
);
