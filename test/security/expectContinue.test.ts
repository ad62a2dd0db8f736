/**
 * `Expect: 100-continue`: a client sends its headers and waits for `100 Continue` before its
 * body. Node sends it before any handler runs; the proxy sends it only to a request its door lets
 * in, so a client without a token is told 401 at once and never invited to upload. A real `serve`
 * with a bearer token, a raw socket (fetch never sends `Expect`).
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, serveConfig } from "../reliability/helpers.js";

const TOKEN = "expect-continue-token";
let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
    auth: { bearerTokens: [TOKEN] },
  });
});
afterAll(async () => {
  await serve?.stop();
});

/** The first status line the proxy writes to a POST that waits for `100 Continue` before its body. */
function firstStatusLine(headers: Record<string, string>): Promise<string> {
  const { hostname, port } = new URL(serve.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("no status line in 5 s"));
    }, 5000);
    let got = "";
    socket.on("data", (chunk) => {
      got += chunk.toString("latin1");
      const end = got.indexOf("\r\n");
      if (end === -1) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(got.slice(0, end));
    });
    socket.on("error", reject);
    const lines = Object.entries({
      host: `${hostname}:${port}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "content-length": "1000000",
      expect: "100-continue",
      ...headers,
    }).map(([name, value]) => `${name}: ${value}`);
    socket.write(`POST /mcp/fx HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`);
  });
}

describe("Expect: 100-continue", () => {
  it("without a token, or with a wrong one: 401 at once, never 100 Continue", async () => {
    expect(await firstStatusLine({})).toBe("HTTP/1.1 401 Unauthorized");
    expect(await firstStatusLine({ authorization: "Bearer wrong" })).toBe("HTTP/1.1 401 Unauthorized");
  });

  it("with the token: 100 Continue, as before", async () => {
    expect(await firstStatusLine({ authorization: `Bearer ${TOKEN}` })).toBe("HTTP/1.1 100 Continue");
  });
});
