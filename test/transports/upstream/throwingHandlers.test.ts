/**
 * A streamable HTTP upstream whose owner's handlers throw (a library user's `onerror` or
 * `onmessage`): the error goes where a caller can catch it, never an unhandled rejection, which
 * ends a Node process. Against a plain node:http server that answers a request with a JSON body
 * for another id, so the request is left unanswered and the transport reports it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { StreamableHttpUpstreamTransport } from "../../../src/transports/upstream/streamableHttpUpstream.js";
import { sleep, waitFor } from "../../helpers/polling.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

it("an onerror that throws on a request left unanswered raises no unhandled rejection", async () => {
  server = createServer((req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    req.resume().on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: 999, result: {} }));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  const transport = new StreamableHttpUpstreamTransport({
    url: `http://127.0.0.1:${port}/mcp`,
    maxMessageBytes: 1 << 20,
    openServerStream: false,
  });
  let errors = 0;
  transport.onerror = () => {
    errors++;
    throw new Error("handler threw");
  };
  try {
    await transport.start();
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    await waitFor(() => errors > 0, 5000);
    // Rejections are reported after the microtasks of the turn that left them unhandled.
    await sleep(100);
    expect(unhandled).toEqual([]);
  } finally {
    process.off("unhandledRejection", onUnhandled);
    await transport.close();
  }
});
