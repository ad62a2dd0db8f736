/**
 * Stateless requests (no session, protocol 2026-07-28) are served by a small pool of started
 * upstreams per server, reused: not a child per POST. Checked by the pids the stdio upstream
 * reports and by the proxy's child processes; every POST numbers its request 1 and still gets
 * its own answer; idle upstreams are ended; a crash is answered and the pool recovers; clients
 * with different bearer tokens never share an upstream.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { post } from "../badInput/mcpHttp.js";
import { join } from "node:path";
import { FIXTURE_SERVER, ROOT } from "../helpers/paths.js";
import { FAULT_SERVER, RAW_UPSTREAM, serveConfig, toolText, untilGone, waitForStderr } from "../reliability/helpers.js";
import { childrenOf } from "../helpers/pids.js";

const POOL = 3;
const STATELESS = { "mcp-protocol-version": "2026-07-28" };

function call(url: string, name: string, args: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return post(
    url,
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
    undefined,
    { ...STATELESS, ...headers },
  );
}

async function pidOf(url: string, headers: Record<string, string> = {}): Promise<number> {
  const answer = await call(url, "pid", {}, headers);
  expect(answer.status).toBe(200);
  expect(answer.messages[0]!.id).toBe(1);
  return Number(toolText(answer.messages[0]!));
}

describe("the stateless pool", () => {
  let serve: ServeProcess;
  let url: string;
  beforeAll(async () => {
    serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { statelessPoolSize: POOL, sessionIdleMs: 3000 },
    });
    url = `${serve.url}/mcp/fx`;
  });
  afterAll(async () => {
    await serve?.stop();
  });

  it("40 POSTs one after another are served by one upstream", async () => {
    const pids = new Set<number>();
    for (let i = 0; i < 40; i++) pids.add(await pidOf(url));
    expect(pids.size).toBe(1);
  });

  it("12 concurrent POSTs, each with id 1: every one gets its own answer, from at most statelessPoolSize upstreams", async () => {
    // Calls long enough that the pool is still busy however slowly a loaded machine starts its children.
    const calls = Array.from({ length: 12 }, (_, i) => call(url, "sleep", { ms: 2500 + i * 10 }));
    // Busy upstreams make the pool grow to its size, and no further.
    await expect.poll(() => childrenOf(serve.child.pid!).length, { timeout: 2_000, interval: 50 }).toBe(POOL);
    for (const answer of await Promise.all(calls)) {
      expect(answer.status).toBe(200);
      expect(answer.messages).toHaveLength(1);
      expect(answer.messages[0]).toMatchObject({ id: 1, result: { content: [{ type: "text", text: "slept" }] } });
    }
    const pids = new Set(await Promise.all(Array.from({ length: 6 }, () => pidOf(url))));
    expect(pids.size).toBeLessThanOrEqual(POOL);
    expect(childrenOf(serve.child.pid!).length).toBeLessThanOrEqual(POOL);
  });

  it("upstreams idle for sessionIdleMs are ended; the next POST starts one again", async () => {
    const pid = await pidOf(url);
    await waitForStderr(serve, /"msg":"stateless pool: ending upstream"/, 15_000);
    expect(await untilGone(pid, 10_000)).toBe(true);
    const next = await pidOf(url);
    expect(next).not.toBe(pid);
  });

  it("a request that is not JSON-RPC 2.0 is answered at once with Invalid Request, not sent to an upstream", async () => {
    const started = Date.now();
    const answer = await post(
      url,
      JSON.stringify({ jsonrpc: "1.0", id: 1, method: "tools/list" }),
      undefined,
      STATELESS,
    );
    expect(answer.messages).toEqual([
      {
        jsonrpc: "2.0",
        id: 1,
        error: { code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0", not "1.0"' },
      },
    ]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("an upstream that crashes answers its request with the cause; the pool serves the next POST", async () => {
    const crashed = await call(url, "crash", { code: 3 });
    expect(crashed.messages[0]).toMatchObject({
      id: 1,
      error: { code: -32001, message: expect.stringContaining("exited with code 3") },
    });
    expect(await pidOf(url)).toBeGreaterThan(0);
  });

  it("an id past 2^53 comes back as the host wrote it, in the upstream's answer and in the pool's own error", async () => {
    const raw = async (name: string, args: Record<string, unknown>) => {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...STATELESS },
        body: `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"${name}","arguments":${JSON.stringify(args)}}}`,
      });
      return response.text();
    };
    // JSON.parse reads the id as 9007199254740992: an int64 host would find no request of its own.
    expect(await raw("pid", {})).toMatch(/"id":9007199254740993[,}]/);
    const crashed = await raw("crash", { code: 3 });
    expect(crashed).toMatch(/"id":9007199254740993[,}]/);
    expect(crashed).toContain("exited with code 3");
    // Refused at the door (not JSON-RPC 2.0): the refusal carries the id as written too.
    const refused = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...STATELESS },
      body: '{"jsonrpc":"1.0","id":9007199254740993,"method":"tools/call","params":{"name":"pid"}}',
    });
    const refusal = await refused.text();
    expect(refusal).toContain("Invalid Request");
    expect(refusal).toMatch(/"id":9007199254740993[,}]/);
  });
});

describe("stateless pools and bearer tokens", () => {
  it("clients with different tokens never share an upstream", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      auth: { bearerTokens: ["token-a-1", "token-b-2"] },
    });
    try {
      const url = `${serve.url}/mcp/fx`;
      const a = await pidOf(url, { authorization: "Bearer token-a-1" });
      const b = await pidOf(url, { authorization: "Bearer token-b-2" });
      expect(a).not.toBe(b);
      expect(await pidOf(url, { authorization: "Bearer token-a-1" })).toBe(a);
    } finally {
      await serve.stop();
    }
  });
});

describe("progress through a pooled upstream", () => {
  it("two concurrent POSTs with the same id and progress token each get their own progress and answer", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FIXTURE_SERVER] } },
      limits: { statelessPoolSize: 1 },
    });
    try {
      const url = `${serve.url}/mcp/fx`;
      const body = (steps: number) =>
        JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: { name: "progress", arguments: { steps }, _meta: { progressToken: "tok" } },
        });
      const [three, five] = await Promise.all([
        post(url, body(3), undefined, STATELESS),
        post(url, body(5), undefined, STATELESS),
      ]);
      for (const [answer, steps] of [
        [three, 3],
        [five, 5],
      ] as const) {
        const progress = answer.messages.filter((m) => m.method === "notifications/progress");
        expect(progress.map((m) => (m.params as { progressToken: unknown }).progressToken)).toEqual(
          Array(steps).fill("tok"),
        );
        expect(progress.map((m) => (m.params as { total: unknown }).total)).toEqual(Array(steps).fill(steps));
        const result = answer.messages.at(-1)!;
        expect(result).toMatchObject({ id: 7, result: { content: [{ type: "text", text: `done ${steps}` }] } });
      }
    } finally {
      await serve.stop();
    }
  });
});

/**
 * A raw stateless `tools/call` POST to `/mcp/fx` whose host reads nothing until the socket is
 * resumed (its `Connection: close` ends the socket with the answer).
 */
function pausedToolCall(serve: ServeProcess, params: Record<string, unknown>): Socket {
  const { hostname, port } = new URL(serve.url);
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params });
  const socket = connect(Number(port), hostname);
  socket.pause();
  socket.write(
    `POST /mcp/fx HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
      "Connection: close\r\nAccept: application/json, text/event-stream\r\n" +
      `Mcp-Protocol-Version: 2026-07-28\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return socket;
}

describe("a pool shared by clients", () => {
  /** Stateless clients sent 32 MiB each that read none of it, and another client's timed calls. */
  function clientsOf(serve: ServeProcess) {
    const sockets: Socket[] = [];
    return {
      slowReader(): void {
        sockets.push(pausedToolCall(serve, { name: "sleep", arguments: { ms: 0, pad: 32 * 1024 * 1024 } }));
      },
      /** How long another client waited for its answer (it fails past 15 s). */
      async timed(): Promise<number> {
        const started = Date.now();
        const answer = await Promise.race([
          call(`${serve.url}/mcp/fx`, "pid"),
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error("the other client waited 15 s")), 15_000),
          ),
        ]);
        expect(Number(toolText(answer.messages[0]!))).toBeGreaterThan(0);
        return Date.now() - started;
      },
      async end(): Promise<void> {
        for (const socket of sockets) socket.destroy();
        await serve.stop();
      },
    };
  }

  it("clients that never read their answers hold its upstreams for at most statelessHoldMs; others go to one not held", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { statelessPoolSize: 3, statelessHoldMs: 4000 },
    });
    const clients = clientsOf(serve);
    try {
      clients.slowReader();
      clients.slowReader();
      await waitForStderr(serve, /fault: sleeping[\s\S]*fault: sleeping/);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Two upstreams held, room for a third: another client is served by it at once.
      expect(await clients.timed()).toBeLessThan(3000);
      // Every upstream held: another client waits for the first hold to end, no longer.
      clients.slowReader();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await clients.timed()).toBeLessThan(8000);
    } finally {
      await clients.end();
    }
  });

  it("slow readers cannot take turns to hold one upstream: once one is cut off, the others are at once", async () => {
    // Longer than a busy machine takes to read and drop the six answers of 32 MiB, so that within
    // one hold of the first cut no later POST may hold the upstream again.
    const HOLD = 5000;
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { statelessPoolSize: 1, statelessHoldMs: HOLD },
    });
    const clients = clientsOf(serve);
    try {
      for (let i = 0; i < 6; i++) clients.slowReader();
      await waitForStderr(serve, new RegExp(Array(6).fill("fault: sleeping").join("[\\s\\S]*")));
      // Served after one hold, not after six in a row.
      expect(await clients.timed()).toBeLessThan(2 * HOLD);
      // Each POST cut after the first was cut as its answer came, not after holding the upstream.
      const cuts = serve
        .stderr()
        .split("\n")
        .filter((line) => line.includes("dropped from now on"))
        .map((line) => Date.parse(JSON.parse(line).time));
      expect(cuts.length).toBeGreaterThan(0);
      for (const cut of cuts) expect(cut - cuts[0]!).toBeLessThan(HOLD);
    } finally {
      await clients.end();
    }
  });

  it("a POST cut off is logged as it is cut, and the notifications it missed are counted when it ends", async () => {
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FIXTURE_SERVER] } },
      limits: { statelessPoolSize: 1, statelessHoldMs: 300 },
    });
    // Reads nothing of its 6 MB of progress.
    const socket = pausedToolCall(serve, {
      name: "progress",
      arguments: { steps: 60, pad: 100_000 },
      _meta: { progressToken: "t" },
    });
    try {
      const cut = await waitForStderr(
        serve,
        /[^\n]*notifications for its POST are dropped from now on[^\n]*\n/,
        20_000,
      );
      expect(cut).toContain('"limit":"limits.statelessHoldMs"');
      // The upstream, read again, sends the rest of its progress; then the host goes away.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      socket.destroy();
      const ended = await waitForStderr(serve, /[^\n]*stateless POST ended; notifications dropped[^\n]*\n/, 20_000);
      expect(Number(/"dropped":(\d+)/.exec(ended)?.[1])).toBeGreaterThan(0);
    } finally {
      socket.destroy();
      await serve.stop();
    }
  });

  it("a slow reader cut off long ago does not cost a later POST that falls behind briefly its notifications", async () => {
    // Long enough that the later POST, read slowly on a busy machine, stays within its budget.
    const HOLD = 3000;
    const serve = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FIXTURE_SERVER] } },
      limits: { statelessPoolSize: 1, statelessHoldMs: HOLD },
    });
    const sockets: Socket[] = [];
    const rawPost = (params: Record<string, unknown>): Socket => {
      const socket = pausedToolCall(serve, params);
      sockets.push(socket);
      return socket;
    };
    try {
      // Never reads its 32 MiB answer: held, then cut off, and its POST stays open.
      rawPost({ name: "big", arguments: { mib: 32 } });
      // Held, cut off (however long a busy machine took to make the answer), and the window after the cut over.
      await waitForStderr(serve, /notifications for its POST are dropped from now on/, HOLD + 20_000);
      await new Promise((resolve) => setTimeout(resolve, HOLD + 1000));
      // Falls behind for half a second only, with 6 MB of progress on the way: it is held, and gets all of it.
      const late = rawPost({ name: "progress", arguments: { steps: 60, pad: 100_000 }, _meta: { progressToken: "t" } });
      await new Promise((resolve) => setTimeout(resolve, 500));
      let text = "";
      late.setEncoding("utf8");
      late.on("data", (chunk: string) => (text += chunk));
      late.resume();
      await new Promise((resolve) => late.once("close", resolve));
      expect(text).toContain("done 60");
      expect(text.split('"method":"notifications/progress"').length - 1).toBe(60);
    } finally {
      for (const socket of sockets) socket.destroy();
      await serve.stop();
    }
  });
});

describe("what a pooled stdio upstream writes that is no message", () => {
  it("an empty array, a null, a nested array: not forwarded, logged; the POST still gets its answer", async () => {
    const serve = await serveConfig({ mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } } });
    try {
      const emit = ["[]", "[null]", "[[1]]"].map((line) => Buffer.from(`${line}\n`).toString("base64"));
      const answer = await post(
        `${serve.url}/mcp/raw`,
        JSON.stringify({ jsonrpc: "2.0", id: 9, method: "resources/read", params: { uri: "x", _emit: emit } }),
        undefined,
        STATELESS,
      );
      expect(answer.status).toBe(200);
      expect(answer.messages).toEqual([{ jsonrpc: "2.0", id: 9, result: { contents: [] } }]);
      await waitForStderr(serve, /pooled upstream sent an empty array; not forwarded/);
      await waitForStderr(serve, /"excerpt":"null".*pooled upstream sent JSON that is not a JSON-RPC message/);
      await waitForStderr(serve, /"excerpt":"\[1\]".*pooled upstream sent JSON that is not a JSON-RPC message/);
    } finally {
      await serve.stop();
    }
  });
});

describe("a pooled upstream's own request over limits.maxMessageBytes", () => {
  it("is answered -32003 to the upstream at once, under its id; the POST still gets its answer", async () => {
    const serve = await serveConfig({
      mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } },
      limits: { maxMessageBytes: 2000, statelessPoolSize: 1 },
    });
    try {
      const url = `${serve.url}/mcp/raw`;
      // Padded by the upstream itself, past the limit.
      const asking = '{"jsonrpc":"2.0","id":"up-big","method":"sampling/createMessage","params":{"pad":"__PAD__"}}\n';
      const body = (id: number, method: string, params: Record<string, unknown>) =>
        JSON.stringify({ jsonrpc: "2.0", id, method, params });
      const read = await post(
        url,
        body(1, "resources/read", { uri: "x", _emit: [Buffer.from(asking).toString("base64")], _pad: 3000 }),
        undefined,
        STATELESS,
      );
      expect(read.messages).toEqual([{ jsonrpc: "2.0", id: 1, result: { contents: [] } }]);
      const answers = await post(url, body(2, "_answers", {}), undefined, STATELESS);
      const got = (answers.messages[0]!.result as { answers: Array<{ id: unknown; error?: { code: number } }> })
        .answers;
      expect(got.find((a) => a.id === "up-big")?.error?.code).toBe(-32003);
    } finally {
      await serve.stop();
    }
  });
});

describe("server→client messages through a pooled upstream", () => {
  const RAW_UPSTREAM = join(ROOT, "test", "fixtures", "servers", "raw-upstream.mjs");
  const line = (message: unknown) => Buffer.from(`${JSON.stringify(message)}\n`).toString("base64");
  const asking = line({
    jsonrpc: "2.0",
    id: "s-1",
    method: "sampling/createMessage",
    params: { messages: [{ role: "user", content: { type: "text", text: "whose question?" } }], maxTokens: 5 },
  });
  const pinging = line({ jsonrpc: "2.0", id: "p-1", method: "ping" });
  const read = (params: Record<string, unknown>) =>
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "x:/", ...params } });

  it("with two hosts' requests in flight and nothing to tell them apart, neither host gets the upstream's question", async () => {
    const serve = await serveConfig({
      mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } },
      limits: { statelessPoolSize: 1 },
    });
    const first = new AbortController();
    try {
      const url = `${serve.url}/mcp/raw`;
      // Alone in flight, the question is its request's own.
      const alone = await post(url, read({ _emit: [asking] }), undefined, STATELESS);
      expect(alone.messages.map((m) => m.method ?? "answer")).toEqual(["sampling/createMessage", "answer"]);
      // Host A's request stays in flight (never answered); host B's asks a question meanwhile.
      const pending = fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...STATELESS },
        body: read({ _noFinal: true }),
        signal: first.signal,
      }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const second = await post(url, read({ _emit: [asking, pinging] }), undefined, STATELESS);
      expect(second.messages.map((m) => m.method ?? "answer")).toEqual(["answer"]);
      // The upstream's ping was answered by the proxy itself (a liveness check needs no host).
      const answers = await post(
        url,
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "_answers", params: {} }),
        undefined,
        STATELESS,
      );
      expect((answers.messages[0]!.result as { answers: unknown[] }).answers).toContainEqual({
        jsonrpc: "2.0",
        id: "p-1",
        result: {},
      });
      first.abort();
      await pending;
    } finally {
      first.abort();
      await serve.stop();
    }
  });

  it("a question goes out under an id no other client can guess: a guessed answer is not forwarded, the real one is", async () => {
    const serve = await serveConfig({
      mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } },
      limits: { statelessPoolSize: 1 },
    });
    try {
      const url = `${serve.url}/mcp/raw`;
      const asked = await post(url, read({ _emit: [asking] }), undefined, STATELESS);
      const question = asked.messages.find((m) => m.method === "sampling/createMessage")!;
      expect(question.id).toMatch(/^q-[\w-]{16}$/);
      const answer = (id: unknown, text: string) =>
        JSON.stringify({
          jsonrpc: "2.0",
          id,
          result: { role: "assistant", model: "m", content: { type: "text", text } },
        });
      // Another client of the pool answers every small number, and a string like the one it saw.
      for (let guess = 0; guess <= 20; guess++) await post(url, answer(guess, "HIJACKED"), undefined, STATELESS);
      await post(url, answer("q-AAAAAAAAAAAAAAAA", "HIJACKED"), undefined, STATELESS);
      await post(url, answer(question.id, "from the host asked"), undefined, STATELESS);
      const answers = await post(
        url,
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "_answers", params: {} }),
        undefined,
        STATELESS,
      );
      const got = (answers.messages[0]!.result as { answers: Array<{ id: unknown; result: unknown }> }).answers;
      expect(got.filter((a) => a.id === "s-1").map((a) => JSON.stringify(a.result))).toEqual([
        JSON.stringify({ role: "assistant", model: "m", content: { type: "text", text: "from the host asked" } }),
      ]);
    } finally {
      await serve.stop();
    }
  });

  it("a question to a host that left is answered at once, and no longer counts against limits.maxUpstreamRequests", async () => {
    const serve = await serveConfig({
      mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } },
      limits: { statelessPoolSize: 1, maxUpstreamRequests: 1 },
    });
    const leaving = new AbortController();
    try {
      const url = `${serve.url}/mcp/raw`;
      // Host A is asked, then leaves (its POST closed) before its request is answered.
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...STATELESS },
        body: read({ _emit: [asking], _noFinal: true }),
        signal: leaving.signal,
      });
      const reader = response.body!.getReader();
      let seen = "";
      while (!seen.includes("sampling/createMessage")) seen += new TextDecoder().decode((await reader.read()).value);
      leaving.abort();
      const answered = async () => {
        const answers = await post(
          url,
          JSON.stringify({ jsonrpc: "2.0", id: 2, method: "_answers", params: {} }),
          undefined,
          STATELESS,
        );
        return (answers.messages[0]!.result as { answers: Array<{ id: unknown; error?: { message: string } }> })
          .answers;
      };
      // The upstream's question is answered for the host that left, without waiting for a timeout.
      const deadline = Date.now() + 5_000;
      let got = await answered();
      while (!got.some((a) => a.id === "s-1") && Date.now() < deadline) got = await answered();
      expect(got.find((a) => a.id === "s-1")?.error?.message).toBe("the host's request it was asked for has ended");
      // Host B's request asks too: it is asked, not refused for A's question.
      const other = line({ ...JSON.parse(Buffer.from(asking, "base64").toString()), id: "s-2" });
      const second = await post(url, read({ _emit: [other] }), undefined, STATELESS);
      expect(second.messages.map((m) => m.method ?? "answer")).toEqual(["sampling/createMessage", "answer"]);
      expect((await answered()).some((a) => a.id === "s-2")).toBe(false);
    } finally {
      leaving.abort();
      await serve.stop();
    }
  });

  it("a batch is one host's: the question one of its requests asks reaches it", async () => {
    const serve = await serveConfig({
      mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } },
      limits: { statelessPoolSize: 1 },
    });
    try {
      const batch = `[${read({ _emit: [asking] })},${read({}).replace('"id":1', '"id":2')}]`;
      const answered = await post(`${serve.url}/mcp/raw`, batch, undefined, STATELESS);
      expect(answered.messages.map((m) => m.method ?? `answer ${String(m.id)}`).sort()).toEqual([
        "answer 1",
        "answer 2",
        "sampling/createMessage",
      ]);
    } finally {
      await serve.stop();
    }
  });
});
