/**
 * Sessions belong to the bearer token that opened them. With `auth.bearerTokens: [A, B]`, a
 * session opened with A cannot be used, have its stream taken, or be ended with B: every such
 * request gets the same 404 as a session that does not exist. Checked with raw requests and
 * with real SDK clients, over streamable HTTP and legacy SSE.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post, rpc } from "../badInput/mcpHttp.js";
import { connect, raw, type ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, processState, serveConfig, toolText } from "../reliability/helpers.js";

const A = "token-of-alice-1";
const B = "token-of-bob-2";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "owner-test", version: "1" } };

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
    auth: { bearerTokens: [A, B] },
  });
});
afterAll(async () => {
  await serve?.stop();
});

async function request(method: string, session: string, token: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${serve.url}/mcp/fx`, {
    method,
    headers: {
      ...bearer(token),
      "mcp-session-id": session,
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
    },
    ...(method === "POST" ? { body: rpc(9, "ping") } : {}),
  });
  const body = await res.text();
  return { status: res.status, body };
}

/** The 404 answer, with the session id made generic: the same for "not yours" and "none". */
const shape = (r: { status: number; body: string }, id: string) => ({
  status: r.status,
  body: r.body.replaceAll(id.slice(0, 64), "<id>"),
});

describe("streamable HTTP", () => {
  it("another valid token gets 404 on POST, GET and DELETE of the session, exactly as for no session; the owner goes on", async () => {
    const url = `${serve.url}/mcp/fx`;
    const init = await post(url, rpc(0, "initialize", INIT), undefined, bearer(A));
    const session = init.headers.get("mcp-session-id")!;
    await post(url, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), session, bearer(A));
    const pid = Number(
      toolText((await post(url, rpc(1, "tools/call", { name: "pid" }), session, bearer(A))).messages[0]!),
    );

    const nobody = "00000000-0000-4000-8000-000000000000";
    for (const method of ["POST", "GET", "DELETE"]) {
      const theirs = await request(method, session, B);
      expect(theirs.status, method).toBe(404);
      expect(shape(theirs, session)).toEqual(shape(await request(method, nobody, B), nobody));
    }
    // Still A's, still alive.
    expect(processState(pid)).toMatch(/[RS]/);
    expect(
      Number(toolText((await post(url, rpc(2, "tools/call", { name: "pid" }), session, bearer(A))).messages[0]!)),
    ).toBe(pid);
    expect((await request("DELETE", session, A)).status).toBe(200);
  });

  it("real SDK clients: A's works; B resuming A's session id is refused", async () => {
    const alice = new StreamableHTTPClientTransport(new URL(`${serve.url}/mcp/fx`), {
      requestInit: { headers: bearer(A) },
    });
    const host = await connect(alice);
    const pid = Number(
      ((await raw(host.client, "tools/call", { name: "pid" })).content as Array<{ text: string }>)[0]!.text,
    );
    const sessionId = alice.sessionId!;
    expect(sessionId).toBeTruthy();

    const bob = new StreamableHTTPClientTransport(new URL(`${serve.url}/mcp/fx`), {
      requestInit: { headers: bearer(B) },
      sessionId,
    });
    await bob.start();
    await expect(bob.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "pid" } })).rejects.toThrow(
      /404|not found/i,
    );
    await bob.close();

    expect(
      Number(((await raw(host.client, "tools/call", { name: "pid" })).content as Array<{ text: string }>)[0]!.text),
    ).toBe(pid);
    await alice.terminateSession();
    await host.close();
  });
});

describe("legacy SSE", () => {
  it("/messages?sessionId= with another valid token gets 404; the owner's POST is accepted", async () => {
    const controller = new AbortController();
    const stream = await fetch(`${serve.url}/sse/fx`, {
      headers: { ...bearer(A), accept: "text/event-stream" },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = "";
    while (!/event: endpoint\ndata: (\S+)/.test(text)) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the SSE stream ended before its endpoint event: ${text}`);
      text += new TextDecoder().decode(value);
    }
    const endpoint = /event: endpoint\ndata: (\S+)/.exec(text)![1]!;
    const postAs = (token: string) =>
      fetch(`${serve.url}${endpoint}`, {
        method: "POST",
        headers: { ...bearer(token), "content-type": "application/json" },
        body: rpc(0, "initialize", INIT),
      });

    const theirs = await postAs(B);
    expect(theirs.status).toBe(404);
    const none = await fetch(`${serve.url}/messages/fx?sessionId=nope`, {
      method: "POST",
      headers: { ...bearer(B), "content-type": "application/json" },
      body: "{}",
    });
    expect(none.status).toBe(404);
    const messageOf = async (r: Response) =>
      ((await r.json()) as { error: { message: string } }).error.message.replace(/: \S+ \(/, ": <id> (");
    expect(await messageOf(theirs)).toEqual(await messageOf(none));
    expect((await postAs(A)).status).toBe(202);
    controller.abort();
  });
});

describe("without auth", () => {
  it("sessions are bound to nobody: any client that knows the id may use it (documented)", async () => {
    const open = await serveConfig({ mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } } });
    try {
      const url = `${open.url}/mcp/fx`;
      const init = await post(url, rpc(0, "initialize", INIT));
      const session = init.headers.get("mcp-session-id")!;
      expect((await post(url, rpc(1, "ping"), session, { authorization: "Bearer anything" })).status).toBe(200);
    } finally {
      await open.stop();
    }
  });
});
