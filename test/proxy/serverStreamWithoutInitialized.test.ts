/**
 * The session's GET stream to a streamable HTTP server when the host's messages after
 * `initialize` do not start with `notifications/initialized`: a host that never sends it, one that
 * sends a `ping` first, a server that refuses a GET before it has heard the notification, and a
 * first GET refused for a moment (503). What the server sends outside a call — on hearing the
 * notification, or later — must reach the host. The server here is a raw `node:http` one whose
 * GETs are answered late (300 ms unless said); the host writes raw lines to `mcp-normalizer stdio`.
 */
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { listen, readBody } from "../fixtures/upstream-servers/httpFixtures.js";
import { CLI } from "../helpers/paths.js";
import { until } from "../helpers/polling.js";
import { type RawStdio, startRawStdio } from "../helpers/rawStdio.js";

interface Modes {
  /** Refuse (400) a GET asked for before the notification was heard. */
  readonly needsInitialized?: boolean;
  /** Answer the first GET 503. */
  readonly firstGetUnavailable?: boolean;
  /** Answer every GET 405: the server offers no GET stream. */
  readonly noGetStream?: boolean;
  /** How late GETs are answered (ms; default 300). */
  readonly getDelayMs?: number;
}

const log = (data: string) => ({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data } });

async function startServer(modes: Modes) {
  let stream: ServerResponse | undefined;
  let initialized = false;
  let gets = 0;
  const events: string[] = [];
  const outsideACall = (data: string): void => {
    if (stream === undefined) events.push(`dropped: ${data}`);
    else stream.write(`data: ${JSON.stringify(log(data))}\n\n`);
  };
  const server = await listen(async (req, res) => {
    if (req.method === "GET") {
      gets++;
      const status =
        modes.noGetStream === true
          ? 405
          : modes.needsInitialized === true && !initialized
            ? 400
            : modes.firstGetUnavailable === true && gets === 1
              ? 503
              : 200;
      setTimeout(() => {
        if (status !== 200) return void res.writeHead(status).end();
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(": open\n\n");
        stream = res;
      }, modes.getDelayMs ?? 300);
      return;
    }
    // The proxy's reachability probe (OPTIONS) and the session's end.
    if (req.method !== "POST") return void res.writeHead(req.method === "DELETE" ? 200 : 204).end();
    const msg = (await readBody(req)) as { id?: number; method?: string };
    if (msg.method === "initialize") {
      const result = {
        protocolVersion: "2025-06-18",
        capabilities: { logging: {} },
        serverInfo: { name: "s", version: "1" },
      };
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" });
      return void res.end(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }));
    }
    if (msg.method === "notifications/initialized") {
      initialized = true;
      res.writeHead(202).end();
      return outsideACall("on initialized");
    }
    if (msg.method === "tools/call") outsideACall("after a call");
    if (msg.id === undefined) return void res.writeHead(202).end();
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: {} }));
  }, "/mcp");
  return { url: server.url, events, gets: () => gets, close: server.close };
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function hostInFront(modes: Modes): Promise<{ host: RawStdio; server: Awaited<ReturnType<typeof startServer>> }> {
  const server = await startServer(modes);
  cleanups.push(server.close);
  const host = startRawStdio(process.execPath, [CLI, "stdio", "--url", server.url]);
  cleanups.push(() => host.close());
  const params = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };
  expect(await host.request(1, "initialize", params, 10_000)).toHaveProperty("result");
  return { host, server };
}

const got = (host: RawStdio, data: string): boolean =>
  host.messages.some((m) => m.method === "notifications/message" && (m.params as { data?: unknown }).data === data);

/** Calls until what the server logs after a call reaches the host (or `tries` calls went by). */
async function callsUntilLogged(host: RawStdio, tries: number): Promise<boolean> {
  for (let id = 10; id < 10 + tries && !got(host, "after a call"); id++) {
    await host.request(id, "tools/call", { name: "x", arguments: {} }, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
  return got(host, "after a call");
}

describe("the GET stream of a host that does not start with notifications/initialized", () => {
  it("a ping first: the notification still waits for the GET's answer, so what the server sends on hearing it arrives", async () => {
    const { host, server } = await hostInFront({});
    expect(await host.request(2, "ping", {}, 10_000)).toHaveProperty("result");
    host.notify("notifications/initialized");
    await until(() => got(host, "on initialized") || server.events.length > 0, Boolean, 10_000, "the log");
    expect(server.events).toEqual([]);
    expect(server.gets()).toBe(1);
  });

  it("a server that refuses a GET before the notification: asked once more after it", async () => {
    const { host, server } = await hostInFront({ needsInitialized: true });
    expect(await host.request(2, "ping", {}, 10_000)).toHaveProperty("result");
    host.notify("notifications/initialized");
    expect(await callsUntilLogged(host, 12)).toBe(true);
    expect(server.gets()).toBeGreaterThan(1);
  });

  it("never sent, and the first GET refused for a moment (503): asked again, and what the server sends arrives", async () => {
    const { host, server } = await hostInFront({ firstGetUnavailable: true });
    expect(await callsUntilLogged(host, 12)).toBe(true);
    expect(server.gets()).toBeGreaterThan(1);
    expect(host.stderr()).toContain("before any notifications/initialized; the session's GET stream is opened now");
  });

  it("sent first, and the GET refused only after the notification stopped waiting for it: asked once more", async () => {
    // Past limits.upstreamStreamWaitMs (1 s by default): the notification has gone on by then.
    const { host, server } = await hostInFront({ firstGetUnavailable: true, getDelayMs: 1500 });
    host.notify("notifications/initialized");
    expect(await callsUntilLogged(host, 12)).toBe(true);
    expect(server.gets()).toBe(2);
  });

  it("a ping first to a server with no GET stream (405): not asked again when the notification comes", async () => {
    const { host, server } = await hostInFront({ noGetStream: true, getDelayMs: 0 });
    expect(await host.request(2, "ping", {}, 10_000)).toHaveProperty("result");
    await until(
      () => server.gets(),
      (n) => n > 0,
      10_000,
      "the GET",
    );
    // Its 405 has been taken by the time the notification comes.
    await new Promise((resolve) => setTimeout(resolve, 500));
    host.notify("notifications/initialized");
    expect(await host.request(3, "tools/call", { name: "x", arguments: {} }, 10_000)).toHaveProperty("result");
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(server.gets()).toBe(1);
  });
});
