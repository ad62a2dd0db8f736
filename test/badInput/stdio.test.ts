/**
 * Bad input through `stdio`, both directions: bytes a host writes to the proxy's
 * stdin, and bytes the upstream writes to its stdout (raw-upstream.mjs). Each is answered or
 * logged (asserted on the answer and on the stderr line); the proxy stays up, answers a ping
 * afterwards, and nothing but JSON-RPC ever appears on its stdout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../helpers/paths.js";
import { INITIALIZE_PARAMS, startRawStdio, type RawStdio } from "../helpers/rawStdio.js";
import { MAX_MESSAGE_BYTES, rawUpstreamConfig, upstreamRequest, UPSTREAM_CASES } from "./cases.js";

type Msg = Record<string, unknown>;
let proxy: RawStdio;

/**
 * Set when a wait timed out: the one proxy session all these tests share is stuck, so every
 * later wait fails at once with that reason instead of waiting out its own timeout.
 */
let stuck: string | undefined;

/**
 * Resolves with what `check` finds, checked now and on each chunk of output; fails after
 * `timeoutMs`, or at once when the proxy has ended or an earlier wait found it stuck (a
 * regression fails the file in seconds, not one timeout per test).
 */
function waitFor<T>(what: string, check: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | undefined, value?: T): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      proxy.child.stdout.off("data", onData);
      proxy.child.stderr.off("data", onData);
      if (error === undefined) resolve(value as T);
      else reject(error);
    };
    const attempt = (): boolean => {
      const found = check();
      if (found !== undefined) finish(undefined, found);
      return found !== undefined;
    };
    const state = (): string => `got ${printed(proxy.messages).slice(-1500)}; stderr ${proxy.stderr().slice(-1500)}`;
    const onData = (): void => void setImmediate(attempt);
    const timer = setTimeout(() => {
      if (attempt()) return;
      stuck = `${what}: not within ${timeoutMs} ms`;
      finish(new Error(`${stuck}; ${state()}`));
    }, timeoutMs);
    proxy.child.stdout.on("data", onData);
    proxy.child.stderr.on("data", onData);
    void proxy.closed.then((how) => attempt() || finish(new Error(`${what}: the proxy ended (${how}); ${state()}`)));
    if (!attempt() && stuck !== undefined)
      finish(new Error(`${what}: the session is stuck since an earlier wait (${stuck})`));
  });
}

/** What the host got, for a failure's message: one answer is nested too deep to print whole. */
function printed(messages: unknown[]): string {
  try {
    return JSON.stringify(messages);
  } catch {
    return JSON.stringify(messages.slice(-5).map((m) => Object.keys(m as object)));
  }
}

/** A request's answer, waited for like everything else here. */
function ask(id: number | string, method: string, params: unknown = {}): Promise<Msg> {
  const key = JSON.stringify(id);
  const before = proxy.messages.length;
  proxy.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
  return waitFor(`the answer to ${method} (id ${key})`, () =>
    proxy.messages.slice(before).find((m) => m.method === undefined && JSON.stringify(m.id) === key),
  );
}

/** The first message (already received or to come) that `match` accepts. */
const next = (match: (m: Msg) => boolean, timeoutMs = 10_000): Promise<Msg> =>
  waitFor("a matching message", () => proxy.messages.find(match), timeoutMs);

/** Resolves once stderr matches (the proxy's log line about the bad input). */
const logged = async (pattern: RegExp, timeoutMs = 10_000): Promise<void> =>
  void (await waitFor(
    `stderr matching ${pattern}`,
    () => (pattern.test(proxy.stderr()) ? true : undefined),
    timeoutMs,
  ));

const write = (bytes: string | Buffer): void => void proxy.child.stdin.write(bytes);
const count = (id: unknown): number => proxy.messages.filter((m) => JSON.stringify(m.id) === JSON.stringify(id)).length;

beforeAll(async () => {
  proxy = startRawStdio(process.execPath, [CLI, "stdio", "--config", rawUpstreamConfig(), "--server", "raw"]);
  const init = await ask(0, "initialize", INITIALIZE_PARAMS);
  expect(init.result).toBeDefined();
  proxy.notify("notifications/initialized");
});

afterAll(async () => {
  expect(await proxy.close(10_000)).toBe(0);
});

describe("stdio: bad input from the host", () => {
  it("malformed JSON gets -32700 with id null", async () => {
    const before = proxy.messages.length;
    write('{"jsonrpc":"2.0","id":1,"method":\n');
    const answer = await next((m) => proxy.messages.indexOf(m) >= before && m.id === null);
    expect(answer.error).toMatchObject({ code: -32700 });
  });

  it("invalid UTF-8 on the wire gets -32700 and is logged", async () => {
    const before = proxy.messages.length;
    write(
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":"utf","method":"ping","params":{"x":"'),
        Buffer.from([0xc3, 0x28, 0xff]),
        Buffer.from('"}}\n'),
      ]),
    );
    const answer = await next((m) => proxy.messages.indexOf(m) >= before && m.id === null);
    expect(answer.error).toMatchObject({ code: -32700 });
    expect(count("utf")).toBe(0);
  });

  it.each([
    ["a number", "42", /"kind":"not-jsonrpc".*host sent a message that could not be read/],
    ["null", "null", /"excerpt":"null".*host sent a message that could not be read/],
    ["an object that is not JSON-RPC", '{"foo":1}', /host sent JSON that is not a JSON-RPC message/],
  ])("JSON that is not JSON-RPC (%s) gets -32600 with id null and is logged", async (_name, text, log) => {
    const before = proxy.messages.length;
    write(`${text}\n`);
    const answer = await next((m) => proxy.messages.indexOf(m) >= before && m.id === null);
    expect(answer.error).toMatchObject({ code: -32600 });
    await logged(log);
  });

  it("a batch (protocol 2025-06-18 has none) gets -32600 for each request in it, not forwarded", async () => {
    write(
      `${JSON.stringify([
        { jsonrpc: "2.0", id: "b1", method: "ping" },
        { jsonrpc: "2.0", method: "notifications/x" },
        { jsonrpc: "2.0", id: "b2", method: "ping" },
      ])}\n`,
    );
    for (const id of ["b1", "b2"]) {
      const answer = await next((m) => m.id === id);
      expect(answer.error).toMatchObject({
        code: -32600,
        message: expect.stringMatching(/2025-06-18 has no JSON-RPC batches/),
      });
    }
    const before = proxy.messages.length;
    write("[]\n");
    expect((await next((m) => proxy.messages.indexOf(m) >= before && m.id === null)).error).toMatchObject({
      code: -32600,
      message: "Invalid Request: an empty batch",
    });
  });

  it("a response to no request is not forwarded and is logged", async () => {
    write(`${JSON.stringify({ jsonrpc: "2.0", id: "never-asked", result: {} })}\n`);
    await logged(/"id":"never-asked".*host answered a request the upstream did not send/);
  });

  it("a duplicate id of a request still waiting gets -32600; the first still gets its answer", async () => {
    const b64 = (s: string): string => Buffer.from(s).toString("base64");
    // The first waits: the upstream writes nothing for it yet (`_noFinal`).
    write(`${JSON.stringify({ jsonrpc: "2.0", id: "dup", method: "resources/read", params: { _noFinal: true } })}\n`);
    write(`${JSON.stringify({ jsonrpc: "2.0", id: "dup", method: "resources/read", params: {} })}\n`);
    const refused = await next((m) => m.id === "dup");
    expect(refused.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/already used by a request still waiting/),
    });
    // Now the upstream answers the first (through another request's emitted bytes).
    await ask("release", "resources/read", {
      _emit: [b64('{"jsonrpc":"2.0","id":"dup","result":{"contents":[{"uri":"x","text":"first"}]}}\n')],
    });
    await next((m) => m.id === "dup" && m.result !== undefined);
    expect(
      proxy.messages.filter((m) => m.id === "dup").map((m) => (m.error === undefined ? "result" : "error")),
    ).toEqual(["error", "result"]);
  });

  it("a message over limits.maxMessageBytes gets -32003 naming the limit; the session goes on", async () => {
    write(
      `${JSON.stringify({ jsonrpc: "2.0", id: "huge", method: "ping", params: { x: "a".repeat(MAX_MESSAGE_BYTES + 10) } })}\n`,
    );
    const answer = await next((m) => m.id === "huge");
    expect(answer.error).toMatchObject({
      code: -32003,
      message: expect.stringMatching(/over limits\.maxMessageBytes/),
    });
  });

  it("its -32003 carries the id as the host wrote it: an integer past 2^53, an exponent", async () => {
    let out = "";
    const onData = (chunk: Buffer): void => {
      out += chunk.toString("utf8");
    };
    proxy.child.stdout.on("data", onData);
    try {
      const big = `"x":"${"a".repeat(MAX_MESSAGE_BYTES)}"`;
      for (const id of ["12345678901234567890", "1e3", "-9007199254740993"]) {
        write(`{"jsonrpc":"2.0","id":${id},"method":"ping","params":{${big}}}\n`);
        await waitFor(`the -32003 under id ${id}`, () =>
          out.includes(`"id":${id},"error":{"code":-32003`) ? true : undefined,
        );
      }
    } finally {
      proxy.child.stdout.off("data", onData);
    }
  });

  it("one whose id stands in its middle, where it cannot be read: -32003 to no id, never silence", async () => {
    const half = "b".repeat(MAX_MESSAGE_BYTES);
    write(`{"jsonrpc":"2.0","method":"ping","params":{"x":"${half}"},"id":"mid","y":"${half}"}\n`);
    const answer = await next((m) => m.id === null && (m.error as Msg | undefined)?.code === -32003);
    expect((answer.error as Msg).message).toMatch(/over limits\.maxMessageBytes; its id could not be read/);
    write('{"jsonrpc":"2.0","id":"after-mid","method":"ping"}\n');
    expect((await next((m) => m.id === "after-mid")).result).toEqual({});
  });

  it("an answer of the host's over limits.maxMessageBytes: the upstream's request gets -32003, the host nothing", async () => {
    const b64 = (text: string): string => Buffer.from(text).toString("base64");
    // The upstream asks the host something under an id the host also uses for a request of its own.
    // Written, not asked: it is never answered here (cancelled below), and nothing may wait on it.
    write(
      `${JSON.stringify({
        jsonrpc: "2.0",
        id: "up-1",
        method: "resources/read",
        params: { _emit: [b64('{"jsonrpc":"2.0","id":"up-1","method":"roots/list"}\n')], _noFinal: true },
      })}\n`,
    );
    await next((m) => m.id === "up-1" && m.method === "roots/list");
    const before = proxy.messages.length;
    const tooLarge = `{"jsonrpc":"2.0","id":"up-1","result":{"roots":[],"pad":"${"r".repeat(MAX_MESSAGE_BYTES)}"}}`;
    write(`${tooLarge}\n`);
    const answers = await ask("answers", "_answers");
    expect((answers.result as { answers: Msg[] }).answers).toContainEqual({
      jsonrpc: "2.0",
      id: "up-1",
      error: {
        code: -32003,
        message: `the host's answer of ${tooLarge.length} bytes is over limits.maxMessageBytes`,
      },
    });
    // No error went back to the host for its answer: its own request "up-1" still waits, unanswered.
    expect(proxy.messages.slice(before).filter((m) => m.id === "up-1")).toEqual([]);
    write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "up-1" } })}\n`);
  });

  it("a request of the upstream's own over limits.maxMessageBytes: the upstream gets -32003 under its id at once", async () => {
    const b64 = (text: string): string => Buffer.from(text).toString("base64");
    // Padded by the upstream itself: a request that large from the host would be refused first.
    const asking = '{"jsonrpc":"2.0","id":"up-big","method":"sampling/createMessage","params":{"pad":"__PAD__"}}';
    const bytes = asking.length - '"__PAD__"'.length + MAX_MESSAGE_BYTES + 2;
    const before = proxy.messages.length;
    await ask("emits-big", "resources/read", { _emit: [b64(`${asking}\n`)], _pad: MAX_MESSAGE_BYTES });
    const answers = await ask("answers-big", "_answers");
    expect((answers.result as { answers: Msg[] }).answers).toContainEqual({
      jsonrpc: "2.0",
      id: "up-big",
      error: {
        code: -32003,
        message: `the request of ${bytes} bytes is over the proxy's limits.maxMessageBytes; not sent to the host`,
      },
    });
    expect(proxy.messages.slice(before).some((m) => m.id === "up-big")).toBe(false);
  });

  it("an answer of the host's over the limit whose id cannot be read: logged, never answered back", async () => {
    const before = proxy.messages.length;
    const pad = "q".repeat(MAX_MESSAGE_BYTES);
    write(`{"jsonrpc":"2.0","result":{"pad":"${pad}"},"id":"lost","more":"${pad}"}\n`);
    await logged(/"kind":"too-large","bytes":\d+,"excerpt":"\{\\"jsonrpc\\":\\"2\.0\\",\\"result\\"/);
    expect((await ask("after-lost", "ping")).result).toEqual({});
    // Nothing went back for it: an error to a response would be read as one to a request of the host's.
    expect(proxy.messages.slice(before).filter((m) => m.error !== undefined)).toEqual([]);
  });

  it("100k nested arrays reach the upstream, and its answer comes back", async () => {
    write(
      `{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}}\n`,
    );
    expect((await next((m) => m.id === "deep")).result).toEqual({});
  });

  it("a line starting with a UTF-8 byte order mark is read as the message after it", async () => {
    write(`\ufeff${JSON.stringify({ jsonrpc: "2.0", id: "bom", method: "ping" })}\n`);
    expect((await next((m) => m.id === "bom")).result).toEqual({});
  });

  it("lone surrogates in a request pass through and are answered", async () => {
    write('{"jsonrpc":"2.0","id":"sur","method":"ping","params":{"x":"\\ud800"}}\n');
    expect((await next((m) => m.id === "sur")).result).toEqual({});
  });
});

describe("stdio: bad input from the upstream", () => {
  for (const c of UPSTREAM_CASES) {
    it(`${c.name}: the host gets one answer; ${c.log === undefined ? "" : "it is logged; "}the session goes on`, async () => {
      const { id, params } = upstreamRequest(c);
      const answer = await ask(id, "resources/read", params);
      c.check(answer);
      if (c.log !== undefined) await logged(c.log);
      // A ping answered after it: the session and its framing are intact.
      expect((await ask(`ping-after-${c.name}`, "ping")).result).toEqual({});
      expect(count(id)).toBe(1);
    });
  }
});

describe("stdio after all of it", () => {
  it("is alive, answers, and its stdout carried JSON-RPC only", async () => {
    expect(proxy.child.exitCode).toBeNull();
    expect((await ask("final", "ping")).result).toEqual({});
    expect(proxy.problems).toEqual([]);
    for (const m of proxy.messages) {
      expect(m.jsonrpc).toBe("2.0");
      expect("method" in m || "result" in m || "error" in m).toBe(true);
    }
    expect(proxy.messages.some((m) => "foo" in m || m.id === "nobody-asked")).toBe(false);
  });
});
