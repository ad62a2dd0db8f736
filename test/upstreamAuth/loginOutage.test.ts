/**
 * `login` of a server whose OAuth metadata is down (503) or throttled (429): told as that, naming
 * the status — not read as a server without metadata, whose origin would be guessed as its
 * authorization server and sent a registration (an "HTTP 401: not an OAuth answer" after it).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/tempDir.js";
import { serversClosedAfterEach, startCli, stopStartedClis } from "./helpers.js";

const servers = serversClosedAfterEach();
afterEach(stopStartedClis);

/** A protected MCP server whose every well-known address answers `status`; it notes each request. */
async function downMetadata(status: number): Promise<{ mcp: string; asked: string[] }> {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    if (req.url?.startsWith("/.well-known/")) {
      res.writeHead(status, { "content-type": "text/html" }).end("<html>down</html>");
      return;
    }
    res.writeHead(401, { "www-authenticate": 'Bearer error="invalid_token"' }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { mcp: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, asked };
}

describe("login while the server's OAuth metadata is down", () => {
  it.each([503, 429])("HTTP %s: one line naming it, exit 1, nothing registered anywhere", async (status) => {
    const { mcp, asked } = await downMetadata(status);
    const login = startCli(["login", "--url", mcp, "--no-browser"], { MCPN_AUTH_DIR: tempDir() });
    expect(await login.exited()).toBe(1);
    expect(login.stderr()).toContain(`HTTP ${status}`);
    expect(login.stderr()).not.toMatch(/not an OAuth answer/);
    // The MCP endpoint is asked (its 401 names where OAuth is); no registration goes anywhere.
    expect(asked.filter((request) => request.startsWith("POST") && !request.startsWith("POST /mcp"))).toEqual([]);
  });
});
