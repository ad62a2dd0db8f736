/**
 * Secrets never leak: a secret planted in a stdio server's `env`, in remote servers'
 * `headers` (one answering 500, one unreachable) and in `auth.bearerTokens` appears nowhere the
 * proxy writes: stderr, the log file, /healthz, /metrics, /report, and the errors hosts get.
 */
import { createServer, type Server } from "node:http";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { post, rpc } from "../badInput/mcpHttp.js";
import { CLI } from "../helpers/paths.js";
import { INITIALIZE_PARAMS, startRawStdio } from "../helpers/rawStdio.js";
import { FAULT_SERVER, initializedWs, RAW_UPSTREAM, serveConfig, tempDir } from "../reliability/helpers.js";

const SECRET = "PLANTED-SECRET-7f3a9c";
const TOKEN = `tok-${SECRET}`;
const auth = { authorization: `Bearer ${TOKEN}` };

describe("secrets in env, headers and bearer tokens", () => {
  let serve: ServeProcess;
  let failing: Server;
  let logFile: string;
  const seen: string[] = [];

  beforeAll(async () => {
    failing = createServer((req, res) => {
      req.resume();
      res.writeHead(500, { "content-type": "text/plain" }).end("upstream broke");
    });
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve));
    const port = (failing.address() as { port: number }).port;
    logFile = join(tempDir("mcpn-secret-"), "log.jsonl");
    serve = await serveConfig({
      mcpServers: {
        local: { command: process.execPath, args: [FAULT_SERVER], env: { API_KEY: SECRET } },
        broken: {
          // (A user name or password in the URL is refused at load, unquoted: test/cli/errorMessages.test.ts.)
          url: `http://127.0.0.1:${port}/mcp?key=${SECRET}`,
          headers: { authorization: `Bearer ${SECRET}`, "x-api-key": SECRET },
        },
        gone: { url: `http://127.0.0.1:1/mcp?token=${SECRET}`, headers: { "x-api-key": SECRET } },
      },
      auth: { bearerTokens: [TOKEN] },
      log: { file: logFile, level: "debug" },
    });
  });

  afterAll(async () => {
    await serve.stop();
    await new Promise((resolve) => failing.close(resolve));
    const everything = [serve.stderr(), readFileSync(logFile, "utf8"), ...seen].join("\n");
    expect(everything).not.toContain(SECRET);
  });

  it("sessions to every server, working or failing: the errors hosts get name the cause, not the secret", async () => {
    const local = await initializedWs(serve.url, "local", auth);
    await local.request("t", "tools/call", { name: "crash", arguments: {} }).then((a) => seen.push(JSON.stringify(a)));
    await local.close();
    for (const name of ["broken", "gone"]) {
      const r = await post(
        `${serve.url}/mcp/${name}`,
        rpc(0, "initialize", {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "h", version: "1" },
        }),
        undefined,
        auth,
      );
      seen.push(JSON.stringify(r.messages));
      // Refused (no upstream could be reached), or answered with the upstream's failure as a JSON-RPC error.
      expect(r.status >= 400 || (r.messages[0] as { error?: unknown } | undefined)?.error !== undefined).toBe(true);
      expect(JSON.stringify(r.messages)).toMatch(/127\.0\.0\.1/);
      expect(JSON.stringify(r.messages)).not.toContain(SECRET);
    }
  });

  it("/healthz, /metrics and /report do not carry it", async () => {
    for (const path of ["/healthz", "/metrics", "/report", "/report?format=json"]) {
      const r = await fetch(`${serve.url}${path}`, { headers: auth });
      const text = await r.text();
      seen.push(text);
      expect(text).not.toContain(SECRET);
    }
  });
});

/** `stdio` in front of the raw upstream, its `env` holding the secret; initialized. */
async function stdioWithSecretEnv(): Promise<ReturnType<typeof startRawStdio>> {
  const config = join(tempDir("mcpn-env-secret-"), "proxy.config.json");
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM], env: { KEY: SECRET } } },
    }),
  );
  const proxy = startRawStdio(process.execPath, [CLI, "stdio", "--config", config]);
  await proxy.request(1, "initialize", INITIALIZE_PARAMS);
  return proxy;
}

describe("secrets an upstream echoes in what the proxy logs", () => {
  it("an env value the server quotes as an unknown id or in a message that is not JSON-RPC is not in the log", async () => {
    const proxy = await stdioWithSecretEnv();
    const lines = [
      `starting with key ${SECRET}`,
      `{"jsonrpc":"2.0","id":"${SECRET}","result":{}}`,
      `{"echo":"${SECRET}"}`,
      `{"jsonrpc":"2.0","id":"__ID__","result":"${SECRET}"}`,
    ];
    const emit = lines.map((line) => Buffer.from(`${line}\n`).toString("base64"));
    const answer = await proxy.request(2, "resources/read", { uri: "x://a", _emit: emit, _noFinal: true });
    expect(answer.error).toBeDefined();
    expect(await proxy.close()).toBe(0);
    // The operator's log: stderr in `stdio`.
    const written = proxy.stderr();
    expect(written).toMatch(/upstream sent a message that could not be read/);
    expect(written).toMatch(/upstream answered a request that is not waiting/);
    expect(written).toMatch(/upstream sent JSON that is not a JSON-RPC message/);
    expect(written).toMatch(/upstream sent an invalid JSON-RPC response/);
    expect(written).not.toContain(SECRET);
  });
});

describe("secrets a stdio upstream quotes to the host", () => {
  it("an env value in a stdio server's error answer or on its stderr reaches neither the host nor the log", async () => {
    const proxy = await stdioWithSecretEnv();
    const error = { code: -32000, message: `upstream says ${SECRET} is wrong`, data: { key: SECRET } };
    const emit = [Buffer.from(`${JSON.stringify({ jsonrpc: "2.0", id: "__ID__", error })}\n`).toString("base64")];
    const answer = await proxy.request(2, "tools/call", { name: "x", _emit: emit, _noFinal: true });
    expect(answer.error).toMatchObject({ code: -32000, message: "upstream says [redacted] is wrong" });
    expect(JSON.stringify(answer)).not.toContain(SECRET);
    expect(await proxy.close()).toBe(0);
    expect(proxy.stderr()).not.toContain(SECRET);
  });

  it("an env value a server quotes in another case (lower- or upper-cased) reaches neither the host nor the log", async () => {
    const proxy = await stdioWithSecretEnv();
    const message = `key ${SECRET.toLowerCase()} or ${SECRET.toUpperCase()} refused`;
    const emit = [
      Buffer.from(`${JSON.stringify({ jsonrpc: "2.0", id: "__ID__", error: { code: -32000, message } })}\n`).toString(
        "base64",
      ),
    ];
    const answer = await proxy.request(2, "tools/call", { name: "x", _emit: emit, _noFinal: true });
    expect(answer.error).toMatchObject({ code: -32000, message: "key [redacted] or [redacted] refused" });
    expect(await proxy.close()).toBe(0);
    expect(proxy.stderr().toLowerCase()).not.toContain(SECRET.toLowerCase());
  });

  it("an env value in an error answer the server sends inside a batch reaches neither the host nor the log", async () => {
    const proxy = await stdioWithSecretEnv();
    const error = { code: -32000, message: `upstream says ${SECRET} is wrong` };
    // With what is not a message beside it (the upstream's own mistake, to be passed over).
    const batch = [null, 7, { jsonrpc: "2.0", id: "__ID__", error }];
    const emit = [Buffer.from(`${JSON.stringify(batch)}\n`).toString("base64")];
    const answer = await proxy.request(2, "tools/call", { name: "x", _emit: emit, _noFinal: true });
    expect(answer.error).toMatchObject({ code: -32000, message: "upstream says [redacted] is wrong" });
    expect(JSON.stringify(proxy.messages)).not.toContain(SECRET);
    expect(await proxy.close()).toBe(0);
    expect(proxy.stderr()).not.toContain(SECRET);
  });
});
