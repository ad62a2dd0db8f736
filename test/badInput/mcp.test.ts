/**
 * Bad input through `serve`'s /mcp, both directions, with a second session open the
 * whole time that must be untouched: its request waiting across all of it gets its own answer,
 * and it answers pings throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { waitForStderr } from "../reliability/helpers.js";
import { MAX_MESSAGE_BYTES, rawUpstreamConfig, upstreamRequest, UPSTREAM_CASES } from "./cases.js";
import { openSession, post, rpc } from "./mcpHttp.js";

let serve: ServeProcess;
let url: string;
let bad: string;
let other: string;
let otherWaiting: Promise<Awaited<ReturnType<typeof post>>>;

const b64 = (s: string): string => Buffer.from(s).toString("base64");

beforeAll(async () => {
  serve = await startServe(["--config", rawUpstreamConfig()]);
  url = `${serve.url}/mcp/raw`;
  bad = await openSession(url);
  other = await openSession(url);
  // The other session's request waits (its upstream writes nothing yet) through everything below.
  otherWaiting = post(url, rpc("other-waiting", "resources/read", { _noFinal: true }), other);
});

afterAll(async () => {
  expect(await serve.stop()).toBe(0);
});

describe("/mcp: bad input from the host", () => {
  it("malformed JSON: 400 with -32700, logged", async () => {
    const r = await post(url, '{"jsonrpc":"2.0","id":1,', bad);
    expect(r.status).toBe(400);
    expect(r.messages[0]?.error).toMatchObject({ code: -32700 });
  });

  it("invalid UTF-8: 400 with -32700", async () => {
    const r = await post(
      url,
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'),
        Buffer.from([0xff, 0xc3]),
        Buffer.from('"}}'),
      ]),
      bad,
    );
    expect(r.status).toBe(400);
    expect(r.messages[0]?.error).toMatchObject({ code: -32700, message: expect.stringMatching(/UTF-8/) });
  });

  it.each([
    ["42"],
    ["null"],
    ['{"foo":1}'],
    ['[{"jsonrpc":"2.0","id":1,"method":"ping"},7]'],
    // An id that is neither a string nor a number: not a notification (202) either.
    ['{"jsonrpc":"2.0","id":true,"method":"ping"}'],
    ['{"jsonrpc":"2.0","id":[1],"method":"ping"}'],
    ['{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}'],
  ])("JSON that is not JSON-RPC (%s): 400 with -32600", async (body) => {
    const r = await post(url, body, bad);
    expect(r.status).toBe(400);
    expect(r.messages[0]?.error).toMatchObject({ code: -32600 });
  });

  it("a batch (protocol 2025-06-18 has none): each request in it gets exactly one answer", async () => {
    const r = await post(url, JSON.stringify([JSON.parse(rpc("b1", "ping")), JSON.parse(rpc("b2", "ping"))]), bad);
    expect(r.messages.map((m) => m.id).sort()).toEqual(["b1", "b2"]);
  });

  it("a response to no request: accepted (202), not forwarded, logged", async () => {
    const r = await post(url, JSON.stringify({ jsonrpc: "2.0", id: "never-asked", result: {} }), bad);
    expect(r.status).toBe(202);
    await waitForStderr(serve, /"id":"never-asked".*host answered a request the upstream did not send/);
  });

  it("a duplicate id of a request still waiting gets -32600; the first still gets its answer", async () => {
    // An SSE-only host: its headers arrive at once (no lazy JSON window), so the first request is
    // registered before the second is sent.
    const first = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", "mcp-session-id": bad },
      body: rpc("dup", "resources/read", { _noFinal: true }),
    });
    expect(first.headers.get("content-type")).toMatch(/text\/event-stream/);
    const second = await post(url, rpc("dup", "resources/read"), bad);
    expect(second.messages[0]?.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/already used by a request still waiting/),
    });
    await post(
      url,
      rpc("release", "resources/read", { _emit: [b64('{"jsonrpc":"2.0","id":"dup","result":{"contents":[]}}\n')] }),
      bad,
    );
    expect(await first.text()).toMatch(/"id":"dup","result":\{"contents":\[\]\}/);
  });

  it("a body over the limit: 413 naming it; the session goes on", async () => {
    const r = await post(url, rpc("huge", "ping", { x: "a".repeat(MAX_MESSAGE_BYTES + 10) }), bad);
    expect(r.status).toBe(413);
    expect(JSON.stringify(r.messages)).toMatch(/maxBodyBytes|maxMessageBytes/);
  });

  it("100k nested arrays (over limits.maxMessageNodes) are refused unparsed: 413 under its id, the session goes on", async () => {
    const r = await post(
      url,
      `{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`,
      bad,
    );
    expect(r.status).toBe(413);
    expect(r.messages).toEqual([
      {
        jsonrpc: "2.0",
        id: "deep",
        error: {
          code: -32003,
          message: expect.stringMatching(/^Message too large: more than limits\.maxMessageNodes /),
        },
      },
    ]);
    expect((await post(url, rpc("after-deep", "ping"), bad)).messages[0]).toMatchObject({ result: {} });
  });

  it("lone surrogates in a request pass and are answered", async () => {
    const r = await post(url, '{"jsonrpc":"2.0","id":"sur","method":"ping","params":{"x":"\\udc00"}}', bad);
    expect(r.messages[0]).toMatchObject({ id: "sur", result: {} });
  });
});

describe("/mcp: bad input from the upstream", () => {
  for (const c of UPSTREAM_CASES) {
    it(`${c.name}: one answer${c.log === undefined ? "" : ", logged"}; the session goes on`, async () => {
      const { id, params } = upstreamRequest(c);
      const r = await post(url, rpc(id, "resources/read", params), bad);
      const answers = r.messages.filter((m) => m.id === id);
      expect(answers).toHaveLength(1);
      c.check(answers[0]!);
      if (c.log !== undefined) await waitForStderr(serve, c.log);
      expect((await post(url, rpc("ping", "ping"), bad)).messages[0]).toMatchObject({ result: {} });
    });
  }
});

describe("/mcp after all of it", () => {
  it("the proxy is alive and the other session was not touched: its waiting request gets its own answer", async () => {
    expect(serve.child.exitCode).toBeNull();
    expect((await post(url, rpc("p", "ping"), other)).messages[0]).toMatchObject({ id: "p", result: {} });
    await post(
      url,
      rpc("release-other", "resources/read", {
        _emit: [b64('{"jsonrpc":"2.0","id":"other-waiting","result":{"contents":[{"uri":"o","text":"mine"}]}}\n')],
      }),
      other,
    );
    const answer = await otherWaiting;
    expect(answer.messages.filter((m) => m.id === "other-waiting")).toEqual([
      expect.objectContaining({ result: { contents: [expect.objectContaining({ uri: "o", text: "mine" })] } }),
    ]);
    expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
  });
});
