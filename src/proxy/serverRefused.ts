/**
 * Whether an error answer the upstream transport built itself (`failedRequest`) says the server
 * can serve no host: no answer at all, or an HTTP status of the server's or its configuration's
 * (401/403: the key; 404: the URL; 5xx). A 400, 422 or 429 answers that one request, which
 * another host may send right; a login the server needs has its own signal on /healthz.
 */
import { isObj } from "../transports/jsonrpc.js";

export function serverRefused(error: unknown): boolean {
  if (!isObj(error) || !isObj(error.data) || error.data.code === "UPSTREAM_AUTH_REQUIRED") return false;
  const status = error.data.status;
  return typeof status !== "number" || status >= 500 || status === 401 || status === 403 || status === 404;
}
