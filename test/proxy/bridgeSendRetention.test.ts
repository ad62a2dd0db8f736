/**
 * A host that reads slowly has many sends pending at once: the bridge must not keep each parsed
 * message alive until its send settles (the transport holds the encoded bytes; the object is
 * garbage once they are made) — a stalled session held several times `limits.hostBufferBytes`.
 */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/observe/logger.js";
import { Bridge } from "../../src/proxy/bridge.js";
import type { JSONRPCMessage } from "../../src/transports/types.js";
import { collectGarbage } from "../helpers/gc.js";
import { Recorder } from "../helpers/recorder.js";

/**
 * A host whose writes never complete (it reads nothing), keeping what a transport keeps: the
 * bytes, and how to settle each write once it is taken.
 */
class StalledHost extends Recorder {
  readonly pending: Array<{ bytes: string; written: () => void }> = [];
  override send(message: JSONRPCMessage): Promise<void> {
    return new Promise((written) => this.pending.push({ bytes: JSON.stringify(message), written }));
  }
}

describe("Bridge sends to a peer that does not read", () => {
  it("to a host keep no parsed message alive while they wait", async () => {
    const host = new StalledHost();
    const upstream = new Recorder();
    const bridge = new Bridge({ host, upstream, logger: silentLogger, requestTimeoutMs: 60_000 });
    await bridge.start();
    const sent: Array<WeakRef<object>> = [];
    // Made in a function of their own: nothing of this test's holds them once they are sent.
    const arrive = (message: object): void => {
      sent.push(new WeakRef(message));
      upstream.receive(message);
    };
    for (let i = 0; i < 20; i++)
      arrive({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `n${i}` } });
    host.receive({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", arguments: {} } });
    arrive({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "done" }] } });
    expect(host.pending).toHaveLength(21);
    await collectGarbage();
    expect(sent.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    await bridge.close("test over");
  });

  it("nor do sends to an upstream that does not read", async () => {
    const host = new Recorder();
    const upstream = new StalledHost();
    const bridge = new Bridge({ host, upstream, logger: silentLogger, requestTimeoutMs: 60_000 });
    await bridge.start();
    const sent: Array<WeakRef<object>> = [];
    const arrive = (message: object): void => {
      sent.push(new WeakRef(message));
      host.receive(message);
    };
    for (let i = 1; i <= 20; i++)
      arrive({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "x", arguments: { i } } });
    expect(upstream.pending).toHaveLength(20);
    await collectGarbage();
    expect(sent.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    await bridge.close("test over");
  });
});
