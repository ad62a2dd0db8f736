/**
 * The fit layer and flow control inside the normalizing decorator, in process:
 *
 * - while a result's images are fitted the upstream is not read (what comes after waits in the
 *   upstream's transport, not in the proxy's memory), and it is read again once all of it is on;
 * - the reader's hold (the bridge's, when its host is behind) stops what waited behind a fitted
 *   result from being handed on, until the reader resumes;
 * - pages the proxy serves itself wait while the reader is held and count as queued bytes;
 * - closed from the proxy's side while a fit is in flight, pages and task ids are let go at once.
 *
 * The upstream is the SDK's in-memory transport; `Gated` gives it the pause/resume a socket or
 * pipe has (messages sent while paused stay with it until resumed).
 */
import { describe, expect, it } from "vitest";
import type { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { NormalizingTransport } from "../../src/index.js";
import { createFitRuntime } from "../../src/fit/runtime.js";
import { fitLimitsOf } from "../../src/config/fitPolicy.js";
import { DEFAULT_LIMITS } from "../../src/config/defaults.js";
import { bigPng } from "../fixtures/images/makeImages.js";
import { decoratorPair } from "../helpers/decoratorPair.js";
import { waitFor } from "../helpers/polling.js";

/** The in-memory transport with a reader that can stop: what arrives meanwhile is kept, in order. */
class Gated {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  paused = false;
  pauses = 0;
  private readonly kept: JSONRPCMessage[] = [];

  constructor(private readonly inner: InMemoryTransport) {
    inner.onmessage = (message) => {
      if (this.paused) this.kept.push(message);
      else this.onmessage?.(message);
    };
    inner.onclose = () => this.onclose?.();
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  get keptCount(): number {
    return this.kept.length;
  }

  pauseReading(): void {
    if (!this.paused) this.pauses++;
    this.paused = true;
  }

  resumeReading(): void {
    this.paused = false;
    while (!this.paused && this.kept.length > 0) this.onmessage?.(this.kept.shift()!);
  }
}

const gated = (proxySide: InMemoryTransport): Gated => new Gated(proxySide);

/** A few turns of the event loop: long enough for anything already settled to be handed on. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 10));
};

const note = (seq: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/message",
  params: { level: "info", data: { seq } },
});
const label = (m: JSONRPCMessage): string | number =>
  "id" in m && m.id !== undefined
    ? (m.id as number)
    : (m as unknown as { params: { data: { seq: number } } }).params.data.seq + 100;

async function imageResult(id: number): Promise<JSONRPCMessage> {
  const png = (await bigPng(4000, 3000)).toString("base64");
  return {
    jsonrpc: "2.0",
    id,
    result: { content: [{ type: "image", data: png, mimeType: "image/png" }] },
  } as JSONRPCMessage;
}

describe("the fit layer and flow control", () => {
  it("while a result's images are fitted the upstream is not read; it is read again once what waited has gone on", async () => {
    const { upstream, transport, inner, received } = await decoratorPair({ fit: { policy: { images: true } } }, gated);
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shot" } });
    await upstream.send(await imageResult(1));
    expect(inner.paused).toBe(true);
    for (let seq = 0; seq < 5; seq++) await upstream.send(note(seq));
    // Still with the upstream's transport, not in the decorator.
    expect(inner.keptCount).toBe(5);
    expect(received).toHaveLength(0);
    await waitFor(() => received.length === 6);
    expect(received.map(label)).toEqual([1, 100, 101, 102, 103, 104]);
    expect(inner.paused).toBe(false);
    expect(inner.keptCount).toBe(0);
  });

  it("a reader that throws on a fitted result is told through onerror, and what waited behind it still goes on", async () => {
    const { upstream, transport, received } = await decoratorPair({ fit: { policy: { images: true } } });
    const errors: string[] = [];
    transport.onerror = (error) => errors.push(error.message);
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => void rejections.push(reason);
    process.on("unhandledRejection", onRejection);
    try {
      transport.onmessage = (message) => {
        received.push(message);
        if (label(message) === 1 || label(message) === 101) throw new Error(`reader failed on ${label(message)}`);
      };
      await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shot" } });
      await upstream.send(await imageResult(1));
      for (let seq = 0; seq < 3; seq++) await upstream.send(note(seq));
      // The fit takes a moment; held for good behind a reader that threw, it never comes.
      await waitFor(() => received.length === 4, 10_000);
      await upstream.send(note(3));
      await settle();
      expect(received.map(label)).toEqual([1, 100, 101, 102, 103]);
      expect(errors).toEqual(["reader failed on 1", "reader failed on 101"]);
      expect(rejections).toEqual([]);
    } finally {
      process.off("unhandledRejection", onRejection);
    }
  });

  it("over a transport that cannot stop reading, past limits.fitHeldBytes held the fitted result goes on as it came", async () => {
    const engineErrors: string[] = [];
    const events: Array<string | number> = [];
    // The SDK's in-memory transport has no pause: what arrives during a fit waits in the decorator.
    const { upstream, transport, received } = await decoratorPair({
      // The library's way to set it: the wrapper gets a fit runtime of its own with it.
      fit: { policy: { images: true }, limits: { fitHeldBytes: 10_000 } },
      onEngineError: (error) => engineErrors.push((error as Error).message),
      onNormalized: (event) => events.push(event.id),
    });
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shot" } });
    const result = await imageResult(1);
    await upstream.send(result);
    const big = (seq: number): JSONRPCMessage => ({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "info", data: { seq, pad: "p".repeat(3000) } },
    });
    for (let seq = 0; seq < 10; seq++) await upstream.send(big(seq));
    // Past 10,000 bytes held: the result as it came, then everything after it, in order.
    await waitFor(() => received.length === 11, 10_000);
    expect(received.map(label)).toEqual([1, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109]);
    expect(received[0]).toEqual(result);
    expect(engineErrors).toEqual([expect.stringContaining("limits.fitHeldBytes")]);
    // The fit that was given up, when it ends, hands on nothing more.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(received).toHaveLength(11);
    await upstream.send(note(20));
    expect(received.map(label).at(-1)).toBe(120);
    // Nor does it report a fit that never went out, with the next message or at all.
    await transport.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "text" } });
    await upstream.send({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "ok" }] } });
    await settle();
    expect(events).not.toContain(1);
  });

  it("an onEngineError that throws as a held result is let go is told through onerror; nothing stays held", async () => {
    const errors: string[] = [];
    const { upstream, transport, received } = await decoratorPair({
      fit: { policy: { images: true }, limits: { fitHeldBytes: 10_000 } },
      onEngineError: () => {
        throw new Error("logger down");
      },
    });
    transport.onerror = (error) => errors.push(error.message);
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shot" } });
    const result = await imageResult(1);
    await upstream.send(result);
    for (let seq = 0; seq < 10; seq++)
      await upstream.send({
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: { seq, pad: "p".repeat(3000) } },
      });
    await waitFor(() => received.length === 11, 10_000);
    expect(received.map(label)).toEqual([1, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109]);
    expect(received[0]).toEqual(result);
    expect(errors).toEqual(["logger down"]);
    await transport.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "text" } });
    await upstream.send({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "ok" }] } });
    await waitFor(() => received.length === 12, 5_000);
    expect(received.map(label).at(-1)).toBe(2);
  });

  it("the reader's hold stops what waited behind a fitted result; resuming hands on the rest, in order", async () => {
    // No flow control of its own: everything it receives during the fit waits in the decorator.
    const { upstream, transport, received } = await decoratorPair({ fit: { policy: { images: true } } });
    transport.onmessage = (message) => {
      received.push(message);
      // A reader whose host is behind after the fitted result, and again after seq 2.
      if (label(message) === 1 || label(message) === 102) transport.pauseReading();
    };
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shot" } });
    await upstream.send(await imageResult(1));
    for (let seq = 0; seq < 5; seq++) await upstream.send(note(seq));
    await waitFor(() => received.length > 0);
    await settle();
    expect(received.map(label)).toEqual([1]);
    transport.resumeReading();
    expect(received.map(label)).toEqual([1, 100, 101, 102]);
    await settle();
    expect(received).toHaveLength(4);
    transport.resumeReading();
    expect(received.map(label)).toEqual([1, 100, 101, 102, 103, 104]);
    // Nothing waits any more: what the upstream sends now goes straight on.
    await upstream.send(note(5));
    expect(received.map(label).at(-1)).toBe(105);
  });

  it("a page the proxy serves itself waits while the reader is held, counted as queued; whenDrained settles once it is on", async () => {
    const { upstream, transport, received, toUpstream } = await decoratorPair(
      { fit: { policy: { maxResultBytes: 1024 } } },
      gated,
    );
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "long" } });
    await upstream.send({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "x".repeat(20_000) }] } });
    const uri = (received[0] as unknown as { result: { content: Array<{ uri?: string }> } }).result.content[1]!.uri!;
    expect(uri).toBeTypeOf("string");
    transport.pauseReading();
    await transport.send({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri } });
    await settle();
    expect(received).toHaveLength(1);
    expect(transport.queuedBytes).toBeGreaterThan(1000);
    let drained = false;
    void transport.whenDrained().then(() => (drained = true));
    // A message the upstream sends meanwhile stays behind the page, as it came after it.
    await upstream.send(note(0));
    await settle();
    expect(drained).toBe(false);
    transport.resumeReading();
    expect(received.map(label)).toEqual([1, 2, 100]);
    await waitFor(() => drained);
    expect(transport.queuedBytes).toBe(0);
    expect(toUpstream.filter((m) => "method" in m && m.method === "resources/read")).toEqual([]);
  });

  it("closed from the proxy's side while a fit is in flight, its pages and remembered requests are let go at once", async () => {
    const runtime = createFitRuntime(fitLimitsOf({ limits: DEFAULT_LIMITS }));
    const { upstream, transport, received } = await decoratorPair(
      { fit: { policy: { images: true, maxResultBytes: 1024 }, runtime } },
      gated,
    );
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "long" } });
    await upstream.send({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "x".repeat(20_000) }] } });
    expect(received).toHaveLength(1);
    expect(runtime.spill.usedBytes).toBeGreaterThan(0);
    await transport.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "shot" } });
    await transport.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "never answered" } });
    await upstream.send(await imageResult(2));
    const decorator = transport as NormalizingTransport;
    expect(decorator.pendingCount).toBe(1);
    await transport.close();
    expect(runtime.spill.usedBytes).toBe(0);
    expect(decorator.pendingCount).toBe(0);
    // The fitted result finds nobody waiting for it.
    await settle();
    await waitFor(() => runtime.images.load.running === 0);
    expect(received).toHaveLength(1);
  });
});
