/**
 * The one error type (STYLE habit 5): a stable string `code` users and tests can match on, a
 * message that names the file, field or flag at fault, and a deliberate JSON-RPC code for
 * errors that go back over the wire.
 */

export type ErrorCode =
  | "CONFIG_NOT_FOUND"
  | "CONFIG_INVALID_JSON"
  | "CONFIG_INVALID"
  | "CONFIG_ENV_MISSING"
  | "USAGE"
  | "INPUT_INVALID_JSON"
  | "INPUT_READ_FAILED"
  | "MESSAGE_TOO_LARGE"
  | "UPSTREAM_EXITED"
  | "UPSTREAM_UNREACHABLE"
  | "UPSTREAM_HTTP_ERROR"
  | "UPSTREAM_CLOSED"
  | "UPSTREAM_AUTH_REQUIRED"
  | "UPSTREAM_AUTH_FAILED"
  | "LOGIN_FAILED"
  | "REQUEST_TIMEOUT"
  | "SESSION_LIMIT"
  | "INSECURE_BIND"
  | "LOG_FILE_UNWRITABLE";

/** JSON-RPC error codes the proxy answers with (JSON-RPC 2.0 §5.1; -32000…-32099 are ours). */
export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INTERNAL_ERROR: -32603,
  /** The upstream went away or could not be reached. */
  UPSTREAM_UNAVAILABLE: -32001,
  /** The upstream did not answer in `limits.requestTimeoutMs`. */
  REQUEST_TIMEOUT: -32002,
  /** A message over `limits.maxMessageBytes`. */
  MESSAGE_TOO_LARGE: -32003,
} as const;

export class NormalizerError extends Error {
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NormalizerError";
    this.code = code;
    this.details = details;
  }
}
