/**
 * Real proxy processes for tests: `serve` on port 0 (its printed URL tells the port) and
 * SDK clients of every kind connected to it or to `stdio`. Every helper returns a cleanup.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { WebSocket } from "ws";
import { z } from "zod";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, FIXTURE_SERVER } from "./paths.js";
import { tempDir } from "./tempDir.js";

// The SDK's WebSocket client uses the global WebSocket, which Node 20 lacks.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

export type HostKind = "stdio" | "mcp" | "sse" | "ws";
export const HOST_KINDS: readonly HostKind[] = ["stdio", "mcp", "sse", "ws"];

/** Results exactly as they arrived: no typed schema strips or rejects anything. */
export const AnyResult = z.looseObject({});

export interface ServeProcess {
  readonly url: string;
  readonly child: ChildProcess;
  stderr(): string;
  /** Everything it printed on stdout so far (the endpoint lines). */
  stdout(): string;
  stop(): Promise<number | null>;
}

export interface ServeOptions {
  /** Runs the proxy under `ulimit -n N` (a shell sets it, then execs node). */
  maxOpenFiles?: number;
}

/** `mcp-normalizer serve` on port 0, waiting for its endpoint line. */
export async function startServe(
  args: readonly string[],
  env: Record<string, string> = {},
  options: ServeOptions = {},
): Promise<ServeProcess> {
  const argv = [CLI, "serve", "--port", "0", ...args];
  const [command, commandArgs] =
    options.maxOpenFiles === undefined
      ? [process.execPath, argv]
      : ["sh", ["-c", `ulimit -n ${options.maxOpenFiles} && exec "$0" "$@"`, process.execPath, ...argv]];
  const child = spawn(command, commandArgs, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running: a serve that printed no URL may never answer SIGTERM (its upstreams see their stdin end).
      child.kill("SIGKILL");
      reject(new Error(`serve did not start in 20 s; stderr: ${err}`));
    }, 20_000);
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}; stderr: ${err}`));
    });
  });
  return {
    url,
    child,
    stderr: () => err,
    stdout: () => out,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        // A proxy whose event loop is stuck never runs its SIGTERM handler: killed, so the test fails rather than hangs.
        const stuck = setTimeout(() => child.kill("SIGKILL"), 20_000);
        child.once("exit", (code) => {
          clearTimeout(stuck);
          resolve(code);
        });
        child.kill("SIGTERM");
      }),
  };
}

/** `serve` fronting the fixture server as NAME `fx`. */
export function startFixtureServe(
  extra: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<ServeProcess> {
  return startServe(["--name", "fx", ...extra, "--", process.execPath, FIXTURE_SERVER], env);
}

export interface Connected {
  readonly client: Client;
  readonly transport: Transport;
  close(): Promise<void>;
}

export interface ClientOptions {
  /** Answers sampling/createMessage and elicitation/create when set. */
  capabilities?: Record<string, unknown>;
}

export function hostTransport(
  kind: HostKind,
  base: { url?: string; name?: string; stdioArgs?: readonly string[] },
): Transport {
  const name = base.name ?? "fx";
  switch (kind) {
    case "stdio":
      return new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "stdio", ...(base.stdioArgs ?? ["--", process.execPath, FIXTURE_SERVER])],
        stderr: "pipe",
      });
    case "mcp":
      return new StreamableHTTPClientTransport(new URL(`${base.url}/mcp/${name}`));
    case "sse":
      return new SSEClientTransport(new URL(`${base.url}/sse/${name}`));
    case "ws":
      return new WebSocketClientTransport(new URL(`${base.url!.replace(/^http/, "ws")}/ws/${name}`));
  }
}

export async function connect(transport: Transport, options: ClientOptions = {}): Promise<Connected> {
  const client = new Client({ name: "mcpn-test-host", version: "1.0.0" }, { capabilities: options.capabilities ?? {} });
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/**
 * An SDK client of `stdio --config FILE --server NAME`, FILE holding `config`: what the proxy
 * logs (its stderr) is kept for the test to read.
 */
export async function connectStdioWithConfig(
  config: Record<string, unknown>,
  server: string,
): Promise<Connected & { stderr(): string }> {
  const file = join(tempDir(), "proxy.config.json");
  writeFileSync(file, JSON.stringify(config));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "stdio", "--config", file, "--server", server],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const client = new Client({ name: "mcpn-test-host", version: "1.0.0" });
  await client.connect(transport, { timeout: 10_000 });
  return { client, transport, close: () => client.close(), stderr: () => stderr };
}

/** A raw request: the result as the wire carried it. */
export async function raw(
  client: Client,
  method: string,
  params: Record<string, unknown> = {},
  options: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  return (await client.request({ method, params } as never, AnyResult, options)) as Record<string, unknown>;
}
