/**
 * The decorator in-process, as an SDK host uses it: `client.connect(withNormalization(t))`,
 * against real servers (the fixture as a child process; an SDK Server over an in-memory pair).
 */
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CreateMessageRequestSchema,
  ListResourcesRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { withNormalization, type NormalizationEvent } from "../../src/index.js";
import { FIXTURE_SERVER } from "../helpers/paths.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startStreamableHttpFixture } from "../fixtures/upstream-servers/httpFixtures.js";

describe("withNormalization", () => {
  it("an SDK client reading through the decorator gets text, and every change is reported", async () => {
    const events: NormalizationEvent[] = [];
    const transport = withNormalization(
      new StdioClientTransport({ command: process.execPath, args: [FIXTURE_SERVER], stderr: "pipe" }),
      { onNormalized: (e) => events.push(e) },
    );
    const client = new Client({ name: "in-process-host", version: "1" });
    await client.connect(transport);
    try {
      const result = await client.readResource({ uri: "file:///docs/readme.md" });
      expect(result.contents[0]).toMatchObject({
        uri: "file:///docs/readme.md",
        mimeType: "text/markdown",
        text: "# Title\n\nSome *markdown*.\n",
      });
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        method: "resources/read",
        changes: [{ action: "unwrap-blob", mimeBefore: "application/octet-stream", mimeAfter: "text/markdown" }],
      });
      expect(events[0]!.changes[0]!.saved).toBeGreaterThan(0);
      // Untracked methods are not remembered at all; answered ones are forgotten.
      await client.listTools();
      expect(transport.pendingCount).toBe(0);
    } finally {
      await client.close();
    }
  });

  it("the rewritten message is handed on before its change records are reported (logs and metrics are off the answer's path)", async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const order: string[] = [];
    const transport = withNormalization(serverSide, { onNormalized: (e) => order.push(`records for ${e.id}`) });
    transport.onmessage = (message) => order.push(`message ${(message as { id?: unknown }).id}`);
    await transport.start();
    await clientSide.start();
    await transport.send({ jsonrpc: "2.0", id: 7, method: "resources/read", params: { uri: "mem://x.txt" } });
    await clientSide.send({
      jsonrpc: "2.0",
      id: 7,
      result: { contents: [{ uri: "mem://x.txt", blob: Buffer.from("plain text").toString("base64") }] },
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(["message 7", "records for 7"]);
  });

  it("request ids of the two directions are separate spaces", async () => {
    // The server sends sampling/createMessage with id 0 while the client's resources/read (also
    // id 0 on a fresh client… or any) is pending: the decorator must rewrite only the response to
    // its own request, and the server's request params by their own rules.
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = new Server({ name: "s", version: "1" }, { capabilities: { resources: {} } });
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({
      resources: [{ uri: "mem://a.json", name: "a" }],
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
      const sampled = await extra.sendRequest(
        {
          method: "sampling/createMessage",
          params: {
            messages: [{ role: "user", content: { type: "image", data: png, mimeType: "image/jpeg" } }],
            maxTokens: 5,
          },
        },
        (await import("@modelcontextprotocol/sdk/types.js")).CreateMessageResultSchema,
      );
      return {
        contents: [{ uri: request.params.uri, blob: Buffer.from(JSON.stringify(sampled.content)).toString("base64") }],
      };
    });
    await server.connect(serverSide);
    const client = new Client({ name: "c", version: "1" }, { capabilities: { sampling: {} } });
    const seen: unknown[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      seen.push(request.params.messages[0]!.content);
      return { role: "assistant", model: "m", content: { type: "text", text: "fine" } };
    });
    await client.connect(withNormalization(clientSide));
    try {
      const list = await client.listResources();
      expect(list.resources[0]).toMatchObject({ uri: "mem://a.json", mimeType: "application/json" });
      const read = await client.readResource({ uri: "mem://a.json" });
      expect(read.contents[0]).toEqual({
        uri: "mem://a.json",
        text: '{"type":"text","text":"fine"}',
        mimeType: "application/json",
      });
      expect(seen).toEqual([{ type: "image", data: png, mimeType: "image/png" }]);
    } finally {
      await client.close();
    }
  });

  it("an onNormalized that throws loses no other event of a batch, and is told through onerror, not to the sender", async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const reported: unknown[] = [];
    const errors: string[] = [];
    const transport = withNormalization(serverSide, {
      onNormalized: (event) => {
        reported.push(event.id);
        throw new Error(`callback failed on ${String(event.id)}`);
      },
    });
    const received: unknown[] = [];
    transport.onmessage = (message) => received.push(message);
    transport.onerror = (error) => errors.push(error.message);
    await transport.start();
    await clientSide.start();
    const ids = [1, 2, 3];
    for (const id of ids)
      await transport.send({ jsonrpc: "2.0", id, method: "resources/read", params: { uri: `mem://${id}.txt` } });
    const blob = Buffer.from("plain text").toString("base64");
    await expect(
      clientSide.send(
        ids.map((id) => ({ jsonrpc: "2.0", id, result: { contents: [{ uri: `mem://${id}.txt`, blob }] } })) as never,
      ),
    ).resolves.toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(received).toHaveLength(1);
    expect((received[0] as unknown[]).map((answer) => (answer as { id: number }).id)).toEqual(ids);
    expect(reported).toEqual(ids);
    expect(errors).toEqual(ids.map((id) => `callback failed on ${id}`));
  });

  it("passes through the streamable HTTP transport's protocol version and its terminateSession (the DELETE)", async () => {
    const upstream = await startStreamableHttpFixture();
    const client = new Client({ name: "c", version: "1" });
    try {
      const transport = withNormalization(new StreamableHTTPClientTransport(new URL(upstream.url)));
      expect(transport.protocolVersion).toBeUndefined();
      await client.connect(transport);
      expect(transport.protocolVersion).toBe((transport.inner as StreamableHTTPClientTransport).protocolVersion);
      expect(transport.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      const session = transport.sessionId;
      expect(session).toBeDefined();
      expect(typeof transport.terminateSession).toBe("function");
      await transport.terminateSession!();
      expect(upstream.deletedSessions).toEqual([session]);
      // A transport without sessions has none to end: the wrapper does not pretend it has.
      expect("terminateSession" in withNormalization(InMemoryTransport.createLinkedPair()[0])).toBe(false);
    } finally {
      await client.close();
      await upstream.close();
    }
  });

  it("a request whose send fails (a session the server has ended) is not kept waiting for an answer", async () => {
    const upstream = await startStreamableHttpFixture();
    const client = new Client({ name: "c", version: "1" });
    try {
      const transport = withNormalization(new StreamableHTTPClientTransport(new URL(upstream.url)));
      await client.connect(transport);
      await client.callTool({ name: "echo", arguments: { text: "hi" } });
      expect(transport.pendingCount).toBe(0);
      // Every POST of an ended session gets 404: each read fails at its send.
      await transport.terminateSession!();
      for (let i = 0; i < 20; i++)
        await expect(client.callTool({ name: "echo", arguments: { text: "hi" } })).rejects.toThrow(/no valid session/);
      expect(transport.pendingCount).toBe(0);
    } finally {
      await client.close();
      await upstream.close();
    }
  });

  it("a send that throws, or a transport of JavaScript's whose send returns no promise, leaves no request waiting", async () => {
    const [, side] = InMemoryTransport.createLinkedPair();
    let mode: "throw" | "no promise" = "throw";
    const inner = Object.assign(side, {
      send: () => {
        if (mode === "throw") throw new Error("cannot send now");
        return undefined as unknown as Promise<void>;
      },
    });
    const transport = withNormalization(inner);
    const call = (id: number) =>
      transport.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: {} } });
    for (let id = 1; id <= 5; id++) expect(() => call(id)).toThrow("cannot send now");
    expect(transport.pendingCount).toBe(0);
    mode = "no promise";
    await expect(call(6)).resolves.toBeUndefined();
    expect(transport.pendingCount).toBe(1);
  });
});
