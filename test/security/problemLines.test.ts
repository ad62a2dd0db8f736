/**
 * A host that sends what cannot be taken, without end, writes a bounded number of log lines: over
 * `/ws` every message reaches the session's bridge, which logs what it refuses. The first few of
 * each kind are written in full, the rest counted; when the session ends, the count of those not
 * yet told is written. Every message is still answered. A real `serve`, a real WebSocket client.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROBLEM_LINES_AT_ONCE } from "../../src/observe/repeatedProblem.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { until } from "../helpers/polling.js";
import { FAULT_SERVER, initializedWs, serveConfig } from "../reliability/helpers.js";

const FLOOD = 1000;

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({ mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } } });
});
afterAll(async () => {
  await serve?.stop();
});

/** The proxy's warn lines with `msg`, parsed. */
function linesOf(msg: string): Array<Record<string, unknown>> {
  return serve
    .stderr()
    .split("\n")
    .filter((line) => line.includes(`"msg":${JSON.stringify(msg)}`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("a host flooding what cannot be taken", () => {
  it.each([
    ["host sent a message that could not be read", "{not json", -32700],
    ["host answered a request the upstream did not send; not forwarded", null, undefined],
  ] as const)(
    "'%s': a few lines, then counted; every message answered or dropped",
    async (msg, text, code) => {
      const host = await initializedWs(serve.url, "fx");
      for (let i = 0; i < FLOOD; i++)
        host.send(text ?? JSON.stringify({ jsonrpc: "2.0", id: `nobody-${i}`, result: {} }));
      // The session still answers, after every message sent before.
      expect(await host.request("after", "ping")).toHaveProperty("result");
      if (code !== undefined) {
        const errors = host.messages.filter((m) => (m as { error?: { code?: number } }).error?.code === code);
        expect(errors).toHaveLength(FLOOD);
      }
      const whileOpen = linesOf(msg);
      expect(whileOpen.length).toBeGreaterThanOrEqual(1);
      expect(whileOpen.length).toBeLessThanOrEqual(PROBLEM_LINES_AT_ONCE + 1);
      await host.close();
      // At the session's end, those not told yet are counted in one line: every one is accounted for.
      const total = (): number => linesOf(msg).reduce((sum, line) => sum + (line.count as number), 0);
      await until(total, (counted) => counted === FLOOD, 10_000, "every message counted in the log");
      expect(linesOf(msg).length).toBeLessThanOrEqual(PROBLEM_LINES_AT_ONCE + 2);
    },
    30_000,
  );

  it("over /mcp without a session (the stateless pool): a few lines, and when the pool ends, every one counted", async () => {
    // A pool whose upstream ends soon after it serves: its log's counts must not go with it.
    const idle = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { sessionIdleMs: 1000 },
    });
    try {
      const msg = "stateless host answered a request no pooled upstream is waiting on; not forwarded";
      const lines = (): Array<Record<string, unknown>> =>
        idle
          .stderr()
          .split("\n")
          .filter((line) => line.includes(`"msg":${JSON.stringify(msg)}`))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
      const post = (body: unknown) =>
        fetch(`${idle.url}/mcp/fx`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify(body),
        });
      // A request first: the pool starts an upstream.
      const ping = await post({ jsonrpc: "2.0", id: "ping", method: "ping" });
      expect(ping.status).toBe(200);
      await ping.body?.cancel();
      const statuses = new Set<number>();
      for (let i = 0; i < FLOOD / 5; i++) {
        const res = await post({ jsonrpc: "2.0", id: `nobody-${i}`, result: {} });
        statuses.add(res.status);
        await res.body?.cancel();
      }
      expect([...statuses]).toEqual([202]);
      expect(lines().length).toBeGreaterThanOrEqual(1);
      expect(lines().length).toBeLessThanOrEqual(PROBLEM_LINES_AT_ONCE + 1);
      // The pool's upstream ends once idle: what was still counted is told then.
      const total = (): number => lines().reduce((sum, line) => sum + (line.count as number), 0);
      await until(total, (counted) => counted === FLOOD / 5, 15_000, "every answer to nothing counted in the log");
      expect(lines().length).toBeLessThanOrEqual(PROBLEM_LINES_AT_ONCE + 2);
    } finally {
      await idle.stop();
    }
  }, 40_000);
});
