/**
 * A request with a member JSON-RPC 2.0 §4 does not name (`"foo"`, a top-level `"__proto__"`) is
 * one the official servers drop without an answer (the TypeScript SDK reads a request
 * strictly): the proxy answers it at once with Invalid Request, naming the member, instead of
 * forwarding it to wait out `limits.requestTimeoutMs`. The same names inside `params` are the
 * server's business and still go through. A raw host on `stdio` in front of the official
 * everything server, writing lines as a hostile host would.
 */
import { describe, expect, it } from "vitest";
import { everythingBehindStdio } from "../helpers/rawStdio.js";
import { EVERYTHING_SERVER } from "../helpers/paths.js";
import { getJson, initializedWs, rawWs, serveConfig } from "../reliability/helpers.js";

const proxy = everythingBehindStdio();

/** Writes `line` as it is and resolves with the answer to `id` (fails after `timeoutMs`). */
async function answerTo(line: string, id: number, timeoutMs = 5000): Promise<Record<string, unknown>> {
  proxy().child.stdin.write(`${line}\n`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = proxy().messages.find((m) => m.id === id && m.method === undefined);
    if (answer !== undefined) return answer;
    if (Date.now() > deadline) throw new Error(`no answer to id ${id} in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("a request with a member JSON-RPC does not name", () => {
  it.each([
    [1, '"__proto__":{"polluted":1}', '"__proto__"'],
    [2, '"__proto__":null', '"__proto__"'],
    [3, '"foo":1', '"foo"'],
    [4, '"constructor":{"a":1}', '"constructor"'],
  ])("id %s with %s: answered at once with -32600 naming it, not forwarded", async (id, member, name) => {
    const line = `{"jsonrpc":"2.0","id":${id},"method":"tools/call",${member},"params":{"name":"echo","arguments":{"message":"x"}}}`;
    const answer = await answerTo(line, id);
    expect(answer.error).toEqual({
      code: -32600,
      message: `Invalid Request: a request has only "jsonrpc", "id", "method" and "params", not ${name}`,
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("the same names inside params still reach the server and are answered", async () => {
    const line =
      '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","__proto__":{"x":1},"arguments":{"message":"in params"}}}';
    const answer = await answerTo(line, 10, 10_000);
    expect(answer.result).toMatchObject({ content: [{ type: "text", text: "Echo: in params" }] });
  });
});

describe("a request whose id has a fraction", () => {
  it("is answered at once with -32600 under that id, not forwarded (the official servers drop it)", async () => {
    const line = '{"jsonrpc":"2.0","id":1.5,"method":"ping"}';
    const answer = await answerTo(line, 1.5);
    expect(answer.error).toEqual({
      code: -32600,
      message: 'Invalid Request: "id" must be a string or an integer, not 1.5',
    });
  });

  it.each(["9007199254740993.5", "-12345678901234567890.25", "1234567890123456789.55e1"])(
    "id %s, past 2^53 where JSON.parse rounds it to an integer, is judged as written: -32600 at once",
    async (written) => {
      proxy().child.stdin.write(`{"jsonrpc":"2.0","id":${written},"method":"ping"}\n`);
      const deadline = Date.now() + 5000;
      const rounded = JSON.parse(written) as number;
      let answer: Record<string, unknown> | undefined;
      while (answer === undefined && Date.now() < deadline) {
        answer = proxy().messages.find((m) => m.id === rounded && m.method === undefined);
        if (answer === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(answer?.error).toEqual({
        code: -32600,
        message: `Invalid Request: "id" must be a string or an integer, not ${written}`,
      });
    },
  );

  it("an integer written with a fraction of zero (1.0) is an integer, and goes through", async () => {
    const answer = await answerTo('{"jsonrpc":"2.0","id":21.0,"method":"ping"}', 21);
    expect(answer.result).toEqual({});
  });
});

describe("a request whose params is an array (JSON-RPC's by-position params; MCP names them)", () => {
  it("is answered at once with -32602, not forwarded (the official servers drop it)", async () => {
    const answer = await answerTo('{"jsonrpc":"2.0","id":31,"method":"ping","params":[]}', 31);
    expect(answer.error).toEqual({
      code: -32602,
      message: 'Invalid params: MCP\'s "params" is an object, not an array',
    });
  });
});

describe("an initialize whose params is an array, from one host of serve", () => {
  it("is refused to that host; the server is not judged hung at start, and the next host is served at once", async () => {
    const serve = await serveConfig(
      { mcpServers: { ev: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] } } },
      {},
      [],
    );
    try {
      const hostile = await rawWs(serve.url, "ev");
      const refused = await hostile.request(1, "initialize", [1, 2], 5000);
      expect(refused.error).toMatchObject({ code: -32602 });
      await hostile.close();
      const host = await initializedWs(serve.url, "ev");
      await host.close();
      const { body } = await getJson(`${serve.url}/healthz`);
      const ev = (body.servers as Record<string, { status: string; upstreamFailures: number }>).ev!;
      expect(ev.upstreamFailures).toBe(0);
      expect(ev.status).not.toBe("down");
    } finally {
      await serve.stop();
    }
  });
});
