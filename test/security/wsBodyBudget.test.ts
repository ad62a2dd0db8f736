/**
 * What WebSocket hosts have sent of messages not yet whole counts in `limits.bodyBytesInFlight`,
 * as HTTP bodies do: hosts each sending most of a big message (fragments never finished) cannot
 * make the proxy hold more than the budget — the one that would go past it is closed with 1013 —
 * while whole messages give their bytes back at once, however many a host sends. A real `serve`,
 * real WebSocket clients sending fragments.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, INIT, rawWs, serveConfig } from "../reliability/helpers.js";

const MIB = 1024 * 1024;

let serve: ServeProcess;
beforeAll(async () => {
  serve = await serveConfig({
    mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
    limits: { maxMessageBytes: 4 * MIB, bodyBytesInFlight: 5 * MIB },
  });
});
afterAll(async () => {
  await serve?.stop();
});

async function open(): Promise<{ ws: WebSocket; closed: Promise<{ code: number; reason: string }> }> {
  const ws = new WebSocket(`${serve.url.replace(/^http/, "ws")}/ws/fx`, "mcp");
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  ws.on("error", () => {});
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  return { ws, closed };
}

/** Sends `mib` MiB as fragments of one text message it never finishes. */
async function sendUnfinished(ws: WebSocket, mib: number): Promise<void> {
  const part = Buffer.alloc(MIB / 4, 0x20);
  for (let i = 0; i < mib * 4; i++)
    await new Promise<void>((resolve) => ws.send(part, { fin: false }, () => resolve()));
}

describe("WebSocket messages not yet whole", () => {
  it("count in limits.bodyBytesInFlight: the host that would go past it is closed with 1013", async () => {
    const a = await open();
    const b = await open();
    try {
      // 3 MiB each, 6 in all against a 5 MiB budget. Which host's last fragments the proxy reads
      // first is up to the scheduler: the one read second is the one that would pass, and only it goes.
      await Promise.all([sendUnfinished(a.ws, 3), sendUnfinished(b.ws, 3)].map((sent) => sent.catch(() => undefined)));
      const refused = { code: 1013, reason: "over limits.bodyBytesInFlight; try again later" };
      const first = await Promise.race([
        a.closed.then((close) => ({ host: a, other: b, close })),
        b.closed.then((close) => ({ host: b, other: a, close })),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000)),
      ]);
      expect(first?.close).toEqual(refused);
      // The other is untouched; once it goes, its bytes are free again: a new host's call goes through.
      expect(first?.other.ws.readyState).toBe(WebSocket.OPEN);
      first?.other.ws.terminate();
      await first?.other.closed;
      const host = await rawWs(serve.url, "fx");
      expect(await host.request(1, "initialize", INIT)).toHaveProperty("result");
      await host.close();
    } finally {
      // Nothing this test held may be left counted for the next one.
      for (const { ws, closed } of [a, b]) {
        ws.terminate();
        await closed;
      }
    }
  }, 30_000);

  it("whole messages give their bytes back: many large ones in a row go through", async () => {
    const host = await rawWs(serve.url, "fx");
    expect(await host.request(1, "initialize", INIT)).toHaveProperty("result");
    for (let i = 0; i < 8; i++) {
      const answer = await host.request(i + 2, "ping", { pad: "x".repeat(2 * MIB) });
      expect(answer, `call ${i}`).toHaveProperty("result");
    }
    await host.close();
  }, 30_000);
});

describe("the budget's bookkeeping", () => {
  let small: ServeProcess;
  beforeAll(async () => {
    small = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { maxMessageBytes: 256 * 1024, bodyBytesInFlight: 256 * 1024 },
    });
  });
  afterAll(async () => {
    await small?.stop();
  });

  it("a whole message gives back all its bytes: hosts that only send whole messages are never refused", async () => {
    // Each message arrives in one read: had its last chunk stayed counted, the sixth host's would not fit.
    const hosts = [];
    for (let i = 0; i < 6; i++) {
      const host = await rawWs(small.url, "fx");
      expect(await host.request(1, "initialize", INIT)).toHaveProperty("result");
      expect(await host.request(2, "ping", { pad: "x".repeat(60 * 1024) })).toHaveProperty("result");
      hosts.push(host);
    }
    for (const host of hosts)
      expect(await host.request(3, "ping", { pad: "y".repeat(60 * 1024) })).toHaveProperty("result");
    for (const host of hosts) await host.close();
  }, 30_000);

  it("pings between the fragments of a message do not give its bytes back", async () => {
    // A listener of its own: nothing another test left counted may decide this one.
    const own = await serveConfig({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      limits: { maxMessageBytes: 256 * 1024, bodyBytesInFlight: 256 * 1024 },
    });
    // Initialized first: a session is read only once its upstream has started.
    const hosts = [];
    for (let i = 0; i < 3; i++) {
      const host = await rawWs(own.url, "fx");
      expect(await host.request(1, "initialize", INIT)).toHaveProperty("result");
      hosts.push(host);
    }
    const fragment = Buffer.alloc(60 * 1024, 0x20);
    const pause = () => new Promise((resolve) => setTimeout(resolve, 50));
    for (const host of hosts)
      for (let i = 0; i < 3; i++) {
        await new Promise<void>((resolve) => host.ws.send(fragment, { fin: false }, () => resolve()));
        await pause();
        if (host.ws.readyState === WebSocket.OPEN) host.ws.ping();
        await pause();
      }
    // 180 KiB held for each: the second host passes the 256 KiB budget, pings or not.
    const codes = await Promise.all(
      hosts.map((host) =>
        Promise.race([host.closed, new Promise<null>((resolve) => setTimeout(() => resolve(null), 4000))]),
      ),
    );
    for (const host of hosts) host.ws.terminate();
    await own.stop();
    expect(codes.filter((code) => code === 1013).length).toBeGreaterThanOrEqual(1);
  }, 30_000);
});
