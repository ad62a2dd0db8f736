/**
 * `audit` in front of a server behind OAuth (client credentials): a server that quotes the
 * `Authorization` header it got — in a tool's JSON-RPC error and in a read's — has the access
 * token the proxy obtained redacted in every report format, as `serve` and `stdio` redact it.
 */
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempDir.js";
import { answeredDiscovery, authorizationServerMetadata, writeConfig } from "./helpers.js";

const TOKEN = "AT-audit-token-7c41d9e2";

let server: Server;
let config: string;
const dir = tempDir("mcpn-audit-oauth-");

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const path = new URL(req.url ?? "/", base).pathname;
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    const metadata = { ...authorizationServerMetadata(base), grant_types_supported: ["client_credentials"] };
    if (answeredDiscovery(path, base, json, metadata)) return;
    if (path === "/token") return json(200, { access_token: TOKEN, token_type: "Bearer", expires_in: 3600 });
    if (path !== "/mcp") return json(404, {});
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401, {
        "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"`,
      });
      return res.end();
    }
    if (req.method !== "POST") {
      res.writeHead(405);
      return res.end();
    }
    const message = JSON.parse(body) as { id?: number; method: string };
    if (message.id === undefined) {
      res.writeHead(202);
      return res.end();
    }
    const answer = (result: unknown) => json(200, { jsonrpc: "2.0", id: message.id, result });
    const quoted = `denied for ${req.headers.authorization}`;
    switch (message.method) {
      case "initialize":
        return answer({
          protocolVersion: "2025-06-18",
          capabilities: { tools: {}, resources: {} },
          serverInfo: { name: "quoting", version: "1" },
        });
      case "tools/list":
        return answer({ tools: [{ name: "echo", inputSchema: { type: "object" } }] });
      case "resources/list":
        return answer({ resources: [{ uri: "demo://fail", name: "fail" }] });
      default:
        return json(200, { jsonrpc: "2.0", id: message.id, error: { code: -32603, message: quoted } });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  config = writeConfig(dir, {
    mcpServers: {
      quoting: {
        url: `http://127.0.0.1:${port}/mcp`,
        auth: {
          grant: "client_credentials",
          clientId: "svc",
          clientSecret: "svc-secret-1",
          issuer: `http://127.0.0.1:${port}`,
        },
      },
    },
  });
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("audit of a server behind OAuth", () => {
  it.each(["md", "json", "html"])("--format %s: the token it quotes back is redacted", async (format) => {
    const run = await runCli(
      ["audit", "--config", config, "--server", "quoting", "--call", "echo", "--format", format],
      {
        env: { MCPN_AUTH_DIR: join(dir, "auth") },
        timeoutMs: 20_000,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    // Markdown escapes the brackets.
    expect(run.stdout.replaceAll("\\", "")).toContain("denied for Bearer [redacted]");
    expect(`${run.stdout}\n${run.stderr}`).not.toContain(TOKEN);
  });
});
