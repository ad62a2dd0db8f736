/**
 * Every JSON-RPC error code the proxy answers with, in one table.
 */
/** JSON-RPC error codes the proxy answers with (JSON-RPC 2.0 §5.1; -32000…-32099 are ours). */
export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** A refusal that is not about one message (no session, a limit, a path not served). */
  SERVER_ERROR: -32000,
  /** The upstream went away or could not be reached. */
  UPSTREAM_UNAVAILABLE: -32001,
  /** The upstream did not answer in `limits.requestTimeoutMs`. */
  REQUEST_TIMEOUT: -32002,
  /** A message over `limits.maxMessageBytes`. */
  MESSAGE_TOO_LARGE: -32003,
  /** MCP's "resource not found" (the code the MCP spec gives it; it shares -32002 with REQUEST_TIMEOUT). */
  RESOURCE_NOT_FOUND: -32002,
} as const;
