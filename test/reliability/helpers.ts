/**
 * Helpers of the reliability, security and fuzz tests: a proxy from a config object,
 * waiting on its stderr, a raw WebSocket host, and process checks by pid. Every helper that
 * starts something returns (or is) its cleanup.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WebSocket } from "ws";
import { ROOT } from "../helpers/paths.js";
import { startServe, type ServeOptions, type ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir as makeTempDir } from "../helpers/tempDir.js";

export const FAULT_SERVER = join(ROOT, "test", "fixtures", "servers", "fault-server.mjs");
export const RAW_UPSTREAM = join(ROOT, "test", "fixtures", "servers", "raw-upstream.mjs");

/** A temp folder removed after the test file (test/helpers/tempDir.ts). */
export function tempDir(prefix = "mcpn-rel-"): string {
  return makeTempDir(prefix);
}

/**
 * Writes `config` to a fresh temp file and starts `serve --config` on port 0. The temp folder
 * (config, and logs tests put there) is removed after the test file (test/helpers/tempDir.ts).
 */
export async function serveConfig(
  config: Record<string, unknown>,
  env: Record<string, string> = {},
  extra: readonly string[] = [],
  options: ServeOptions = {},
): Promise<ServeProcess & { configFile: string; dir: string }> {
  const dir = tempDir();
  const configFile = join(dir, "proxy.config.json");
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const serve = await startServe(["--config", configFile, ...extra], env, options);
  return Object.assign(serve, { configFile, dir });
}

/** Resolves when the process's stderr (so far or from now on) matches `pattern`. */
export function waitForStderr(serve: ServeProcess, pattern: RegExp, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const m = pattern.exec(serve.stderr());
      if (m === null) return false;
      serve.child.stderr!.off("data", onData);
      clearTimeout(timer);
      resolve(m[0]);
      return true;
    };
    const onData = (): void => void check();
    const timer = setTimeout(() => {
      serve.child.stderr!.off("data", onData);
      reject(new Error(`stderr never matched ${pattern}; stderr: ${serve.stderr().slice(-3000)}`));
    }, timeoutMs);
    serve.child.stderr!.on("data", onData);
    check();
  });
}

export async function getJson(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A process is gone when /proc has no entry for it: not running and reaped (no zombie). */
export function processGone(pid: number): boolean {
  return !existsSync(`/proc/${pid}`);
}

/** `Z` for a zombie, `S`/`R`… for a live process, undefined when gone. */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

/** Waits (bounded) for a process that is not ours to go away; no event tells us, so we look. */
export async function untilGone(pid: number, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!processGone(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

export interface RawWs {
  readonly ws: WebSocket;
  /** Every message received, parsed. */
  readonly messages: unknown[];
  request(id: string | number, method: string, params?: unknown, timeoutMs?: number): Promise<Record<string, unknown>>;
  send(data: string | Buffer): void;
  /** Resolves with the next message answering `id`. */
  answerTo(id: string | number, timeoutMs?: number): Promise<Record<string, unknown>>;
  readonly closed: Promise<number>;
  close(): Promise<number>;
}

/** A raw WebSocket host on `/ws/NAME`: what it sends is exactly what the test wrote. */
export async function rawWs(baseUrl: string, name: string, headers: Record<string, string> = {}): Promise<RawWs> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/ws/${name}`, "mcp", { headers });
  const messages: unknown[] = [];
  const waiters = new Map<string, (m: Record<string, unknown>) => void>();
  ws.on("message", (data) => {
    let msg: unknown;
    try {
      msg = JSON.parse(data.toString());
    } catch {
      msg = { unparsable: data.toString().slice(0, 200) };
    }
    messages.push(msg);
    for (const item of Array.isArray(msg) ? msg : [msg]) {
      if (typeof item !== "object" || item === null || "method" in item) continue;
      const key = JSON.stringify((item as { id?: unknown }).id);
      const waiter = waiters.get(key);
      if (waiter !== undefined) {
        waiters.delete(key);
        waiter(item as Record<string, unknown>);
      }
    }
  });
  const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
  });
  const answerTo = (id: string | number, timeoutMs = 10_000): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no answer to id ${JSON.stringify(id)} in ${timeoutMs} ms`)),
        timeoutMs,
      );
      waiters.set(JSON.stringify(id), (m) => {
        clearTimeout(timer);
        resolve(m);
      });
    });
  return {
    ws,
    messages,
    send: (data) => ws.send(data),
    answerTo,
    request: (id, method, params = {}, timeoutMs) => {
      const answer = answerTo(id, timeoutMs);
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      return answer;
    },
    closed,
    close: () => {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close();
      return closed;
    },
  };
}

export const INIT = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "mcpn-reliability", version: "1" },
};

/** A raw ws host, initialized. */
export async function initializedWs(
  baseUrl: string,
  name: string,
  headers: Record<string, string> = {},
): Promise<RawWs> {
  const host = await rawWs(baseUrl, name, headers);
  const init = await host.request("init", "initialize", INIT);
  if (!("result" in init)) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
  host.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return host;
}

export function toolText(answer: Record<string, unknown>): string {
  const result = answer.result as { content?: Array<{ text?: string }> } | undefined;
  return result?.content?.[0]?.text ?? "";
}

/** Reads a legacy SSE stream to its end (or `timeoutMs`), handing back the text and the endpoint. */
export async function openLegacyStream(url: string): Promise<{ endpoint: Promise<string>; text: Promise<string> }> {
  const response = await fetch(url, { headers: { accept: "text/event-stream" }, signal: AbortSignal.timeout(15_000) });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let announce: (endpoint: string) => void = () => {};
  const endpoint = new Promise<string>((resolve) => {
    announce = resolve;
  });
  const text = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return seen;
        seen += value;
        const m = /event: endpoint\ndata: (\S+)\n/.exec(seen);
        if (m !== null) announce(m[1]!);
      }
    } catch (error) {
      return `${seen}\n(stream failed: ${String(error)})`;
    }
  })();
  return { endpoint, text };
}
