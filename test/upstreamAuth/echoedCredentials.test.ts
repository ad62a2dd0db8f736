/**
 * Servers that quote the credentials they were sent: a token endpoint echoing its request in a
 * plain-text or JSON OAuth error (the client secret as `client_secret_basic` sends it, base64 of
 * `id:secret`, or form-encoded in the body as `client_secret_post` does), and a protected MCP
 * server putting the `Authorization` header it got into a JSON-RPC error answer. None of it
 * reaches a host, `/healthz` or the log.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, hostTransport, startServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";
import { answeredDiscovery, authorizationServerMetadata, writeConfig } from "./helpers.js";

const CLIENT = "svc";
const SECRET = "s3cr3t value!'()~*-4c1d";
const TOKEN = "AT-echoed-access-token-9f2e";

type Mode = "echo-text" | "echo-json" | "echo-post" | "echo-raw" | "rpc-echo";

/** An authorization server and a protected MCP server in one, misbehaving as `mode` says. */
async function startEchoServer(mode: Mode): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const path = new URL(req.url ?? "/", base).pathname;
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    const metadata = {
      ...authorizationServerMetadata(base),
      grant_types_supported: ["client_credentials"],
      token_endpoint_auth_methods_supported: mode === "echo-post" ? ["client_secret_post"] : ["client_secret_basic"],
    };
    if (answeredDiscovery(path, base, json, metadata)) return;
    if (path === "/token") {
      const echo = `got authorization=${req.headers.authorization ?? ""} body=${body}`;
      if (mode === "echo-text" || mode === "echo-post") {
        res.writeHead(400, { "content-type": "text/plain" });
        return res.end(echo);
      }
      if (mode === "echo-json") return json(400, { error: "invalid_client", error_description: echo });
      if (mode === "echo-raw") {
        // "JSON" that is the secret itself: a parse error quotes what it read first.
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(SECRET);
      }
      return json(200, { access_token: TOKEN, token_type: "Bearer", expires_in: 3600 });
    }
    if (path === "/mcp") {
      if (!req.headers.authorization) {
        res.writeHead(401, {
          "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"`,
        });
        return res.end();
      }
      const message = JSON.parse(body || "{}") as { id?: unknown };
      if (message.id === undefined) {
        res.writeHead(202);
        return res.end();
      }
      // Written by hand: a number as JSON.stringify would not write it, and a `data` string long
      // enough to be read as bytes (over limits.rawStringBytes) quoting the header at its end.
      const quoted = JSON.stringify(`token rejected: ${req.headers.authorization}`);
      const big = JSON.stringify(`${"x".repeat(300_000)} ${req.headers.authorization}`);
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(
        `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"error":{"code":-32001,"message":${quoted},` +
          `"data":{"quoted":${quoted},"big":${big},"n":1.50}}}`,
      );
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const FORMS = [
  SECRET,
  encodeURIComponent(SECRET),
  new URLSearchParams({ s: SECRET }).toString().slice(2),
  Buffer.from(`${CLIENT}:${SECRET}`).toString("base64"),
  TOKEN,
];

describe("credentials a server quotes back", () => {
  const MODES: Mode[] = ["echo-text", "echo-json", "echo-post", "echo-raw", "rpc-echo"];
  const servers: Array<{ url: string; close: () => Promise<void> }> = [];
  let serve: ServeProcess;
  let logFile: string;
  const seen: string[] = [];

  beforeAll(async () => {
    for (const mode of MODES) servers.push(await startEchoServer(mode));
    const dir = tempDir("mcpn-echoed-");
    logFile = join(dir, "log.jsonl");
    const mcpServers = Object.fromEntries(
      MODES.map((mode, i) => [
        mode,
        {
          url: servers[i]?.url,
          auth: {
            grant: "client_credentials",
            clientId: CLIENT,
            clientSecret: "${SVC_SECRET}",
            issuer: new URL(servers[i]!.url).origin,
          },
        },
      ]),
    );
    serve = await startServe(["--config", writeConfig(dir, { mcpServers, log: { file: logFile, level: "debug" } })], {
      SVC_SECRET: SECRET,
      MCPN_AUTH_DIR: join(dir, "auth"),
    });
  });

  afterAll(async () => {
    await serve?.stop();
    for (const server of servers) await server.close();
  });

  it.each(MODES)("%s: the host's error says what failed, without the credentials", async (mode) => {
    const error = await connect(hostTransport("mcp", { url: serve.url, name: mode })).then(
      async (c) => {
        await c.close();
        return "connected";
      },
      (e: Error) => e.message,
    );
    seen.push(error);
    // A plain-text answer is not quoted at all (not OAuth's JSON: cut to a phrase); OAuth's own
    // error_description and a JSON-RPC error are, redacted.
    const said = {
      "echo-text": "HTTP 400: not an OAuth answer",
      "echo-post": "HTTP 400: not an OAuth answer",
      "echo-raw": "an answer (metadata, registration or token) is not JSON",
    };
    expect(error).toContain(said[mode as keyof typeof said] ?? "[redacted]");
    if (mode === "rpc-echo") expect(error).toContain("token rejected: Bearer [redacted]");
    for (const form of FORMS) expect(error.includes(form), `${form.slice(0, 8)}… quoted to the host`).toBe(false);
    // Nor its start, which a parse error quotes (too short for the redaction to know it).
    expect(error).not.toContain(SECRET.slice(0, 6));
  });

  it("a JSON-RPC error quoting the token in a long data string: redacted there too, its numbers as written", async () => {
    const started = Date.now();
    const response = await fetch(`${serve.url}/mcp/rpc-echo`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      }),
    });
    const text = await response.text();
    seen.push(text);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(text).toContain('"n":1.50');
    expect(text).toContain(` Bearer [redacted]"`);
    expect(text.length).toBeGreaterThan(300_000);
    for (const form of FORMS) expect(text.includes(form), `${form.slice(0, 8)}… quoted to the host`).toBe(false);
  });

  it("nor does /healthz or the log", async () => {
    seen.push(await (await fetch(`${serve.url}/healthz`)).text());
    await serve.stop();
    seen.push(serve.stderr(), readFileSync(logFile, "utf8"));
    const everything = seen.join("\n");
    expect(everything).toContain("[redacted]");
    for (const form of FORMS) expect(everything.includes(form), `${form.slice(0, 8)}… leaked`).toBe(false);
  });
});
