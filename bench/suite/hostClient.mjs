/**
 * The host side of every benchmark path: the SDK `Client` over its real transports,
 * plus what the harness needs around it — a call that fails fast when the connection dies, and
 * the byte size of what arrived.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import { WebSocket } from "ws";
import { z } from "zod";
import { tail } from "./outputTail.mjs";

// The SDK's WebSocket client transport uses the global WebSocket; `ws` is the one Node hosts use
// (Node 20's global WebSocket is still experimental and flag-gated).
globalThis.WebSocket = WebSocket;

/** Results are taken as they come: the harness measures transport + proxy, not result validation. */
const AnyResult = z.looseObject({});

/**
 * Connects a host. `target` is one of
 *   {kind: "stdio", command, args, maxBufferSize?}   (the SDK spawns the process)
 *   {kind: "streamable-http" | "sse" | "ws", url}
 * Returns {call, pid, stderrTail, close}; `call(request, timeoutMs)` resolves {result, ms} or rejects
 * as soon as the transport closes or the timeout passes.
 */
export async function connectHost(target, { connectTimeoutMs }) {
  const transport = makeTransport(target);
  const stderr = tail();
  if (target.kind === "stdio") transport.stderr?.on("data", (chunk) => stderr.push(chunk));

  const client = new Client({ name: "mcp-normalizer-bench", version: "1.0.0" }, { capabilities: {} });
  /** The first few distinct transport errors: the first is usually the cause, later ones its fallout. */
  const errors = [];
  let closed = false;
  const closeWaiters = new Set();
  client.onerror = (error) => {
    const message = String(error?.message ?? error);
    if (errors.length < 3 && !errors.includes(message)) errors.push(message);
  };
  client.onclose = () => {
    closed = true;
    for (const reject of closeWaiters) reject(connectionLost());
  };
  function connectionLost() {
    const why = errors.length === 0 ? "" : `: ${errors.join("; then: ")}`;
    const err = stderr.text();
    return new Error(`connection closed${why}${err === "" ? "" : ` (process stderr: ${err})`}`);
  }

  await client.connect(transport, { timeout: connectTimeoutMs });

  async function call(request, timeoutMs) {
    if (closed) throw connectionLost();
    let rejectOnClose;
    const lost = new Promise((_, reject) => {
      rejectOnClose = reject;
      closeWaiters.add(reject);
    });
    const start = performance.now();
    try {
      const result = await Promise.race([
        client.request(request, AnyResult, { timeout: timeoutMs, maxTotalTimeout: timeoutMs }),
        lost,
      ]);
      return { result, ms: performance.now() - start };
    } finally {
      closeWaiters.delete(rejectOnClose);
    }
  }

  return {
    call,
    /** The spawned process (stdio targets only): the proxy, or the upstream on the direct path. */
    pid: target.kind === "stdio" ? transport.pid : null,
    stderrTail: () => stderr.text(),
    async close() {
      if (!closed) await client.close().catch(() => {});
    },
  };
}

function makeTransport(target) {
  switch (target.kind) {
    case "stdio":
      return new StdioClientTransport({
        command: target.command,
        args: target.args,
        stderr: "pipe",
        // Undefined keeps the SDK's own cap (10 MiB), which is what an unmodified SDK host has.
        ...(target.maxBufferSize === undefined ? {} : { maxBufferSize: target.maxBufferSize }),
      });
    case "streamable-http":
      return new StreamableHTTPClientTransport(new URL(target.url));
    case "sse":
      return new SSEClientTransport(new URL(target.url));
    case "ws":
      return new WebSocketClientTransport(new URL(target.url));
    default:
      throw new Error(`bench: unknown host transport kind ${target.kind}`);
  }
}

/**
 * UTF-8 bytes of a result as JSON: the payload delivered to the host, computed after the clock
 * stops. It leaves out transport framing (SSE `data:` lines, HTTP chunking, WS frame headers), which
 * differs by transport, not by proxy.
 */
export function resultBytes(result) {
  return Buffer.byteLength(JSON.stringify(result));
}

/** {form, bytes} of the first content entry, to check what arrived: "text" or "blob" and its decoded size. */
export function firstContentShape(result) {
  const entry = result?.contents?.[0];
  if (entry === undefined) return { form: "none", bytes: 0, mimeType: null };
  if (typeof entry.text === "string")
    return { form: "text", bytes: Buffer.byteLength(entry.text), mimeType: entry.mimeType ?? null };
  if (typeof entry.blob === "string")
    return { form: "blob", bytes: Buffer.from(entry.blob, "base64").length, mimeType: entry.mimeType ?? null };
  return { form: "other", bytes: 0, mimeType: entry.mimeType ?? null };
}
