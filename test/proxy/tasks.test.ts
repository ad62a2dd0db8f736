/**
 * The tasks utility (protocol 2025-11-25) through the proxy: a task-augmented tools/call is
 * answered with its task, and the real result — fetched later with tasks/result — is normalized
 * as a tools/call result. Real SDK clients (their experimental callToolStream: tasks/get polling,
 * then tasks/result) over streamable HTTP and stdio, against a real SDK server with task support
 * (test/fixtures/servers/tasks-server.mjs); the per-session memory of task ids is bounded by
 * limits.maxTrackedTasks.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TaskOrigins } from "../../src/proxy/taskOrigins.js";
import { series } from "../observe/promText.js";
import { EVERYTHING_SERVER, TASKS_SERVER } from "../helpers/paths.js";
import { connect, hostTransport, raw, startServe, type Connected, type ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";
import { post } from "../badInput/mcpHttp.js";

const MARKDOWN = "# Later\n\nWritten by a task — naïve café ✓\n";
const dir = tempDir("mcpn-tasks-");
const logFile = join(dir, "n.jsonl");
const upstream = ["--", process.execPath, TASKS_SERVER];

let serve: ServeProcess;
const open: Connected[] = [];
beforeAll(async () => {
  serve = await startServe(["--name", "tk", "--log-file", logFile, ...upstream]);
});
afterAll(async () => {
  for (const host of open) await host.close().catch(() => {});
  await serve?.stop();
});

async function host(
  kind: "mcp" | "stdio",
  base: { url?: string; stdioArgs?: readonly string[] } = { url: serve.url },
): Promise<Connected> {
  const connected = await connect(hostTransport(kind, { name: "tk", stdioArgs: upstream, ...base }));
  open.push(connected);
  return connected;
}

/** Every message of the SDK's callToolStream for `read-later`, its last one the result. */
async function callLater(client: Client): Promise<Array<{ type: string; [key: string]: unknown }>> {
  await client.listTools(); // the client learns which tools require a task
  const messages: Array<{ type: string; [key: string]: unknown }> = [];
  for await (const message of client.experimental.tasks.callToolStream(
    { name: "read-later", arguments: {} },
    undefined,
    { timeout: 20_000 },
  ))
    messages.push(message as never);
  return messages;
}

/** Polls tasks/get until the task is completed (bounded). */
async function completed(client: Client, taskId: string): Promise<void> {
  const until = Date.now() + 20_000;
  for (;;) {
    const task = await raw(client, "tasks/get", { taskId });
    if (task.status === "completed") return;
    if (Date.now() > until) throw new Error(`task ${taskId} still ${String(task.status)} after 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const unwrapped = { uri: "file:///notes/later.md", mimeType: "text/markdown", text: MARKDOWN };

describe("tasks/result through the proxy", () => {
  it("straight from the upstream, the task's result carries the markdown as an octet-stream blob", async () => {
    const direct = await connect(
      new StdioClientTransport({ command: process.execPath, args: [TASKS_SERVER], stderr: "ignore" }),
    );
    open.push(direct);
    const messages = await callLater(direct.client);
    const result = messages.at(-1)!;
    expect(result.type).toBe("result");
    expect((result.result as { content: Array<{ resource?: unknown }> }).content[1]!.resource).toEqual({
      uri: "file:///notes/later.md",
      mimeType: "application/octet-stream",
      blob: Buffer.from(MARKDOWN).toString("base64"),
    });
  });

  for (const kind of ["mcp", "stdio"] as const) {
    it(`${kind}: the SDK client's callToolStream gets its task, then the result normalized as a tools/call result`, async () => {
      const { client } = await host(kind);
      const messages = await callLater(client);
      expect(messages[0]!.type).toBe("taskCreated");
      const result = messages.at(-1)!;
      expect(result.type, JSON.stringify(result)).toBe("result");
      const content = (result.result as { content: Array<Record<string, unknown>> }).content;
      expect(content[0]).toEqual({ type: "text", text: "the notes" });
      expect(content[1]!.resource).toEqual(unwrapped);
    });
  }

  it("raw requests: the CreateTaskResult passes as sent; every tasks/result of the task is normalized; an unknown task's error passes", async () => {
    const { client } = await host("mcp");
    const created = await raw(client, "tools/call", { name: "read-later", arguments: {}, task: { ttl: 60_000 } });
    const task = created.task as { taskId: string; status: string };
    expect(task.taskId).toBeTypeOf("string");
    expect(created.content).toBeUndefined();
    await completed(client, task.taskId);
    for (let i = 0; i < 2; i++) {
      const result = await raw(client, "tasks/result", { taskId: task.taskId });
      expect((result.content as Array<Record<string, unknown>>)[1]!.resource).toEqual(unwrapped);
      expect(result._meta).toEqual({ "io.modelcontextprotocol/related-task": { taskId: task.taskId } });
    }
    await expect(raw(client, "tasks/result", { taskId: "no-such-task" })).rejects.toThrow(/no-such-task|not found/i);
    // An ordinary call on the same session is normalized as before.
    const now = await raw(client, "tools/call", { name: "read-now", arguments: {} });
    expect((now.content as Array<Record<string, unknown>>)[1]!.resource).toEqual(unwrapped);
  });

  it("the log and /metrics file the change under tasks/result", async () => {
    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    // On serve: one tasks/result of callToolStream (mcp) and two raw ones (the stdio host had its own proxy).
    expect(
      series(metrics, "mcp_normalizer_rewrites_total", { server: "tk", method: "tasks/result", action: "unwrap-blob" }),
    ).toBe(3);
    expect(await serve.stop()).toBe(0);
    const lines = readFileSync(logFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { method: string; action: string; uri: string });
    const fromTasks = lines.filter((l) => l.method === "tasks/result");
    expect(fromTasks.length).toBe(3);
    expect(fromTasks.every((l) => l.action === "unwrap-blob" && l.uri === "file:///notes/later.md")).toBe(true);
  });

  it("limits.maxTrackedTasks bounds what a session remembers: the least recently used task's result passes unchanged", async () => {
    const config = join(dir, "tasks.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { tk: { command: process.execPath, args: [TASKS_SERVER] } },
        limits: { maxTrackedTasks: 1 },
      }),
    );
    const bounded = await startServe(["--config", config]);
    try {
      const { client } = await host("mcp", { url: bounded.url });
      const first = (
        (await raw(client, "tools/call", { name: "read-later", arguments: {}, task: {} })).task as { taskId: string }
      ).taskId;
      const second = (
        (await raw(client, "tools/call", { name: "read-later", arguments: {}, task: {} })).task as { taskId: string }
      ).taskId;
      await completed(client, first);
      await completed(client, second);
      const forgotten = await raw(client, "tasks/result", { taskId: first });
      expect((forgotten.content as Array<{ resource: { blob?: string } }>)[1]!.resource.blob).toBe(
        Buffer.from(MARKDOWN).toString("base64"),
      );
      const kept = await raw(client, "tasks/result", { taskId: second });
      expect((kept.content as Array<Record<string, unknown>>)[1]!.resource).toEqual(unwrapped);
    } finally {
      await bounded.stop();
    }
  });
});

describe("tasks with the fit layer and the stateless pool", () => {
  let served: ServeProcess;
  beforeAll(async () => {
    const config = join(dir, "tasks-fit.json");
    // Only read-later's results are inlined: the rule matches on the tool the task was created by.
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          tk: {
            command: process.execPath,
            args: [TASKS_SERVER],
            normalize: { rules: [{ tool: "read-later", set: { embeddedResources: "inline" } }] },
          },
        },
        limits: { statelessPoolSize: 1 },
      }),
    );
    served = await startServe(["--config", config]);
  });
  afterAll(async () => {
    await served?.stop();
  });

  it("a task's tasks/result is fitted as the result of the tool that created the task", async () => {
    const { client } = await host("mcp", { url: served.url });
    const taskId = (
      (await raw(client, "tools/call", { name: "read-later", arguments: {}, task: {} })).task as { taskId: string }
    ).taskId;
    await completed(client, taskId);
    const later = await raw(client, "tasks/result", { taskId });
    // Unwrapped (markdown text), then inlined as a text block by the tool rule.
    expect((later.content as Array<Record<string, unknown>>)[1]).toEqual({ type: "text", text: MARKDOWN });
    const now = await raw(client, "tools/call", { name: "read-now", arguments: {} });
    expect((now.content as Array<Record<string, unknown>>)[1]!.resource).toEqual(unwrapped);
  });

  it("stateless POSTs: the task's tasks/result, fetched in a later POST, is normalized and fitted the same", async () => {
    const url = `${served.url}/mcp/tk`;
    const stateless = { "mcp-protocol-version": "2026-07-28" };
    const answer = async (method: string, params: Record<string, unknown>) => {
      const posted = await post(url, JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }), undefined, stateless);
      const message = posted.messages.find((m) => m.id === 1)!;
      expect(message.error, JSON.stringify(message)).toBeUndefined();
      return message.result as Record<string, unknown>;
    };
    const taskId = (
      (await answer("tools/call", { name: "read-later", arguments: {}, task: {} })).task as { taskId: string }
    ).taskId;
    const until = Date.now() + 20_000;
    while ((await answer("tasks/get", { taskId })).status !== "completed") {
      if (Date.now() > until) throw new Error(`task ${taskId} not completed after 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const later = await answer("tasks/result", { taskId });
    expect((later.content as Array<Record<string, unknown>>)[1]).toEqual({ type: "text", text: MARKDOWN });
  });
});

describe("the everything server's task tool through the proxy", () => {
  it("simulate-research-query (taskSupport required): the host's callToolStream gets the same final result as straight from the server", async () => {
    const everything = ["--", process.execPath, EVERYTHING_SERVER, "stdio"];
    const run = async (client: Client) => {
      await client.listTools();
      const messages: Array<{ type: string; [key: string]: unknown }> = [];
      for await (const m of client.experimental.tasks.callToolStream(
        { name: "simulate-research-query", arguments: { topic: "charsets" } },
        undefined,
        { timeout: 30_000 },
      ))
        messages.push(m as never);
      return messages;
    };
    const viaProxy = await run((await host("stdio", { stdioArgs: everything })).client);
    const direct = await connect(
      new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_SERVER, "stdio"], stderr: "ignore" }),
    );
    open.push(direct);
    const straight = await run(direct.client);
    for (const messages of [viaProxy, straight]) {
      expect(messages[0]!.type).toBe("taskCreated");
      expect(messages.at(-1)!.type, JSON.stringify(messages.at(-1))).toBe("result");
    }
    const content = (messages: typeof viaProxy) => (messages.at(-1)!.result as { content: unknown[] }).content;
    expect(JSON.stringify(content(viaProxy)).replace(/"taskId":"[^"]+"/g, "")).toBe(
      JSON.stringify(content(straight)).replace(/"taskId":"[^"]+"/g, ""),
    );
  }, 60_000);
});

describe("TaskOrigins", () => {
  it("keeps at most `max` task ids, forgetting the least recently used", () => {
    const origins = new TaskOrigins(2);
    origins.remember("a", "tools/call");
    origins.remember("b", "tools/call");
    expect(origins.methodOf("a")).toBe("tools/call"); // a is now the most recently used
    origins.remember("c", "prompts/get");
    expect(origins.size).toBe(2);
    expect(origins.methodOf("b")).toBeUndefined();
    expect(origins.methodOf("a")).toBe("tools/call");
    expect(origins.methodOf("c")).toBe("prompts/get");
    origins.clear();
    expect(origins.size).toBe(0);
  });
});
