/**
 * A host that cancels a request (or whose request the proxy answered on a timeout) and sends
 * another under the same id: the upstream may still answer the first (Python's SDK answers a
 * cancelled request with an error; a slow server answers after a timeout), and that late answer
 * would reach the host as the second request's. The reuse is refused until the late answer has
 * come and been dropped, or `limits.requestTimeoutMs` has passed; then the id is free again.
 * A raw host on `stdio` in front of the hand-written raw upstream, which answers when told to.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT } from "../helpers/paths.js";
import { INITIALIZE_PARAMS, startRawStdio, type RawStdio } from "../helpers/rawStdio.js";
import { waitFor } from "../helpers/polling.js";

const RAW_UPSTREAM = join(ROOT, "test", "fixtures", "servers", "raw-upstream.mjs");
const TIMEOUT_MS = 1_000;
const GIVEN_UP = (id: string) =>
  `Invalid Request: id "${id}" is already used by a request given up (cancelled or timed out) whose answer may still come; use a new id`;

describe("an id reused after its request was given up", () => {
  let proxy: RawStdio;
  beforeAll(async () => {
    const config = join(mkdtempSync(join(tmpdir(), "mcpn-reuse-")), "c.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { raw: { command: process.execPath, args: [RAW_UPSTREAM] } },
        limits: { requestTimeoutMs: TIMEOUT_MS },
      }),
    );
    proxy = startRawStdio(process.execPath, [CLI, "stdio", "--config", config, "--server", "raw"]);
    expect((await proxy.request(0, "initialize", INITIALIZE_PARAMS, 20_000)).result).toBeDefined();
    proxy.notify("notifications/initialized");
  }, 30_000);
  afterAll(async () => {
    await proxy?.close(10_000);
  });

  const write = (msg: unknown): void => void proxy.child.stdin.write(`${JSON.stringify(msg)}\n`);
  const answersTo = (id: string) => proxy.messages.filter((m) => m.id === id && m.method === undefined);
  /** Has the raw upstream write an answer to `id` now, as a late one would come. */
  const lateAnswer = (id: string, via: string) =>
    proxy.request(via, "x/emit", {
      _emit: [Buffer.from(JSON.stringify({ jsonrpc: "2.0", id, result: { late: true } })).toString("base64")],
    });

  it("after a cancel: refused until the late answer comes, which is dropped; then the id is free", async () => {
    write({ jsonrpc: "2.0", id: "c", method: "x/wait", params: { _noFinal: true } });
    write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "c" } });
    write({ jsonrpc: "2.0", id: "c", method: "x/second", params: {} });
    await waitFor(() => answersTo("c").length === 1, 5_000);
    expect(answersTo("c")[0]!.error).toEqual({ code: -32600, message: GIVEN_UP("c") });
    await lateAnswer("c", "via-1");
    const again = await proxy.request("c", "x/third", {}, 5_000);
    expect(again).toMatchObject({ result: { contents: [] } });
    expect(proxy.messages.some((m) => (m.result as { late?: boolean } | undefined)?.late === true)).toBe(false);
  });

  it("after the proxy answered on a timeout: refused until the late answer comes", async () => {
    const timedOut = await proxy.request("t", "x/wait", { _noFinal: true }, TIMEOUT_MS + 5_000);
    expect(timedOut.error).toMatchObject({ message: expect.stringMatching(/limits\.requestTimeoutMs/) });
    expect(await proxy.request("t", "x/second", {}, 5_000)).toMatchObject({ error: { message: GIVEN_UP("t") } });
    await lateAnswer("t", "via-2");
    expect(await proxy.request("t", "x/third", {}, 5_000)).toMatchObject({ result: { contents: [] } });
    expect(proxy.messages.some((m) => (m.result as { late?: boolean } | undefined)?.late === true)).toBe(false);
  });

  it("a given-up id no answer comes for is free again after limits.requestTimeoutMs", async () => {
    write({ jsonrpc: "2.0", id: "n", method: "x/wait", params: { _noFinal: true } });
    write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "n" } });
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS + 200));
    expect(await proxy.request("n", "x/again", {}, 5_000)).toMatchObject({ result: { contents: [] } });
  });
});
