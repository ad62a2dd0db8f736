/**
 * What keeps the listener's connections bounded: a deadline for request headers and for the
 * whole request, an idle keep-alive timeout, a cap on open connections, and a listener that
 * outlives `accept` failures.
 *
 * - Node enforces `headersTimeout`/`requestTimeout` only on a sweep every
 *   `connectionsCheckingInterval` (default 30 s): the sweep runs at a fraction of the smallest
 *   timeout, so a stalled connection is closed close to its deadline, not up to 30 s late.
 * - `server.maxConnections`: connections over it are closed as they arrive (`drop`); and those
 *   from one client address over `maxConnectionsPerClient` (every loopback address one client,
 *   as for sessions): a client that holds connections open — half-sent headers need no token —
 *   cannot take them all, and probes and other clients still get in.
 * - Out of file descriptors (EMFILE, ENFILE), `accept` fails. libuv mostly handles it alone
 *   (it frees a reserved descriptor, accepts and closes the waiting connections); when it cannot,
 *   Node reports a server `error`, which would crash the process without a listener: it is
 *   logged (throttled: the first at once, then at most one line per interval with the count) and the server keeps
 *   listening. Since the silent case leaves no trace, a start-up warning says when
 *   `maxConnections` is above what the process's open-file limit allows.
 */
import { readFileSync } from "node:fs";
import type { Server, ServerOptions } from "node:http";
import type { Socket } from "node:net";
import { clientKey } from "../transports/host/clientAddress.js";
import type { Logger } from "../observe/logger.js";
import { throttled } from "../observe/repeatedProblem.js";

/** Shortest and longest interval of Node's timeout sweep, in ms. */
const MIN_SWEEP_MS = 100;
const MAX_SWEEP_MS = 1000;
/** Idle time before the first TCP keep-alive probe on a connection, in ms. */
const TCP_KEEP_ALIVE_DELAY_MS = 30_000;

export interface ConnectionLimits {
  readonly headersTimeoutMs: number;
  readonly requestBodyTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxConnectionsPerClient: number;
}

/** The `http.createServer` options that enforce the limits. */
export function serverOptions(limits: ConnectionLimits): ServerOptions {
  const smallest = Math.min(limits.headersTimeoutMs, limits.requestBodyTimeoutMs);
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestBodyTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(MIN_SWEEP_MS, Math.min(MAX_SWEEP_MS, Math.floor(smallest / 4))),
    // TCP keep-alive probes on every connection: the system notices a peer that vanished under
    // an idle stream (an SSE stream with nothing to send) and closes it, ending its session.
    keepAlive: true,
    keepAliveInitialDelay: TCP_KEEP_ALIVE_DELAY_MS,
  };
}

/**
 * Descriptors a proxy needs besides its HTTP connections (its own files, the log, pipes of a few
 * stdio upstreams): what `maxConnections` should leave free under the open-file limit.
 */
export const RESERVED_DESCRIPTORS = 64;

/** Caps connections and keeps the server listening through `accept` failures, logging both. */
export function guardConnections(server: Server, limits: ConnectionLimits, logger: Logger): void {
  server.maxConnections = limits.maxConnections;
  const openFiles = openFileLimit();
  if (openFiles !== undefined && limits.maxConnections + RESERVED_DESCRIPTORS > openFiles) {
    logger.warn(
      "limits.maxConnections is above what the open-file limit allows: past it, new connections are dropped by the " +
        "system",
      {
        maxConnections: limits.maxConnections,
        openFileLimit: openFiles,
        hint:
          `raise ulimit -n above ${limits.maxConnections + RESERVED_DESCRIPTORS}, or lower limits.maxConnections ` +
          `below ${Math.max(1, openFiles - RESERVED_DESCRIPTORS)}`,
      },
    );
  }
  const drops = throttled(logger, "connection closed on arrival: limits.maxConnections are open", {
    maxConnections: limits.maxConnections,
  });
  server.on("drop", () => drops());
  const perClient = new Map<string, number>();
  const overClient = throttled(
    logger,
    "connection closed on arrival: limits.maxConnectionsPerClient are open from its address",
    { maxConnectionsPerClient: limits.maxConnectionsPerClient },
  );
  server.on("connection", (socket: Socket) => {
    const client = clientKey(socket.remoteAddress ?? "unknown");
    const open = (perClient.get(client) ?? 0) + 1;
    if (open > limits.maxConnectionsPerClient) {
      overClient({ client });
      socket.destroy();
      return;
    }
    perClient.set(client, open);
    socket.once("close", () => {
      const left = (perClient.get(client) ?? 1) - 1;
      if (left === 0) perClient.delete(client);
      else perClient.set(client, left);
    });
  });
  const acceptErrors = throttled(logger, "could not accept a connection; still listening", {});
  server.on("error", (error: NodeJS.ErrnoException) => {
    // Before `listen` succeeds, an error (EADDRINUSE) is the caller's to report.
    if (!server.listening) return;
    acceptErrors({
      code: error.code,
      error: error.message,
      ...(error.code === "EMFILE" || error.code === "ENFILE"
        ? { hint: "out of file descriptors: raise ulimit -n or lower limits.maxConnections" }
        : {}),
    });
  });
}

/** The soft limit on open files (`ulimit -n`), where the system says (Linux: /proc/self/limits). */
export function openFileLimit(): number | undefined {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    return match === null ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}
