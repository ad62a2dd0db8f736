/**
 * Stateless hosts sharing a pooled upstream, with tasks: a message that names a task (its status,
 * or `_meta` naming the related task) belongs to the client that asks about that task, never to
 * whichever other client happens to be the only one with a request in flight.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { STATELESS_HEADERS } from "../helpers/statelessHeaders.js";
import { serveConfig } from "../reliability/helpers.js";

/**
 * Tool `slow`: answers after `ms`. Tool `later` (task-augmented): answered at once with its task;
 * `ms` later the task completes, the server sends its status and a log line about it (both name
 * the task), then answers the `tasks/result` calls waiting on it.
 */
const UPSTREAM = `
const out = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const waiting = new Map();
const done = new Set();
let n = 0;
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  const p = m.params ?? {};
  if (m.method === "initialize")
    return out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: p.protocolVersion, capabilities: { tools: {}, logging: {}, tasks: { requests: { tools: { call: {} } } } }, serverInfo: { name: "tasks", version: "1" } } });
  if (m.method === "tools/call" && p.name === "slow")
    return setTimeout(() => out({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "slow done" }] } }), p.arguments.ms);
  if (m.method === "tools/call") {
    const taskId = "task-" + ++n;
    setTimeout(() => {
      done.add(taskId);
      const related = { "io.modelcontextprotocol/related-task": { taskId } };
      out({ jsonrpc: "2.0", method: "notifications/tasks/status", params: { taskId, status: "completed", createdAt: "2026-01-01T00:00:00Z", lastUpdatedAt: "2026-01-01T00:00:01Z", ttl: 60000 } });
      out({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "finished " + taskId, _meta: related } });
      for (const id of waiting.get(taskId) ?? []) out({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "result of " + taskId }], _meta: related } });
      waiting.delete(taskId);
    }, p.arguments.ms);
    return out({ jsonrpc: "2.0", id: m.id, result: { task: { taskId, status: "working", createdAt: "2026-01-01T00:00:00Z", lastUpdatedAt: "2026-01-01T00:00:00Z", ttl: 60000 } } });
  }
  if (m.method === "tasks/result") {
    if (done.has(p.taskId)) return out({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "result of " + p.taskId }] } });
    return waiting.set(p.taskId, [...(waiting.get(p.taskId) ?? []), m.id]);
  }
  if (m.id !== undefined && m.method !== undefined) out({ jsonrpc: "2.0", id: m.id, result: {} });
});
`;

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { tasks: { command: process.execPath, args: ["-e", UPSTREAM] } },
    // One pooled upstream: every POST below shares it.
    limits: { statelessPoolSize: 1, requestTimeoutMs: 20_000 },
  });
});
afterAll(async () => {
  await serve?.stop();
});

/** The JSON-RPC messages a stateless POST gets back (its SSE stream, or its one JSON answer). */
async function post(body: unknown): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(`${serve.url}/mcp/tasks`, {
    method: "POST",
    headers: STATELESS_HEADERS,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream"))
    return [JSON.parse(text) as Record<string, unknown>];
  return text
    .split("\n\n")
    .map((event) =>
      event
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5))
        .join("\n"),
    )
    .filter((data) => data.trim() !== "")
    .map((data) => JSON.parse(data) as Record<string, unknown>);
}

const slowCall = (id: number, ms: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "slow", arguments: { ms } },
});
const taskCall = (id: number, ms: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "later", arguments: { ms }, task: { ttl: 60_000 } },
});
const notifications = (messages: Array<Record<string, unknown>>) =>
  messages.filter((m) => m.method !== undefined).map((m) => m.method);

describe("stateless hosts sharing a pooled upstream, one of them with a task", () => {
  it("the task's status and log line do not reach another client's call, the only one in flight", async () => {
    const other = post(slowCall(1, 1500));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const created = await post(taskCall(1, 300));
    const taskId = (created[0]!.result as { task: { taskId: string } }).task.taskId;
    expect(taskId).toMatch(/^task-/);
    const seen = await other;
    expect(seen.at(-1)!.result).toEqual({ content: [{ type: "text", text: "slow done" }] });
    expect(notifications(seen)).toEqual([]);
  });

  it("they reach the client waiting on the task's result, not the other one in flight", async () => {
    const other = post(slowCall(1, 2000));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const created = await post(taskCall(1, 800));
    const taskId = (created[0]!.result as { task: { taskId: string } }).task.taskId;
    const owner = await post({ jsonrpc: "2.0", id: 2, method: "tasks/result", params: { taskId } });
    expect(notifications(owner)).toEqual(["notifications/tasks/status", "notifications/message"]);
    expect((owner[0]!.params as { taskId: string }).taskId).toBe(taskId);
    expect(owner.at(-1)!.result).toMatchObject({ content: [{ type: "text", text: `result of ${taskId}` }] });
    const seen = await other;
    expect(notifications(seen)).toEqual([]);
  });
});
