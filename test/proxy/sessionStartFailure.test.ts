/**
 * A session whose upstream cannot start tells the host why, on every transport: the requests it
 * sent meanwhile get a JSON-RPC error naming the cause (`-32001 Could not connect server …`),
 * and a WebSocket closes with 1011 and the reason — not a plain 1000 a host takes for a goodbye,
 * its `initialize` unanswered. A real `serve` in front of a command that does not exist (it fails
 * at once) and of an SSE server that never answers (it fails at `limits.connectTimeoutMs`, the
 * host's `initialize` waiting); raw hosts.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { INIT, serveConfig } from "../reliability/helpers.js";

let serve: ServeProcess;
let silent: Server;
beforeAll(async () => {
  // Takes the connection and answers nothing.
  silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const { port } = silent.address() as AddressInfo;
  // A port nothing listens on: connections to it are refused at once.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  serve = await serveConfig({
    mcpServers: {
      gone: { command: "/nonexistent/mcp-server" },
      slow: { url: `http://127.0.0.1:${port}/sse`, transport: "sse" },
      refused: { url: `http://127.0.0.1:${closedPort}/mcp` },
    },
    limits: { connectTimeoutMs: 1000 },
  });
});
afterAll(async () => {
  await serve?.stop();
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
});

/** A WebSocket host that sends initialize at once; what it got, and how it was closed. */
async function wsSession(name: string): Promise<{ messages: unknown[]; code: number; reason: string }> {
  const ws = new WebSocket(`${serve.url.replace(/^http/, "ws")}/ws/${name}`, "mcp");
  const messages: unknown[] = [];
  ws.on("message", (data) => messages.push(JSON.parse(data.toString())));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  ws.send(initialize);
  return { messages, ...(await closed) };
}

const initialize = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });

describe("an upstream that cannot start", () => {
  it("WebSocket: closed with 1011 and why, at once", async () => {
    const { code, reason } = await wsSession("gone");
    expect(code).toBe(1011);
    expect(reason).toMatch(/^Could not connect server "gone": .*mcp-server/);
  });

  it("WebSocket: the initialize it sent while the upstream was starting gets an error naming the cause", async () => {
    const { messages, code, reason } = await wsSession("slow");
    expect(messages).toEqual([
      {
        jsonrpc: "2.0",
        id: 1,
        error: { code: -32001, message: expect.stringMatching(/^Could not connect server "slow": /) },
      },
    ]);
    expect(code).toBe(1011);
    expect(reason).toMatch(/^Could not connect server "slow"/);
  });

  it("/mcp: the initialize gets 502 and the error under its own id", async () => {
    const post = await fetch(`${serve.url}/mcp/refused`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: initialize,
    });
    expect(post.status).toBe(502);
    expect(await post.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32001, message: expect.stringMatching(/^Could not connect server "refused": /) },
    });
  });

  it("/mcp: a batch gets one error per request, each under its id as written (past 2^53 too)", async () => {
    const body =
      `[{"jsonrpc":"2.0","id":9007199254740993,"method":"initialize","params":${JSON.stringify(INIT)}},` +
      `{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"ping"}]`;
    const post = await fetch(`${serve.url}/mcp/refused`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body,
    });
    expect(post.status).toBe(502);
    const text = await post.text();
    expect(text).toMatch(/^\[\{"jsonrpc":"2\.0","id":9007199254740993,"error":\{"code":-32001,/);
    const answers = JSON.parse(text) as Array<{ id: unknown; error: { message: string } }>;
    expect(answers.map((a) => a.id)).toEqual([2 ** 53, "b"]);
    for (const answer of answers) expect(answer.error.message).toMatch(/^Could not connect server "refused": /);
  });

  it("SSE: initialize posted while it starts gets the error on the stream", async () => {
    const controller = new AbortController();
    const stream = await fetch(`${serve.url}/sse/slow`, { signal: controller.signal });
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const readUntil = async (pattern: RegExp): Promise<void> => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
      }
    };
    await readUntil(/event: endpoint\ndata: (\S+)/);
    const endpoint = /event: endpoint\ndata: (\S+)/.exec(text)![1]!;
    await fetch(new URL(endpoint, serve.url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: initialize,
    }).catch(() => undefined);
    await readUntil(/Could not connect server/);
    controller.abort();
    expect(text).toMatch(/"id":1,"error":\{"code":-32001,"message":"Could not connect server \\"slow\\": /);
  });

  it("SSE: an initialize posted after the stream already ended (the upstream failed at once) is told why", async () => {
    const stream = await fetch(`${serve.url}/sse/refused`);
    const text = await stream.text();
    const endpoint = /event: endpoint\ndata: (\S+)/.exec(text)![1]!;
    const post = await fetch(new URL(endpoint, serve.url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: initialize,
    });
    expect(post.status).toBe(502);
    expect(((await post.json()) as { error: { message: string } }).error.message).toMatch(
      /^Could not connect server "refused": /,
    );
  });
});
