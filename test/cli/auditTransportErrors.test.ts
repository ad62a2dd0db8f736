/**
 * What an HTTP upstream refuses outside an answer — a notification's POST answered 500 — is told
 * on `audit`'s stderr (redacted, one line each), not swallowed: a request's failure shows in the
 * report as a failed read, a notification's has nowhere else to go.
 */
import { type Server, createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (req.method !== "POST") return void res.writeHead(405).end();
      const message = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } };
      if (message.id === undefined) return void res.writeHead(500, { "content-type": "text/plain" }).end("boom");
      const result =
        message.method === "initialize"
          ? {
              protocolVersion: message.params?.protocolVersion,
              capabilities: {},
              serverInfo: { name: "f", version: "1" },
            }
          : {};
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("audit of an upstream that refuses its notifications", () => {
  it("finishes (exit 0) and says on stderr that notifications/initialized was refused with HTTP 500", async () => {
    const run = await runCli(["audit", "--url", url], { timeoutMs: 30_000 });
    expect(run.code, run.stderr).toBe(0);
    const warned = run.stderr.split("\n").filter((line) => line.includes('"msg":"upstream transport error"'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain("answered POST notifications/initialized with HTTP 500");
  });
});
