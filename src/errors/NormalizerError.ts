/**
 * The one error type: a stable string `code` users and tests can match on, a
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
  | "UPSTREAM_EXITED"
  | "UPSTREAM_UNREACHABLE"
  | "UPSTREAM_HTTP_ERROR"
  | "UPSTREAM_UNREADABLE"
  | "UPSTREAM_CLOSED"
  | "UPSTREAM_AUTH_REQUIRED"
  | "UPSTREAM_AUTH_FAILED"
  | "LOGIN_FAILED"
  | "REQUEST_TIMEOUT"
  | "INSECURE_BIND"
  | "LISTEN_FAILED"
  | "LOG_FILE_UNWRITABLE"
  | "OUTPUT_UNWRITABLE"
  | "OUTPUT_WRITE_FAILED";

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
