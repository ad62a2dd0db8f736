/**
 * Where an upstream's stderr goes: servers print tokens and connection strings there. In
 * `serve` hosts and unauthenticated clients learn only what happened (`exited with code 3`);
 * the stderr line goes to the operator's log, and `/healthz` gives details only with a valid
 * token. In `stdio` the host is the operator and keeps the line in its errors.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, hostTransport, type ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, getJson, initializedWs, serveConfig, waitForStderr } from "../reliability/helpers.js";

const TOKEN = "operator-token-1";

describe("serve with a token", () => {
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

  it("the host's error names the exit code, not the stderr line; the log has the line; /healthz details only with the token", async () => {
    const host = await initializedWs(serve.url, "fx", { authorization: `Bearer ${TOKEN}` });
    const answer = await host.request(1, "tools/call", { name: "crash", arguments: { code: 3 } });
    await host.closed;
    const message = (answer.error as { message: string }).message;
    expect(message).toMatch(/upstream "[^"]+" exited with code 3/);
    expect(message).not.toContain("giving up");
    expect(await waitForStderr(serve, /fault: giving up/)).toBeTruthy();

    const open = await getJson(`${serve.url}/healthz`);
    expect(open.status).toBe(200);
    expect(open.body).toEqual({ status: "degraded" });
    const wrong = await getJson(`${serve.url}/healthz`, { authorization: "Bearer nope" });
    expect(wrong.body).toEqual({ status: "degraded" });

    const detailed = await getJson(`${serve.url}/healthz`, { authorization: `Bearer ${TOKEN}` });
    const fx = (detailed.body.servers as Record<string, Record<string, unknown>>).fx!;
    expect(fx).toMatchObject({ status: "down", upstreamFailures: 1 });
    expect(String(fx.lastError)).toMatch(/exited with code 3$/);
    expect(JSON.stringify(detailed.body)).not.toContain("giving up");
  });
});

describe("stdio", () => {
  it("keeps the stderr line in the host's error: the host is the operator", async () => {
    const host = await connect(hostTransport("stdio", { stdioArgs: ["--", process.execPath, FAULT_SERVER] }));
    const error = await host.client.callTool({ name: "crash", arguments: { code: 3 } }).then(
      () => undefined,
      (e: Error) => e.message,
    );
    expect(error).toContain("exited with code 3");
    expect(error).toContain('last stderr line: "fault: giving up"');
    await host.close();
  });
});
