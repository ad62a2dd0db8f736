/**
 * From a `mcpServers` entry to a live upstream transport (DESIGN.md §5 fields → the upstream
 * transports of src/transports/upstream).
 */
import { isStdioServer, type ServerConfig } from "../config/schema.js";
import type { Logger } from "../observe/logger.js";
import { createUpstreamTransport, type UpstreamSpec } from "../transports/upstream/index.js";
import type { UpstreamFactory, UpstreamHandle } from "./sessionManager.js";
import type { UpstreamAuths } from "./upstreamAuths.js";

const TYPE_TO_TRANSPORT = {
  http: "streamable-http",
  "streamable-http": "streamable-http",
  sse: "sse",
  ws: "websocket",
  websocket: "websocket",
} as const;

export function upstreamSpec(server: ServerConfig): UpstreamSpec {
  if (isStdioServer(server)) {
    return { command: server.command, ...(server.args === undefined ? {} : { args: server.args }), ...(server.env === undefined ? {} : { env: server.env }), ...(server.cwd === undefined ? {} : { cwd: server.cwd }) };
  }
  const transport = server.transport ?? (server.type === undefined ? undefined : TYPE_TO_TRANSPORT[server.type]);
  return { url: server.url, ...(transport === undefined ? {} : { transport }), ...(server.headers === undefined ? {} : { headers: server.headers }) };
}

/**
 * `rawStringBytes` 0 is off; the host transports the proxy writes to splice raw strings back.
 * `auths`: the OAuth layers of remote servers with `auth` (their fetch carries the token).
 */
export function createUpstreamFactory(options: { maxMessageBytes: number; rawStringBytes?: number; auths?: UpstreamAuths }): UpstreamFactory {
  const rawStringMinBytes = options.rawStringBytes === undefined || options.rawStringBytes === 0 ? undefined : options.rawStringBytes;
  return (name: string, server: ServerConfig, logger: Logger): UpstreamHandle => {
    const fetch = options.auths?.for(name, server)?.fetch;
    const transport = createUpstreamTransport(upstreamSpec(server), { logger, maxMessageBytes: options.maxMessageBytes, rawStringMinBytes, ...(fetch === undefined ? {} : { fetch }) });
    return { transport, describeEnd: () => describe(transport) };
  };
}

/** Upstream transports may say why they ended (exit code, signal, last stderr line). */
function describe(transport: unknown): string | undefined {
  const t = transport as { describeEnd?: () => string | undefined; exitInfo?: unknown };
  if (typeof t.describeEnd === "function") return t.describeEnd();
  return undefined;
}
