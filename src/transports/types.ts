/**
 * The contract every transport in this project meets, on both sides of the proxy. It is the
 * SDK's `Transport` (so SDK hosts and servers can use our transports and the normalizing
 * decorator in-process), with two promises the SDK's own transports do not make:
 *
 * - messages are delivered exactly as parsed from the wire (`JSON.parse`, nothing stripped,
 *   reordered or rejected by a schema), and sent exactly as given;
 * - framing is linear in the message size, and every size limit is a named option.
 */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";

export type { Transport, TransportSendOptions, JSONRPCMessage, MessageExtraInfo };

/** Default largest message accepted on any transport (`limits.maxMessageBytes`): 256 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/**
 * Options the proxy passes along with a message it forwards. `forwardHeaders` carries the
 * host's MCP HTTP headers (`mcp-protocol-version`, `mcp-method`, `mcp-name`, …) so an HTTP
 * upstream sees what the host sent, including protocol versions the SDK does not know.
 */
export interface ProxySendOptions extends TransportSendOptions {
  forwardHeaders?: Readonly<Record<string, string>>;
}

/**
 * A message a transport could not deliver as JSON: reported, never thrown, never silently
 * dropped. `id` is the JSON-RPC id when it could still be read (so the peer can be answered).
 */
export interface FramingProblem {
  readonly kind: "too-large" | "invalid-json" | "not-jsonrpc";
  readonly bytes: number;
  readonly id?: string | number;
  /** First characters of the offending line, for the log; never the whole content. */
  readonly excerpt: string;
}

/** Transports that can report framing problems implement this in addition to `Transport`. */
export interface ReportsFramingProblems {
  onproblem?: ((problem: FramingProblem) => void) | undefined;
}

export type ProxyTransport = Transport & ReportsFramingProblems;
