/**
 * StdioHostTransport over PassThrough streams (framing, problems, a 50 MiB message each way,
 * backpressure), and as a real process under the SDK's real StdioClientTransport.
 */
import { once } from "node:events";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { StdioHostTransport } from "../../../src/transports/host/stdioHost.js";
import type { FramingProblem, JSONRPCMessage } from "../../../src/transports/types.js";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.js";

interface Harness {
  readonly input: PassThrough;
  readonly output: PassThrough;
  readonly transport: StdioHostTransport;
  readonly messages: JSONRPCMessage[];
  readonly problems: FramingProblem[];
  /** Resolves with the next message delivered. */
  next(): Promise<JSONRPCMessage>;
  /** Resolves once `count` messages have been delivered in all. */
  delivered(count: number): Promise<void>;
  close(): Promise<void>;
}

async function harness(options: { maxMessageBytes?: number; outputHighWaterMark?: number } = {}): Promise<Harness> {
  const input = new PassThrough();
  const output = new PassThrough(
    options.outputHighWaterMark === undefined ? {} : { highWaterMark: options.outputHighWaterMark },
  );
  const transport = new StdioHostTransport({
    input,
    output,
    maxMessageBytes: options.maxMessageBytes ?? DEFAULT_LIMITS.maxMessageBytes,
  });
  const messages: JSONRPCMessage[] = [];
  const problems: FramingProblem[] = [];
  const waiters: Array<(m: JSONRPCMessage) => void> = [];
  const counters: Array<{ count: number; resolve: () => void }> = [];
  transport.onmessage = (message) => {
    messages.push(message);
    waiters.shift()?.(message);
    for (const c of counters.filter((c) => messages.length >= c.count)) {
      counters.splice(counters.indexOf(c), 1);
      c.resolve();
    }
  };
  transport.onproblem = (problem) => problems.push(problem);
  await transport.start();
  return {
    input,
    output,
    transport,
    messages,
    problems,
    next: () => new Promise((resolve) => waiters.push(resolve)),
    delivered: (count) =>
      messages.length >= count ? Promise.resolve() : new Promise((resolve) => counters.push({ count, resolve })),
    close: () => transport.close(),
  };
}

describe("StdioHostTransport", () => {
  it("frames lines across chunk boundaries and CRLF, delivering exactly what JSON.parse gave", async () => {
    const h = await harness();
    const third = h.delivered(3);
    h.input.write(
      '{"jsonrpc":"2.0","id":1,"method":"a","params":{"z":1,"a":2,"unknown":[null]}}\n{"jsonrpc":"2.0","me',
    );
    h.input.write('thod":"b"}\r\n\n');
    h.input.write('{"id":"x","jsonrpc":"2.0","result":{"_meta":{}}}\n');
    await third;
    expect(h.messages).toEqual([
      { jsonrpc: "2.0", id: 1, method: "a", params: { z: 1, a: 2, unknown: [null] } },
      { jsonrpc: "2.0", method: "b" },
      { id: "x", jsonrpc: "2.0", result: { _meta: {} } },
    ]);
    expect(Object.keys((h.messages[0] as { params: object }).params)).toEqual(["z", "a", "unknown"]);
    await h.close();
  });

  it("reports bad and oversized lines through onproblem and keeps reading", async () => {
    const h = await harness({ maxMessageBytes: 100 });
    const after = h.next();
    h.input.write("a banner, not JSON\n");
    h.input.write(`{"jsonrpc":"2.0","id":42,"method":"x","params":{"pad":"${"p".repeat(200)}"}}\n`);
    h.input.write('{"jsonrpc":"2.0","id":43,"method":"ping"}\n');
    expect(await after).toEqual({ jsonrpc: "2.0", id: 43, method: "ping" });
    expect(h.problems.map((p) => p.kind)).toEqual(["invalid-json", "too-large"]);
    expect(h.problems[1]).toMatchObject({ kind: "too-large", id: 42 });
    await h.close();
  });

  it("writes one line per message, JSON-RPC only", async () => {
    const h = await harness();
    await h.transport.send({ jsonrpc: "2.0", id: 1, result: { text: "line\nbreak \u2028" } });
    await h.transport.send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info" } });
    await h.close();
    h.output.end();
    const chunks: Buffer[] = [];
    for await (const chunk of h.output) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString("utf8")).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{"text":"line\\nbreak \u2028"}}\n{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}\n',
    );
    await h.close();
  });

  it("reads and writes a 50 MiB message", async () => {
    const h = await harness();
    const size = 50 * 1024 * 1024;
    const line = Buffer.from(
      `{"jsonrpc":"2.0","id":9,"result":{"contents":[{"uri":"a","blob":"${"A".repeat(size)}"}]}}\n`,
    );
    const received = h.next();
    const started = performance.now();
    for (let at = 0; at < line.length; at += 64 * 1024) h.input.write(line.subarray(at, at + 64 * 1024));
    const message = (await received) as unknown as { result: { contents: Array<{ blob: string }> } };
    const readMs = performance.now() - started;
    expect(message.result.contents[0]!.blob.length).toBe(size);

    const chunks: Buffer[] = [];
    let bytes = 0;
    h.output.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      bytes += chunk.length;
    });
    const writeStarted = performance.now();
    await h.transport.send(message as unknown as JSONRPCMessage);
    const writeMs = performance.now() - writeStarted;
    expect(bytes).toBe(line.length);
    expect(Buffer.concat(chunks).equals(line)).toBe(true);
    console.error(`stdio host, 50 MiB in 64 KiB chunks: read ${readMs.toFixed(0)} ms, write ${writeMs.toFixed(0)} ms`);
    await h.close();
  });

  it("honours drain: send() waits until the host reads", async () => {
    const h = await harness({ outputHighWaterMark: 1024 });
    let done = false;
    const sent = h.transport.send({ jsonrpc: "2.0", id: 1, result: { pad: "p".repeat(64 * 1024) } }).then(() => {
      done = true;
    });
    // The write went over the high-water mark and nobody reads: send() must still be pending
    // after the event loop has had a full turn to settle it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    h.output.resume();
    await sent;
    expect(done).toBe(true);
    await h.close();
  });

  it("fires onclose once when the input ends, and not again on close()", async () => {
    const h = await harness();
    let closes = 0;
    h.transport.onclose = () => closes++;
    h.input.end();
    await once(h.input, "end");
    await new Promise((resolve) => setImmediate(resolve));
    expect(closes).toBe(1);
    await h.close();
    expect(closes).toBe(1);
  });
});

describe("StdioHostTransport in a real process", () => {
  it("serves the SDK's StdioClientTransport; stdout carries JSON-RPC only", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(import.meta.dirname, "..", "..", "fixtures", "servers", "stdio-host-server.mjs")],
      stderr: "pipe",
    });
    const stderr: string[] = [];
    transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
    const errors: Error[] = [];
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    client.onerror = (error) => errors.push(error);
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: "echo", arguments: { text: "über stdio" } });
      expect(result.content).toEqual([{ type: "text", text: "über stdio" }]);
      const big = await client.callTool({ name: "big", arguments: { bytes: 5 * 1024 * 1024 } });
      expect((big.content as Array<{ text: string }>)[0]!.text.length).toBe(5 * 1024 * 1024);
      // Any non-JSON-RPC byte on stdout would have surfaced as a client error.
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
