/**
 * A host whose `/mcp` stream drops mid-call resumes it and loses nothing: the events of a
 * session's SSE streams carry ids, a POST's stream opens with a priming event, and a GET with
 * `Last-Event-ID` gets what the host missed and then what is still to come — the answer
 * included, though it came while the host was away. Real pieces: `serve` in front of the
 * everything server (its long-running tool sends progress, then answers), the SDK's client
 * reaching it through a TCP relay the test cuts, and raw HTTP for the ids themselves.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVERYTHING_SERVER, FIXTURE_SERVER } from "../helpers/paths.js";
import { FAULT_SERVER, RAW_UPSTREAM, serveConfig, waitForStderr } from "../reliability/helpers.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";

const PROTOCOL = "2025-11-25";

/** A TCP relay to `target` whose connections the test can cut all at once; it counts the GETs it carries. */
async function startRelay(
  target: URL,
): Promise<{ url: string; cut(): void; close(): Promise<void>; readonly gets: number }> {
  const sockets = new Set<Socket>();
  let gets = 0;
  const server: Server = createServer((inbound) => {
    inbound.on("data", (chunk: Buffer) => {
      gets += chunk.toString("latin1").match(/(^|\r\n)GET \/mcp/g)?.length ?? 0;
    });
    const outbound = tcpConnect(Number(target.port), target.hostname);
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get gets() {
      return gets;
    },
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A raw session on `url`: `initialize` with `protocolVersion` (no `initialized` unless asked);
 * the headers its later requests carry.
 */
async function openRawSession(
  url: string,
  protocolVersion = PROTOCOL,
  initialized = false,
): Promise<Record<string, string>> {
  const accept = "application/json, text/event-stream";
  const init = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });
  await init.text();
  const headers = {
    accept,
    "mcp-session-id": init.headers.get("mcp-session-id")!,
    "mcp-protocol-version": protocolVersion,
  };
  if (initialized) {
    const done = await fetch(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    await done.text();
  }
  return headers;
}

interface SseEvent {
  id?: string;
  data: string;
}

/** Reads SSE events off a fetch response until `stop` says so or the stream ends. */
async function readEvents(
  response: Response,
  stop: (events: SseEvent[]) => boolean = () => false,
): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      if (block.startsWith(":")) continue;
      const event: SseEvent = { data: "" };
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) event.id = line.slice(4);
        if (line.startsWith("data: ")) event.data = line.slice(6);
        if (line === "data:") event.data = "";
      }
      events.push(event);
    }
    if (stop(events)) {
      await reader.cancel();
      break;
    }
  }
  return events;
}

/** The progress values and answers among `events`, in order ("answer" for an answer). */
function progressOf(events: readonly SseEvent[]): Array<number | "answer"> {
  const out: Array<number | "answer"> = [];
  for (const event of events) {
    if (event.data === "") continue;
    const message = JSON.parse(event.data) as { method?: string; id?: unknown; params?: { progress?: number } };
    if (message.method === "notifications/progress") out.push(message.params!.progress!);
    else if (message.method === undefined && message.id !== undefined) out.push("answer");
  }
  return out;
}

describe("resuming a dropped /mcp stream", () => {
  let serve: ServeProcess;
  let mcpUrl: string;
  beforeAll(async () => {
    serve = await serveConfig({
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] } },
    });
    mcpUrl = `${serve.url}/mcp/everything`;
  });
  afterAll(async () => {
    await serve?.stop();
  });

  /** A raw session: initialize, initialized; returns its id. */
  async function rawSession(): Promise<string> {
    return (await openRawSession(mcpUrl, PROTOCOL, true))["mcp-session-id"]!;
  }

  const headers = (sessionId: string): Record<string, string> => ({
    accept: "application/json, text/event-stream",
    "mcp-session-id": sessionId,
    "mcp-protocol-version": PROTOCOL,
  });

  const longCall = (id: number, steps: number, duration: number) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name: "trigger-long-running-operation",
        arguments: { duration, steps },
        _meta: { progressToken: `p${id}` },
      },
    });

  it("the SDK's client gets every progress notification and the answer of a call whose streams were cut", async () => {
    const relay = await startRelay(new URL(serve.url));
    const client = new Client({ name: "resuming-host", version: "1" });
    const transport = new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp/everything`), {
      reconnectionOptions: {
        initialReconnectionDelay: 100,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1.5,
        maxRetries: 3,
      },
    });
    try {
      await client.connect(transport);
      const progress: number[] = [];
      let cut = false;
      const answer = client.callTool(
        { name: "trigger-long-running-operation", arguments: { duration: 3, steps: 6 } },
        undefined,
        {
          timeout: 15_000,
          onprogress: (p) => {
            progress.push(p.progress);
            // Every connection goes (the call's stream and the GET stream) after the second step.
            if (progress.length === 2 && !cut) {
              cut = true;
              relay.cut();
            }
          },
        },
      );
      const result = (await answer) as { content: Array<{ type: string; text: string }> };
      expect(cut).toBe(true);
      expect(result.content[0]!.text).toMatch(/Long running operation completed/);
      expect(progress).toEqual([1, 2, 3, 4, 5, 6]);
      // The session goes on after the resume.
      const tools = await client.listTools();
      expect(tools.tools.length).toBeGreaterThan(0);
      expect(serve.stderr()).not.toMatch(/dropped/i);
    } finally {
      await client.close();
      await relay.close();
    }
  }, 30_000);

  it("primes a POST's stream, numbers its events, and replays the ones after a Last-Event-ID", async () => {
    const sessionId = await rawSession();
    const response = await fetch(mcpUrl, {
      method: "POST",
      headers: { ...headers(sessionId), "content-type": "application/json" },
      body: longCall(7, 3, 0.6),
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = await readEvents(response);
    const [priming, ...rest] = events;
    expect(priming).toEqual({ id: expect.stringMatching(/^\d+\.0$/), data: "" });
    const stream = priming!.id!.split(".")[0];
    expect(rest.map((event) => event.id)).toEqual(rest.map((_, i) => `${stream}.${i + 1}`));
    // The server may tell of its tools first; then the progress, then the answer.
    expect(progressOf(rest)).toEqual([1, 2, 3, "answer"]);
    // The host saw the first progress only: it gets the rest again, answer last, and the stream ends.
    const firstProgress = rest.findIndex((event) => progressOf([event])[0] === 1);
    const resumed = await fetch(mcpUrl, {
      headers: { ...headers(sessionId), "last-event-id": rest[firstProgress]!.id! },
    });
    expect(resumed.status).toBe(200);
    // The host's place first (should this stream drop too, it comes back to it), then what it missed.
    expect(await readEvents(resumed)).toEqual([
      { id: rest[firstProgress]!.id, data: "" },
      ...rest.slice(firstProgress + 1),
    ]);
    // All of it taken, the call over: nothing more to come, and the host is told so (no stream to reopen).
    const over = await fetch(mcpUrl, { headers: { ...headers(sessionId), "last-event-id": rest.at(-1)!.id! } });
    expect(over.status).toBe(204);
  }, 20_000);

  it("keeps the answers owed on a stream that dropped, and sends them on the GET that resumes it", async () => {
    const sessionId = await rawSession();
    const controller = new AbortController();
    const response = await fetch(mcpUrl, {
      method: "POST",
      headers: { ...headers(sessionId), "content-type": "application/json" },
      body: longCall(8, 4, 1.2),
      signal: controller.signal,
    });
    // Gone after the first progress notification.
    const seen = await readEvents(response, (events) => progressOf(events).length === 1);
    controller.abort();
    // Back once the call is over: everything after the last id seen, the answer last.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const resumed = await fetch(mcpUrl, { headers: { ...headers(sessionId), "last-event-id": seen.at(-1)!.id! } });
    const rest = await readEvents(resumed);
    expect(progressOf(rest)).toEqual([2, 3, 4, "answer"]);
    expect(JSON.parse(rest.at(-1)!.data)).toMatchObject({ id: 8, result: { content: [{ type: "text" }] } });
  }, 20_000);

  it("moves a stream still open to the GET that resumes it, and ends the first", async () => {
    const sessionId = await rawSession();
    const response = await fetch(mcpUrl, {
      method: "POST",
      headers: { ...headers(sessionId), "content-type": "application/json" },
      body: longCall(9, 4, 1.2),
    });
    // The host takes its stream for dropped after the first progress, though the proxy still has it open.
    let resumed: Promise<SseEvent[]> | undefined;
    const first = await readEvents(response, (events) => {
      if (resumed === undefined && progressOf(events).length === 1) {
        const lastId = events.at(-1)!.id!;
        resumed = fetch(mcpUrl, { headers: { ...headers(sessionId), "last-event-id": lastId } }).then(readEvents);
      }
      return false;
    });
    expect(progressOf(await resumed!)).toEqual([2, 3, 4, "answer"]);
    // The first stream ended when the resume took its place, long before the answer.
    expect(progressOf(first)).not.toContain("answer");
    expect(progressOf(first)[0]).toBe(1);
  }, 20_000);

  it("refuses a Last-Event-ID it never sent, and leaves the GET stream open", async () => {
    const sessionId = await rawSession();
    const get = await fetch(mcpUrl, { headers: headers(sessionId) });
    expect(get.status).toBe(200);
    const refused = await fetch(mcpUrl, { headers: { ...headers(sessionId), "last-event-id": "99.5" } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /Cannot resume stream 99 after event 5/,
    );
    // The GET stream was not replaced: it has not ended (a GET that took its place would end it).
    const reader = get.body!.getReader();
    const first = await Promise.race([
      reader.read(),
      new Promise<"open">((resolve) => setTimeout(() => resolve("open"), 500)),
    ]);
    expect(first === "open" || first.done === false).toBe(true);
    await reader.cancel();
  }, 20_000);
});

describe("with limits.sseReplayBytes 0", () => {
  it("sends no event ids and no priming event", async () => {
    const serve = await serveConfig({
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] } },
      limits: { sseReplayBytes: 0 },
    });
    try {
      const url = `${serve.url}/mcp/everything`;
      const headers = await openRawSession(url);
      const response = await fetch(url, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: "trigger-long-running-operation",
            arguments: { duration: 0.6, steps: 2 },
            _meta: { progressToken: "t" },
          },
        }),
      });
      const events = await readEvents(response);
      expect(events.length).toBe(3);
      expect(events.every((event) => event.id === undefined && event.data !== "")).toBe(true);
    } finally {
      await serve.stop();
    }
  }, 20_000);
});

describe("resuming the GET stream", () => {
  let serve: ServeProcess;
  let url: string;
  beforeAll(async () => {
    serve = await serveConfig({
      mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } },
      limits: { sseReplayBytes: 3000 },
    });
    url = `${serve.url}/mcp/raw`;
  });
  afterAll(async () => {
    await serve?.stop();
  });

  const session = () => openRawSession(url);
  /** POSTs a message in the session whose headers are `headers`. */
  const postIn = (headers: Record<string, string>) => (body: unknown) =>
    fetch(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  /** A line the raw upstream writes as it is (`_emit`). */
  const line = (message: unknown) => Buffer.from(`${JSON.stringify(message)}\n`).toString("base64");

  /** Has the upstream answer, then send log notifications `data`: tied to no request, they go on the GET stream. */
  async function emit(headers: Record<string, string>, id: number, data: readonly string[]): Promise<void> {
    const lines = [
      line({ jsonrpc: "2.0", id: "__ID__", result: {} }),
      ...data.map((d) => line({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: d } })),
    ];
    const response = await fetch(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "x", _emit: lines, _noFinal: true },
      }),
    });
    await response.text();
  }

  /** The messages among `events` (a priming event carries an id and no data). */
  const messagesOf = (events: readonly SseEvent[]) => events.filter((e) => e.data !== "");
  /** The first message `events` reads (a stream read until it has one); a failure naming `where` after 5 s. */
  async function firstMessage(events: Promise<SseEvent[]>, where: string): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`nothing on ${where}`)), 5_000);
    });
    try {
      return JSON.parse(messagesOf(await Promise.race([events, timeout]))[0]!.data);
    } finally {
      clearTimeout(timer);
    }
  }
  const dataOf = (events: readonly SseEvent[]) =>
    events.map((e) => (JSON.parse(e.data) as { params: { data: string } }).params.data);

  it("gets what it missed, then what was queued while it was away, in order", async () => {
    const headers = await session();
    const get = await fetch(url, { headers });
    const reading = readEvents(get, (events) => messagesOf(events).length === 3);
    await emit(headers, 1, ["n1", "n2", "n3"]);
    const all = await reading;
    // The GET stream opens with the host's place, so a drop before anything comes can be resumed.
    expect(all[0]).toEqual({ id: "0.0", data: "" });
    const seen = messagesOf(all);
    expect(dataOf(seen)).toEqual(["n1", "n2", "n3"]);
    expect(seen.map((e) => e.id)).toEqual(["0.1", "0.2", "0.3"]);
    // Dropped having taken only the first; two more come while no GET stream is open.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await emit(headers, 2, ["n4", "n5"]);
    const resumed = await fetch(url, { headers: { ...headers, "last-event-id": "0.1" } });
    const events = messagesOf(await readEvents(resumed, (got) => messagesOf(got).length === 4));
    expect(dataOf(events)).toEqual(["n2", "n3", "n4", "n5"]);
    expect(events.map((e) => e.id)).toEqual(["0.2", "0.3", "0.4", "0.5"]);
  }, 20_000);

  it("a progress notification for a request already answered goes on the GET stream, not on another request's", async () => {
    const headers = await session();
    const post = postIn(headers);
    const get = await fetch(url, { headers });
    const onGet = readEvents(get, (events) => messagesOf(events).length === 1);
    // A waits (never answered); B is answered, then its late progress comes, tied to no stream.
    const waiting = await post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "a", _noFinal: true } });
    const onWaiting = readEvents(waiting);
    const progress = {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: "tok-B", progress: 1 },
    };
    const answered = await post({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: {
        name: "b",
        _meta: { progressToken: "tok-B" },
        _emit: [line({ jsonrpc: "2.0", id: "__ID__", result: {} }), line(progress)],
        _noFinal: true,
      },
    });
    await answered.text();
    expect(await firstMessage(onGet, "the GET stream")).toEqual(progress);
    await fetch(url, { method: "DELETE", headers });
    const methods = messagesOf(await onWaiting).map((e) => (JSON.parse(e.data) as { method?: string }).method);
    expect(methods).toEqual([undefined]);
  }, 20_000);

  it("progress for a request the host cancelled goes on the GET stream, not on the next request's", async () => {
    const headers = await session();
    const post = postIn(headers);
    const get = await fetch(url, { headers });
    const onGet = readEvents(get, (events) => messagesOf(events).length === 1);
    const progress = {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: "tok-C", progress: 1 },
    };
    const cancelled = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "a", _meta: { progressToken: "tok-C" }, _noFinal: true },
    });
    const onCancelled = readEvents(cancelled);
    await post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }).then((r) => r.text());
    // The next request waits; the server still sends the cancelled one's progress meanwhile.
    const next = await post({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "b", _emit: [line(progress)], _noFinal: true },
    });
    const onNext = readEvents(next);
    expect(await firstMessage(onGet, "the GET stream")).toEqual(progress);
    await fetch(url, { method: "DELETE", headers });
    const methodsOf = (events: readonly SseEvent[]) => messagesOf(events).map((e) => JSON.parse(e.data).method);
    expect(methodsOf(await onNext)).toEqual([undefined]);
    expect(methodsOf(await onCancelled)).toEqual([]);
  }, 20_000);

  it("a token two requests share (against MCP's rule) still leads to the one still waiting", async () => {
    const headers = await session();
    const post = postIn(headers);
    const progress = {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: "tok-S", progress: 1 },
    };
    const call = (id: number, params: Record<string, unknown>) =>
      post({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "s", _meta: { progressToken: "tok-S" }, ...params },
      });
    await call(1, { _noFinal: true });
    const second = await call(2, { _noFinal: true });
    const onSecond = readEvents(second, (events) => messagesOf(events).length === 1);
    // The upstream answers the first, then sends progress under the token the second shares.
    await post({
      jsonrpc: "2.0",
      id: 3,
      method: "x/emit",
      params: { _emit: [line({ jsonrpc: "2.0", id: 1, result: {} }), line(progress)] },
    }).then((r) => r.text());
    expect(await firstMessage(onSecond, "request 2's stream")).toEqual(progress);
    await fetch(url, { method: "DELETE", headers });
  }, 20_000);

  it("a task's progress after the answer that created it goes with the request waiting on the task", async () => {
    const headers = await session();
    const post = postIn(headers);
    const progress = {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: "tok-T", progress: 5 },
    };
    const created = { task: { taskId: "t-1", status: "working", createdAt: "2026-01-01T00:00:00Z", ttl: 60_000 } };
    const call = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "t", task: {}, _meta: { progressToken: "tok-T" }, _noFinal: true },
    });
    const onCall = readEvents(call);
    // The host waits on the task (never answered here); meanwhile the upstream answers the call
    // with the task, then sends the task's progress under the call's token.
    const result = await post({
      jsonrpc: "2.0",
      id: 2,
      method: "tasks/result",
      params: {
        taskId: "t-1",
        _emit: [line({ jsonrpc: "2.0", id: 1, result: created }), line(progress)],
        _noFinal: true,
      },
    });
    const onResult = readEvents(result, (events) => messagesOf(events).length === 1);
    expect(await firstMessage(onResult, "the tasks/result stream")).toEqual(progress);
    await fetch(url, { method: "DELETE", headers });
    expect(messagesOf(await onCall).map((e) => JSON.parse(e.data).result)).toEqual([created]);
  }, 20_000);

  it("keeps at most limits.sseReplayBytes, and says what a resume missed", async () => {
    const headers = await session();
    const get = await fetch(url, { headers });
    const many = Array.from({ length: 12 }, (_, i) => `m${i + 1}-${"x".repeat(40)}`);
    const reading = readEvents(get, (events) => messagesOf(events).length === many.length);
    await emit(headers, 1, many);
    expect(dataOf(messagesOf(await reading))).toEqual(many);
    const resumed = await fetch(url, { headers: { ...headers, "last-event-id": "0.0" } });
    const events = messagesOf(await readEvents(resumed, (got) => messagesOf(got).length > 0));
    // ~130 bytes an event: the oldest went; the newest are kept, in order, with their own ids.
    const kept = Number(events[0]!.id!.split(".")[1]);
    expect(kept).toBeGreaterThan(1);
    expect(dataOf(events)[0]).toBe(many[kept - 1]);
    await waitForStderr(
      serve,
      /Resumed stream 0 without \d+ of its events: they no longer fit limits\.sseReplayBytes \(3000 bytes\)/,
    );
  }, 20_000);
});

describe("resumes that must end", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await serveConfig({
      mcpServers: {
        fx: { command: process.execPath, args: [FAULT_SERVER] },
        everything: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] },
        // Answers every request, cancelled or not (an SDK server may drop one cancelled in the same read).
        raw: { command: process.execPath, args: [RAW_UPSTREAM] },
      },
      limits: { sessionIdleMs: 1500 },
    });
  });
  afterAll(async () => {
    await serve?.stop();
  });

  const client = (relay: { url: string }, name: string) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp/${name}`), {
      reconnectionOptions: {
        initialReconnectionDelay: 100,
        maxReconnectionDelay: 500,
        reconnectionDelayGrowFactor: 1.5,
        maxRetries: 3,
      },
    });
    return { host: new Client({ name: "resuming-host", version: "1" }), transport };
  };

  it("a slow call that ends in an error: the SDK's client stops coming back for its stream", async () => {
    const relay = await startRelay(new URL(serve.url));
    const { host, transport } = client(relay, "fx");
    try {
      await host.connect(transport);
      await expect(
        host.callTool({ name: "sleep", arguments: { ms: 1200, fail: true } }, undefined, { timeout: 10_000 }),
      ).rejects.toThrow(/failed after sleeping/);
      const after = relay.gets;
      await new Promise((resolve) => setTimeout(resolve, 3000));
      // Its GET stream may reconnect once; a loop of resumes would be several a second.
      expect(relay.gets - after).toBeLessThanOrEqual(1);
    } finally {
      await host.close();
      await relay.close();
    }
  }, 30_000);

  it("a resumed stream that drops again is resumed again, and the call still gets its answer", async () => {
    const relay = await startRelay(new URL(serve.url));
    const { host, transport } = client(relay, "everything");
    try {
      await host.connect(transport);
      let cuts = 0;
      const progress: number[] = [];
      const result = (await host.callTool(
        { name: "trigger-long-running-operation", arguments: { duration: 3, steps: 6 } },
        undefined,
        {
          timeout: 8_000,
          onprogress: (p) => {
            progress.push(p.progress);
            // Cut after the first step, and again once the resume has reconnected, before the
            // resumed stream has carried anything: the host's place must still be known.
            if (p.progress === 1) {
              cuts++;
              relay.cut();
              setTimeout(() => {
                cuts++;
                relay.cut();
              }, 300);
            }
          },
        },
      )) as { content: Array<{ text: string }> };
      expect(cuts).toBe(2);
      expect(result.content[0]!.text).toMatch(/Long running operation completed/);
      expect(progress).toEqual([1, 2, 3, 4, 5, 6]);
    } finally {
      await host.close();
      await relay.close();
    }
  }, 30_000);

  it("a call the SDK's client gives up on: its resume is told there is no more, and nothing is said to be lost", async () => {
    const relay = await startRelay(new URL(serve.url));
    const { host, transport } = client(relay, "fx");
    try {
      await host.connect(transport);
      const before = serve.stderr().length;
      await expect(
        host.callTool({ name: "sleep", arguments: { ms: 3000 } }, undefined, { timeout: 1000 }),
      ).rejects.toThrow(/timed out/i);
      const after = relay.gets;
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(relay.gets - after).toBeLessThanOrEqual(2);
      expect(serve.stderr().slice(before)).not.toMatch(/which is over/);
    } finally {
      await host.close();
      await relay.close();
    }
  }, 30_000);

  it("a cancel before its request in the same batch cancels nothing: the request is answered", async () => {
    const url = `${serve.url}/mcp/raw`;
    // 2025-03-26: the last version with JSON-RPC batches.
    const headers = await openRawSession(url, "2025-03-26");
    const response = await fetch(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify([
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" } },
      ]),
    });
    expect(await response.json()).toEqual([{ jsonrpc: "2.0", id: 1, result: { contents: [] } }]);
  }, 20_000);

  it("a host that cancels a call whose stream dropped does not keep its session alive", async () => {
    const url = `${serve.url}/mcp/fx`;
    const h = await openRawSession(url);
    const post = (body: unknown, signal?: AbortSignal) =>
      fetch(url, {
        method: "POST",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal,
      });
    const controller = new AbortController();
    const call = await post(
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "sleep", arguments: { ms: 60_000 } } },
      controller.signal,
    );
    // The stream opens (its priming event) once the lazy window is over; then the host drops it and cancels.
    await readEvents(call, (events) => events.length > 0);
    controller.abort();
    await (await post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5 } })).text();
    // Idle for longer than limits.sessionIdleMs: the session is over.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    const ping = await post({ jsonrpc: "2.0", id: 6, method: "ping" });
    expect(ping.status).toBe(404);
  }, 20_000);
});

describe("answers the replay log cannot hold", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { sseReplayBytes: 4096 },
    });
  });
  afterAll(async () => {
    await serve?.stop();
  });

  const sleepCall = (id: number, ms: number, pad: number) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "sleep", arguments: { ms, pad } },
  });

  it("an answer too large to keep, come while the stream was down: the SDK's client is told at once to ask again", async () => {
    const relay = await startRelay(new URL(serve.url));
    const transport = new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp/fx`), {
      reconnectionOptions: {
        initialReconnectionDelay: 1500,
        maxReconnectionDelay: 1500,
        reconnectionDelayGrowFactor: 1,
        maxRetries: 3,
      },
    });
    const host = new Client({ name: "resuming-host", version: "1" });
    try {
      await host.connect(transport);
      // The call's stream opens (primed) after the proxy's lazy window; it is cut, and the
      // answer comes before the host is back.
      setTimeout(() => relay.cut(), 900);
      const started = Date.now();
      const error = await host
        .callTool({ name: "sleep", arguments: { ms: 1200, pad: 8000 } }, undefined, { timeout: 15_000 })
        .then(
          () => "answered",
          (e: Error) => e.message,
        );
      expect(error).toMatch(/no longer held \(limits\.sseReplayBytes, 4096 bytes\): send the request again/);
      expect(Date.now() - started).toBeLessThan(8_000);
    } finally {
      await host.close();
      await relay.close();
    }
  }, 30_000);

  it("an answer kept, then let go for newer events: the resume gets an error for its request in its place", async () => {
    const url = `${serve.url}/mcp/fx`;
    const h = await openRawSession(url, PROTOCOL, true);
    const post = (body: unknown, signal?: AbortSignal, accept = h.accept!) =>
      fetch(url, {
        method: "POST",
        headers: { ...h, accept, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal,
      });
    const controller = new AbortController();
    const first = await post(sleepCall(1, 1000, 2500), controller.signal);
    const primed = await readEvents(first, (events) => events.length >= 1);
    controller.abort();
    // Its answer (kept: it fits) comes while the host is away; then another call's answer, on a
    // stream (a host that takes only SSE), pushes it out.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const second = await post(sleepCall(2, 0, 2500), undefined, "text/event-stream");
    expect(await second.text()).toContain("slept");
    const resumed = await fetch(url, { headers: { ...h, "last-event-id": primed[0]!.id! } });
    const events = (await readEvents(resumed)).filter((e) => e.data !== "");
    expect(events.map((e) => JSON.parse(e.data))).toEqual([
      {
        jsonrpc: "2.0",
        id: 1,
        error: {
          code: -32000,
          message: expect.stringMatching(/^The answer came while the host's stream was down and is no longer held/),
        },
      },
    ]);
  }, 20_000);
});

describe("a request answered as plain JSON", () => {
  it("names no stream: a Last-Event-ID of one gets 400, not 204", async () => {
    // A server that sends nothing beside its answers: each is answered as plain JSON.
    const serve = await serveConfig({ mcpServers: { quiet: { command: process.execPath, args: [FIXTURE_SERVER] } } });
    try {
      const url = `${serve.url}/mcp/quiet`;
      const headers = await openRawSession(url, PROTOCOL, true);
      const ping = await fetch(url, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" }),
      });
      expect(ping.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await ping.json()).toMatchObject({ id: 5, result: {} });
      // initialize, and this ping: neither opened a stream, so no id of the session names one.
      for (const id of ["1.0", "2.0"]) {
        const resumed = await fetch(url, { headers: { ...headers, "last-event-id": id } });
        expect(resumed.status, id).toBe(400);
        await resumed.text();
      }
    } finally {
      await serve.stop();
    }
  });
});
