/**
 * Server→client requests through a streamable HTTP upstream: a real, stateful SDK server with an
 * event store asks the host for roots, a sampling completion and an elicitation — on the tool
 * call's own stream and on the session's GET stream — and notifies a subscriber that a
 * resource changed. Through every host transport the host is asked, its answers reach the
 * server, and the calls finish; no GET resumes with an event id of another stream. Streams cut
 * or closed mid-call are resumed; a host's bad `MCP-Protocol-Version` fails its own request only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  connect,
  HOST_KINDS,
  hostTransport,
  raw,
  startServe,
  type Connected,
  type ServeProcess,
} from "../helpers/proxyProcess.js";
import { startAskingServer, WATCHED_URI, type AskingServer } from "../fixtures/upstream-servers/askingServer.js";
import { CLI } from "../helpers/paths.js";
import { startRawStdio } from "../helpers/rawStdio.js";

const CALL_TIMEOUT = { timeout: 15_000 };
const BASE_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function textOf(result: Record<string, unknown>): string {
  return ((result.content as Array<{ text?: string }>)[0]?.text ?? "") as string;
}

describe("server→client requests through a streamable HTTP upstream", () => {
  let upstream: AskingServer;
  let serve: ServeProcess;
  beforeAll(async () => {
    upstream = await startAskingServer();
    serve = await startServe(["--name", "asking", "--url", upstream.url]);
  });
  afterAll(async () => {
    await serve?.stop();
    await upstream?.close();
  });

  for (const kind of HOST_KINDS) {
    it(`roots, sampling, elicitation and resource updates reach the host and come back over ${kind}`, async () => {
      const getsBefore = upstream.requests.filter((r) => r.method === "GET").length;
      const host: Connected = await connect(
        hostTransport(kind, { url: serve.url, name: "asking", stdioArgs: ["--url", upstream.url] }),
        { capabilities: { roots: {}, sampling: {}, elicitation: { form: {} } } },
      );
      const asked: string[] = [];
      host.client.setRequestHandler(ListRootsRequestSchema, async () => {
        asked.push("roots/list");
        return { roots: [{ uri: "file:///home/me/project", name: "project" }] };
      });
      host.client.setRequestHandler(CreateMessageRequestSchema, async () => {
        asked.push("sampling/createMessage");
        return { role: "assistant", model: "test-model", content: { type: "text", text: "hi there" } };
      });
      host.client.setRequestHandler(ElicitRequestSchema, async () => {
        asked.push("elicitation/create");
        return { action: "accept", content: { name: "Ada" } };
      });
      const updated: string[] = [];
      host.client.setNotificationHandler(
        ResourceUpdatedNotificationSchema,
        (notification) => void updated.push(notification.params.uri),
      );
      try {
        // Requests tied to no call travel on the upstream's GET stream: wait until it is open.
        await until(
          "the upstream GET stream",
          () => upstream.requests.filter((r) => r.method === "GET").length > getsBefore,
        );
        for (const via of ["call", "session"] as const) {
          const roots = await raw(host.client, "tools/call", { name: "ask-roots", arguments: { via } }, CALL_TIMEOUT);
          expect(JSON.parse(textOf(roots))).toEqual([{ uri: "file:///home/me/project", name: "project" }]);
          const sampled = await raw(
            host.client,
            "tools/call",
            { name: "ask-sampling", arguments: { via } },
            CALL_TIMEOUT,
          );
          expect(JSON.parse(textOf(sampled))).toEqual({ type: "text", text: "hi there" });
          const elicited = await raw(
            host.client,
            "tools/call",
            { name: "ask-elicitation", arguments: { via } },
            CALL_TIMEOUT,
          );
          expect(JSON.parse(textOf(elicited))).toEqual({ action: "accept", content: { name: "Ada" } });
        }
        expect(asked).toEqual([
          "roots/list",
          "sampling/createMessage",
          "elicitation/create",
          "roots/list",
          "sampling/createMessage",
          "elicitation/create",
        ]);

        await raw(host.client, "resources/subscribe", { uri: WATCHED_URI }, CALL_TIMEOUT);
        expect(textOf(await raw(host.client, "tools/call", { name: "touch", arguments: {} }, CALL_TIMEOUT))).toBe(
          "updated",
        );
        await until("notifications/resources/updated", () => updated.length > 0);
        expect(updated).toEqual([WATCHED_URI]);
      } finally {
        await host.close();
      }
      // Event ids belong to the stream that carried them: the GET stream never dropped here,
      // so no GET had anything of its own to resume from.
      expect(upstream.requests.filter((r) => r.method === "GET" && r.lastEventId !== undefined)).toEqual([]);
    });
  }

  // The server closes the call's stream (to have its client poll), or the network cuts it.
  const dropped = [
    { how: "whose stream the server closes", tool: "poll", answer: "answered on the resumed stream" },
    { how: "whose connection is cut mid-stream", tool: "cut", answer: "answered after the cut" },
  ];
  for (const { how, tool, answer } of dropped)
    for (const kind of HOST_KINDS) {
      it(`a call ${how} is answered, its stream resumed by its own last event id, over ${kind}`, async () => {
        const seen = upstream.requests.length;
        const host = await connect(
          hostTransport(kind, { url: serve.url, name: "asking", stdioArgs: ["--url", upstream.url] }),
        );
        try {
          const result = await raw(host.client, "tools/call", { name: tool, arguments: {} }, CALL_TIMEOUT);
          expect(textOf(result)).toBe(answer);
        } finally {
          await host.close();
        }
        const resumes = upstream.requests.slice(seen).filter((r) => r.method === "GET" && r.lastEventId !== undefined);
        expect(resumes.length).toBeGreaterThan(0);
        for (const { lastEventId } of resumes) {
          // The stream resumed is the one that carries the call's answer, no other.
          const stream = upstream.streamOf(lastEventId!);
          expect(stream).toBeDefined();
          expect(JSON.stringify(upstream.messagesOn(stream!))).toContain(answer);
        }
      });
    }

  /** The upstream's GET requests so far. */
  const gets = (): Array<{ lastEventId: string | undefined }> => upstream.requests.filter((r) => r.method === "GET");

  /**
   * A host over `/mcp` subscribed to the watched resource, once its session's upstream GET stream
   * is open: the updates it got, and how many GETs the upstream had seen before it.
   */
  async function watchingHost(): Promise<{ host: Connected; updated: string[]; before: number }> {
    const host = await connect(hostTransport("mcp", { url: serve.url, name: "asking" }));
    const updated: string[] = [];
    host.client.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (notification) => void updated.push(notification.params.uri),
    );
    const before = gets().length;
    await until("the upstream GET stream", () => gets().length > before);
    await raw(host.client, "resources/subscribe", { uri: WATCHED_URI }, CALL_TIMEOUT);
    return { host, updated, before };
  }

  it("a GET stream dropped again and again keeps reconnecting and carrying updates", async () => {
    const { host, updated } = await watchingHost();
    try {
      // More drops than the reconnection tries in a row a stream that never opens is given.
      for (let round = 1; round <= 4; round++) {
        const opened = gets().length;
        expect(textOf(await raw(host.client, "tools/call", { name: "drop-get", arguments: {} }, CALL_TIMEOUT))).toBe(
          "dropped",
        );
        await until(`the GET stream to reconnect (round ${round})`, () => gets().length > opened, 5_000);
        await raw(host.client, "tools/call", { name: "touch", arguments: {} }, CALL_TIMEOUT);
        await until(`the update of round ${round}`, () => updated.length === round, 5_000);
      }
    } finally {
      await host.close();
    }
  });

  it("a dropped GET stream reconnects with its own last event id, not a POST stream's, and still carries updates", async () => {
    const { host, updated, before } = await watchingHost();
    try {
      await raw(host.client, "tools/call", { name: "touch", arguments: {} }, CALL_TIMEOUT);
      await until("the first update", () => updated.length === 1);
      // Calls after the update: their POST streams carry later ids than the GET stream's last.
      expect(textOf(await raw(host.client, "tools/call", { name: "drop-get", arguments: {} }, CALL_TIMEOUT))).toBe(
        "dropped",
      );
      await until("the GET stream to reconnect", () => gets().length > before + 1);
      const reconnect = gets()[before + 1]!;
      expect(reconnect.lastEventId).toBeDefined();
      expect(upstream.streamOf(reconnect.lastEventId!)).toBe("_GET_stream");
      await raw(host.client, "tools/call", { name: "touch", arguments: {} }, CALL_TIMEOUT);
      await until("the second update", () => updated.length === 2);
    } finally {
      await host.close();
    }
  });

  it("a host's MCP-Protocol-Version the server refuses fails that request only, and does not stick to the session's later requests", async () => {
    const url = `${serve.url}/mcp/asking`;
    const send = async (body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(url, {
        method: "POST",
        headers: { ...BASE_HEADERS, ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      return { response, text: await response.text() };
    };
    const init = await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    const session = init.response.headers.get("mcp-session-id")!;
    expect(session).toBeTruthy();
    const inSession = { "mcp-session-id": session };
    expect((await send({ jsonrpc: "2.0", method: "notifications/initialized" }, inSession)).response.status).toBe(202);
    const refused = await send(
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      // A date past every revision the proxy knows goes on: the server refuses it.
      { ...inSession, "mcp-protocol-version": "2099-01-01" },
    );
    expect(refused.text).toMatch(/2099-01-01/);
    const later = await send({ jsonrpc: "2.0", id: 3, method: "tools/list" }, inSession);
    expect(later.text).toContain('"tools"');
    expect(later.text).not.toMatch(/2099-01-01/);
  });
});

describe("a server that asks its client for roots as soon as it is initialized", () => {
  let upstream: AskingServer;
  let serve: ServeProcess;
  beforeAll(async () => {
    upstream = await startAskingServer({ rootsOnInitialized: true });
    serve = await startServe(["--name", "asking", "--url", upstream.url]);
  });
  afterAll(async () => {
    await serve?.stop();
    await upstream?.close();
  });

  for (const kind of HOST_KINDS) {
    it(`is answered over ${kind}: the GET stream is open before the server hears notifications/initialized`, async () => {
      const asked: string[] = [];
      const host = await connect(
        hostTransport(kind, { url: serve.url, name: "asking", stdioArgs: ["--url", upstream.url] }),
        { capabilities: { roots: {} } },
      );
      host.client.setRequestHandler(ListRootsRequestSchema, async () => {
        asked.push("roots/list");
        return { roots: [{ uri: "file:///srv/data", name: "data" }] };
      });
      try {
        // The request is tied to no call: it travels on the GET stream, or nowhere if none is open yet.
        await until("roots/list to reach the host", () => asked.length > 0, 5000);
        const answer = await raw(
          host.client,
          "tools/call",
          { name: "roots-on-initialized", arguments: {} },
          CALL_TIMEOUT,
        );
        expect(JSON.parse(textOf(answer))).toEqual([{ uri: "file:///srv/data", name: "data" }]);
      } finally {
        await host.close();
      }
    });
  }
});

describe("a host that never sends notifications/initialized", () => {
  it("still gets what a streamable HTTP server sends outside a call: its first message opens the GET stream", async () => {
    const upstream = await startAskingServer();
    const host = startRawStdio(process.execPath, [CLI, "stdio", "--url", upstream.url]);
    try {
      const params = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };
      expect(await host.request(1, "initialize", params, 10_000)).toHaveProperty("result");
      // No notifications/initialized: the host goes straight on, as some clients do.
      expect(await host.request(2, "resources/subscribe", { uri: WATCHED_URI }, 10_000)).toHaveProperty("result");
      // A resource update is tied to no call: it travels on the GET stream, or nowhere.
      const updated = () => host.messages.some((m) => m.method === "notifications/resources/updated");
      for (let id = 3; !updated() && id < 40; id++) {
        await host.request(id, "tools/call", { name: "touch", arguments: {} }, 10_000);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(host.messages.find((m) => m.method === "notifications/resources/updated")).toMatchObject({
        params: { uri: WATCHED_URI },
      });
      expect(upstream.requests.filter((r) => r.method === "GET").length).toBeGreaterThan(0);
      expect(host.stderr()).toContain("before any notifications/initialized; the session's GET stream is opened now");
    } finally {
      await host.close();
      await upstream.close();
    }
  });
});
