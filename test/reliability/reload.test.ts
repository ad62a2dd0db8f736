/**
 * SIGHUP re-reads the config of a running `serve`. What it cannot apply (the listener's bearer
 * tokens, limits, origins) is named in the log by path, never by value — an operator rotating a
 * token must learn the old one still works until the restart. A server whose entry changed starts
 * afresh: the stateless pool's upstreams started from the old entry take no new requests (new
 * ones run the new command and env even under steady traffic) and end once idle.
 */
import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { post } from "../badInput/mcpHttp.js";
import type { ServeProcess } from "../helpers/proxyProcess.js";
import { FAULT_SERVER, INIT, processGone, rawWs, serveConfig, toolText, untilGone, waitForStderr } from "./helpers.js";

const STATELESS = { "mcp-protocol-version": "2026-07-28" };

/** The n-th "SIGHUP: config re-read" log record (1-based), once it is written. */
async function reloadRecord(serve: ServeProcess, n: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    // Whole lines only: the last piece may be a line still being written.
    const records = serve
      .stderr()
      .split("\n")
      .slice(0, -1)
      .filter((line) => line.includes("SIGHUP: config re-read"));
    if (records.length >= n) return JSON.parse(records[n - 1]!) as Record<string, unknown>;
    if (Date.now() > deadline) throw new Error(`no reload record ${n}; stderr: ${serve.stderr().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Writes `config` over the running one, sends SIGHUP, and gives the n-th reload record. */
async function reload(
  serve: ServeProcess & { configFile: string },
  config: Record<string, unknown>,
  n: number,
): Promise<Record<string, unknown>> {
  writeFileSync(serve.configFile, JSON.stringify(config));
  serve.child.kill("SIGHUP");
  return reloadRecord(serve, n);
}

/** One stdio server whose env carries `tag` (what each reload changes), with `limits`. */
function taggedConfig(tag: string, limits: Record<string, number>): Record<string, unknown> {
  return { mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER], env: { RELOAD_TAG: tag } } }, limits };
}

function statelessCall(url: string, name: string, args: Record<string, unknown> = {}, token?: string) {
  return post(
    url,
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
    undefined,
    { ...STATELESS, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
  );
}

async function upstreamEnv(url: string): Promise<{ pid: number; tag: string | undefined }> {
  const pid = await statelessCall(url, "pid");
  const env = await statelessCall(url, "env");
  expect(pid.status).toBe(200);
  expect(env.status).toBe(200);
  const vars = JSON.parse(toolText(env.messages[0]!)) as Record<string, string>;
  return { pid: Number(toolText(pid.messages[0]!)), tag: vars.RELOAD_TAG };
}

describe("SIGHUP", () => {
  it("names the settings it cannot apply (auth, limits, origins) by path and never by value; an unchanged file needs nothing", async () => {
    const config = (token: string, extra: Record<string, unknown> = {}) => ({
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } },
      auth: { bearerTokens: [token] },
      limits: { maxSessions: 50 },
      ...extra,
    });
    const serve = await serveConfig(config("old-token-aaaa-1111"));
    try {
      serve.child.kill("SIGHUP");
      const same = await reloadRecord(serve, 1);
      expect(same).toMatchObject({ level: "info", updated: ["fx"], changed: [] });
      expect(same).not.toHaveProperty("ignoredNeedRestart");

      writeFileSync(
        serve.configFile,
        JSON.stringify(
          config("new-token-bbbb-2222", { limits: { maxSessions: 5 }, allowedOrigins: ["https://a.example"] }),
        ),
      );
      serve.child.kill("SIGHUP");
      const line = serve.stderr().length;
      const changed = await reloadRecord(serve, 2);
      expect(changed.level).toBe("warn");
      expect(changed.ignoredNeedRestart).toEqual(["auth.bearerTokens", "allowedOrigins", "limits.maxSessions"]);
      expect(serve.stderr().slice(line)).not.toMatch(/aaaa-1111|bbbb-2222/);
      // As the log says: the token the proxy started with is still the one it takes.
      const url = `${serve.url}/mcp/fx`;
      expect((await statelessCall(url, "pid", {}, "old-token-aaaa-1111")).status).toBe(200);
      expect((await statelessCall(url, "pid", {}, "new-token-bbbb-2222")).status).toBe(401);
    } finally {
      await serve.stop();
    }
  });

  it("a fixed server reaches the starts already waiting out the broken one's backoff: they start at once, fixed", async () => {
    const broken = {
      mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER], env: { FAULT_EXIT_ON_START: "3" } } },
      limits: { restartBackoffMs: 4000, maxRestartBackoffMs: 30_000 },
    };
    const serve = await serveConfig(broken);
    try {
      const url = `${serve.url}/mcp/fx`;
      // The first start fails at once; the next ones wait out the backoff.
      expect((await statelessCall(url, "pid")).messages[0]).toHaveProperty("error");
      const waitingPost = statelessCall(url, "pid");
      const host = await rawWs(serve.url, "fx");
      const waitingSession = host.request(1, "initialize", INIT, 20_000);
      await waitForStderr(serve, /waiting before starting it again[\s\S]*waiting before starting it again/);
      const fixedAt = performance.now();
      await reload(serve, { ...broken, mcpServers: { fx: { command: process.execPath, args: [FAULT_SERVER] } } }, 1);
      const [post, session] = await Promise.all([waitingPost, waitingSession]);
      // Well before the old 4 s wait was over, and from the fixed entry.
      expect(performance.now() - fixedAt).toBeLessThan(3_000);
      expect(post.status).toBe(200);
      expect(post.messages[0]).toHaveProperty("result");
      expect(session).toHaveProperty("result");
      // The pooled upstream that waited started from the fixed entry: it goes on serving, no second one.
      const next = await statelessCall(url, "pid");
      expect(toolText(next.messages[0]!)).toBe(toolText(post.messages[0]!));
      await host.close();
    } finally {
      await serve.stop();
    }
  });

  it("a stateless client's pages of a result cut before cutting was turned off are still served by the proxy", async () => {
    const cutting = { ...taggedConfig("a", {}), normalize: { maxResultBytes: 1024 } };
    const serve = await serveConfig(cutting);
    try {
      const url = `${serve.url}/mcp/fx`;
      const cut = await statelessCall(url, "sleep", { ms: 0, pad: 5000 });
      const page = /mcp-normalizer:\/\/spill\/[^\s"\\)]+/.exec(JSON.stringify(cut.messages[0]))?.[0];
      expect(page).toBeDefined();
      await reload(serve, taggedConfig("b", {}), 1);
      const read = await post(
        url,
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: page } }),
        undefined,
        STATELESS,
      );
      expect(read.status).toBe(200);
      // The page, from the proxy: not whatever the server answers for a URI that is not its own.
      const contents = (read.messages[0] as { result: { contents: Array<{ uri: string; text: string }> } }).result
        .contents;
      expect(contents[0]!.uri).toBe(page);
      expect(contents[0]!.text).toMatch(/^\.+$/);
    } finally {
      await serve.stop();
    }
  });

  it("a server added or removed is named by its path: one called like a setting is not taken for it", async () => {
    const serve = await serveConfig(taggedConfig("a", {}));
    try {
      const withLog = taggedConfig("a", {}) as { mcpServers: Record<string, unknown> };
      withLog.mcpServers.log = { command: process.execPath, args: [FAULT_SERVER] };
      const record = await reload(serve, withLog, 1);
      expect(record.ignoredNeedRestart).toEqual(["mcpServers.log"]);
    } finally {
      await serve.stop();
    }
  });

  it("a limit said to need a restart is not in force before it: limits.maxNormalizeBytes keeps its running value", async () => {
    const serve = await serveConfig(taggedConfig("a", { maxNormalizeBytes: 1_000_000 }));
    try {
      const record = await reload(serve, taggedConfig("a", { maxNormalizeBytes: 1 }), 1);
      expect(record.ignoredNeedRestart).toEqual(["limits.maxNormalizeBytes"]);
      // Nothing of the server itself changed: its pool goes on as it was.
      expect(record.changed).toEqual([]);
      // A read after the reload is normalized under the running limit: the text blob is unwrapped.
      const read = await post(
        `${serve.url}/mcp/fx`,
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "file:///a.txt" } }),
        undefined,
        STATELESS,
      );
      expect(read.status).toBe(200);
      expect(read.messages[0]).toMatchObject({ result: { contents: [{ text: "plain text in base64" }] } });
    } finally {
      await serve.stop();
    }
  });

  it("an idle pooled upstream of a changed server is not ended at once (its pool's pages and late replies go with it)", async () => {
    const config = (tag: string) => taggedConfig(tag, { sessionIdleMs: 1500 });
    const serve = await serveConfig(config("v1"));
    try {
      const before = await upstreamEnv(`${serve.url}/mcp/fx`);
      await reload(serve, config("v2"), 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(processGone(before.pid)).toBe(false);
      expect(await untilGone(before.pid, 10_000)).toBe(true);
    } finally {
      await serve.stop();
    }
  });

  it("an old pooled upstream ends as soon as it is idle once a new one serves: changes under load do not pile them up", async () => {
    const config = (tag: string) => taggedConfig(tag, { sessionIdleMs: 600_000 });
    const serve = await serveConfig(config("v0"));
    try {
      const url = `${serve.url}/mcp/fx`;
      let previous = await upstreamEnv(url);
      for (let change = 1; change <= 3; change++) {
        await reload(serve, config(`v${change}`), change);
        const next = await upstreamEnv(url);
        expect(next.tag).toBe(`v${change}`);
        // Not after sessionIdleMs (ten minutes here): now.
        expect(await untilGone(previous.pid, 5000)).toBe(true);
        previous = next;
      }
    } finally {
      await serve.stop();
    }
  });

  it("a changed server env reaches stateless requests at once: the old pooled upstream finishes its request, ends when idle", async () => {
    const config = (tag: string) => taggedConfig(tag, { statelessPoolSize: 2, sessionIdleMs: 1500 });
    const serve = await serveConfig(config("v1"));
    try {
      const url = `${serve.url}/mcp/fx`;
      const before = await upstreamEnv(url);
      expect(before.tag).toBe("v1");
      const sleeping = statelessCall(url, "sleep", { ms: 700 });
      await new Promise((resolve) => setTimeout(resolve, 200));

      expect(await reload(serve, config("v2"), 1)).toMatchObject({ changed: ["fx"] });
      for (let i = 0; i < 3; i++) {
        const after = await upstreamEnv(url);
        expect(after.tag).toBe("v2");
        expect(after.pid).not.toBe(before.pid);
      }
      const slept = await sleeping;
      expect(slept.status).toBe(200);
      expect(toolText(slept.messages[0]!)).toBe("slept");
      // It ends once idle, as any pooled upstream does (its pages and late host replies stay served until then).
      expect(await untilGone(before.pid, 10_000)).toBe(true);
    } finally {
      await serve.stop();
    }
  });
});
