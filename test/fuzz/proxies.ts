/**
 * The real proxy processes the fuzz suite drives, with a short `limits.requestTimeoutMs` so a
 * fuzzed request the upstream never answers (the SDK server drops what it cannot parse) does
 * not hold a POST for the 5-minute default.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { openSession, post, rpc } from "../badInput/mcpHttp.js";
import { CLI, FIXTURE_SERVER } from "../helpers/paths.js";
import { startServe, type ServeProcess } from "../helpers/proxyProcess.js";
import { INITIALIZE_PARAMS, startRawStdio, type RawStdio } from "../helpers/rawStdio.js";
import { tempDir } from "../helpers/tempDir.js";

export const FUZZ_REQUEST_TIMEOUT_MS = 2_000;
/** How long a probe after a batch may take before the proxy counts as unresponsive. */
export const PROBE_TIMEOUT_MS = 10_000;

/** A config file with the fixture server as `fx`; returns its path. */
export function fixtureConfig(): string {
  const file = join(tempDir("mcpn-fuzz-"), "proxy.config.json");
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: { fx: { command: process.execPath, args: [FIXTURE_SERVER] } },
      limits: { requestTimeoutMs: FUZZ_REQUEST_TIMEOUT_MS },
    }),
  );
  return file;
}

/** `stdio` in front of the server `name` of `config`, initialized. Cleanup: `close()`. */
export async function startStdioProxy(config: string, name: string): Promise<RawStdio> {
  const proxy = startRawStdio(process.execPath, [CLI, "stdio", "--config", config, "--server", name]);
  const init = await proxy.request(0, "initialize", INITIALIZE_PARAMS, PROBE_TIMEOUT_MS);
  expect(init.result).toBeDefined();
  proxy.notify("notifications/initialized");
  return proxy;
}

export function startServeProxy(config: string): Promise<ServeProcess> {
  return startServe(["--config", config]);
}

/** A `serve` proxy and two sessions on its `/mcp/NAME`: the one a test fuzzes, and a bystander. */
export interface McpFuzzTarget {
  readonly serve: ServeProcess;
  readonly url: string;
  readonly fuzzed: string;
  readonly bystander: string;
  /** A ping on `session` is answered, with 200 and nothing else. */
  expectPong(session: string, id: string): Promise<void>;
}

/** The target for one test file: started before its tests (`config()` then), stopped after — with exit 0. */
export function mcpFuzzTarget(config: () => string, name: string): McpFuzzTarget {
  const state = { serve: undefined as ServeProcess | undefined, url: "", fuzzed: "", bystander: "" };
  beforeAll(async () => {
    state.serve = await startServeProxy(config());
    state.url = `${state.serve.url}/mcp/${name}`;
    state.fuzzed = await openSession(state.url);
    state.bystander = await openSession(state.url);
  });
  afterAll(async () => {
    expect(await state.serve!.stop()).toBe(0);
  });
  return {
    get serve() {
      return state.serve!;
    },
    get url() {
      return state.url;
    },
    get fuzzed() {
      return state.fuzzed;
    },
    get bystander() {
      return state.bystander;
    },
    async expectPong(session, id) {
      const answer = await post(state.url, rpc(id, "ping"), session);
      expect(answer.status, state.serve!.stderr().slice(-2000)).toBe(200);
      expect(answer.messages, state.serve!.stderr().slice(-2000)).toEqual([{ jsonrpc: "2.0", id, result: {} }]);
    },
  };
}

/** Nothing but JSON-RPC on the stdio proxy's stdout, and the process still running. */
export function expectCleanStdout(proxy: RawStdio): void {
  expect(proxy.child.exitCode, proxy.stderr().slice(-2000)).toBeNull();
  expect(proxy.problems).toEqual([]);
  for (const m of proxy.messages) expect(m.jsonrpc).toBe("2.0");
}
