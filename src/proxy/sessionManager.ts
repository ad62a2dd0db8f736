/**
 * Host sessions and their upstream connections: each host session gets its own upstream
 * connection (for a stdio upstream, its own child process), ended when the session ends
 * (DESIGN.md §4). Also the source of `/healthz`.
 */
import type { ServerConfig } from "../config/schema.js";
import { isStdioServer } from "../config/schema.js";
import type { Logger } from "../observe/logger.js";
import { Policy, type PolicyOptions } from "../normalize/policy.js";
import type { ProxyTransport } from "../transports/types.js";
import { Bridge } from "./bridge.js";
import type { NormalizationEvent } from "./withNormalization.js";

export interface UpstreamHandle {
  readonly transport: ProxyTransport;
  /** Why the upstream ended (exit code/signal, last stderr line), once it has. */
  describeEnd?(): string | undefined;
}

export type UpstreamFactory = (name: string, server: ServerConfig, logger: Logger) => UpstreamHandle;

export interface ServerEntry {
  readonly config: ServerConfig;
  readonly policy: PolicyOptions;
}

export interface SessionInfo {
  readonly server: string;
  readonly kind: string;
  readonly id: string;
}

export interface SessionManagerOptions {
  readonly servers: ReadonlyMap<string, ServerEntry>;
  readonly createUpstream: UpstreamFactory;
  readonly logger: Logger;
  readonly requestTimeoutMs: number;
  /** `limits.maxTrackedTasks`: task ids remembered per session for `tasks/result`. */
  readonly maxTrackedTasks?: number;
  readonly onNormalized?: (event: NormalizationEvent, session: SessionInfo) => void;
  /**
   * After a stdio upstream died on its own (or failed to start), the next one for that server
   * starts only after this wait, doubled per consecutive failure up to `maxRestartBackoffMs`
   * (issue 5: "a stdio upstream that keeps dying is restarted with backoff"). Default 250 ms.
   */
  readonly restartBackoffMs?: number;
  /** Cap of the doubling backoff. Default 30 s. */
  readonly maxRestartBackoffMs?: number;
  /** Called each time an upstream is started again after a failure (`mcp_normalizer_upstream_restarts_total`). */
  readonly onUpstreamRestart?: (server: string) => void;
  /** Clock and timer (tests). */
  readonly now?: () => number;
}

export const DEFAULT_RESTART_BACKOFF_MS = 250;
export const DEFAULT_MAX_RESTART_BACKOFF_MS = 30_000;

/** Per-server restart state: consecutive failures and when the last one happened. */
interface Backoff {
  failures: number;
  lastFailureAt: number;
}

export interface ServerHealth {
  status: "up" | "down" | "idle";
  transport: "stdio" | "http";
  sessions: number;
  sessionsOpened: number;
  upstreamFailures: number;
  /** Failures since the upstream last worked; the restart backoff grows with it. */
  consecutiveFailures: number;
  restarts: number;
  lastError?: string;
  lastErrorAt?: string;
}

export class SessionManager {
  private readonly sessions = new Map<string, { bridge: Bridge; info: SessionInfo }>();
  private readonly servers: Map<string, ServerEntry>;
  private readonly policies = new Map<string, Policy>();
  private readonly health = new Map<string, ServerHealth>();
  private readonly backoff = new Map<string, Backoff>();
  private readonly settledWaiters = new Set<() => void>();
  private readonly now: () => number;
  private refusal: string | undefined;
  private counter = 0;

  constructor(private readonly options: SessionManagerOptions) {
    this.now = options.now ?? Date.now;
    this.servers = new Map(options.servers);
    for (const [name, entry] of options.servers) {
      this.policies.set(name, new Policy(entry.policy));
      this.health.set(name, { status: "idle", transport: isStdioServer(entry.config) ? "stdio" : "http", sessions: 0, sessionsOpened: 0, upstreamFailures: 0, consecutiveFailures: 0, restarts: 0 });
      this.backoff.set(name, { failures: 0, lastFailureAt: 0 });
    }
  }

  /** Host requests still waiting for an upstream, over every session. */
  get waitingRequests(): number {
    let total = 0;
    for (const { bridge } of this.sessions.values()) total += bridge.waitingCount;
    return total;
  }

  /**
   * Graceful shutdown, step 1 (issue 5): no new sessions, no new requests on live ones (both
   * answered with an error naming the reason); requests in flight go on.
   */
  refuseNew(why: string): void {
    this.refusal = why;
    for (const { bridge } of this.sessions.values()) bridge.refuseNewRequests(why);
  }

  /** Resolves when no host request is waiting, or after `graceMs`; true when all finished. */
  async drain(graceMs: number): Promise<boolean> {
    if (this.waitingRequests === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    let waiter: (() => void) | undefined;
    const settled = await Promise.race([
      new Promise<boolean>((resolve) => {
        waiter = () => {
          if (this.waitingRequests === 0) resolve(true);
        };
        this.settledWaiters.add(waiter);
      }),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
    ]);
    clearTimeout(timer);
    if (waiter !== undefined) this.settledWaiters.delete(waiter);
    return settled;
  }

  /** How long the next upstream of `server` waits (0 unless stdio upstreams keep dying). */
  restartDelayMs(server: string): number {
    const state = this.backoff.get(server);
    const entry = this.servers.get(server);
    if (state === undefined || entry === undefined || state.failures === 0 || !isStdioServer(entry.config)) return 0;
    const base = this.options.restartBackoffMs ?? DEFAULT_RESTART_BACKOFF_MS;
    const cap = this.options.maxRestartBackoffMs ?? DEFAULT_MAX_RESTART_BACKOFF_MS;
    const wait = Math.min(cap, base * 2 ** Math.min(state.failures - 1, 30));
    return Math.max(0, state.lastFailureAt + wait - this.now());
  }

  get serverNames(): string[] {
    return [...this.servers.keys()];
  }

  /**
   * SIGHUP (issue 5): servers re-read from the config apply to sessions opened from now on;
   * live sessions keep the upstream and policy they started with. Names cannot be added or
   * removed without a restart (the listener's routes are fixed): those are returned as ignored.
   */
  reconfigure(servers: ReadonlyMap<string, ServerEntry>): { updated: string[]; ignored: string[] } {
    const updated: string[] = [];
    const ignored: string[] = [];
    for (const [name, entry] of servers) {
      if (!this.servers.has(name)) {
        ignored.push(name);
        continue;
      }
      this.servers.set(name, entry);
      this.policies.set(name, new Policy(entry.policy));
      updated.push(name);
    }
    for (const name of this.servers.keys()) if (!servers.has(name)) ignored.push(name);
    return { updated, ignored };
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Joins a host transport to a fresh upstream connection for `server`. Rejects if the upstream cannot start. */
  async open(host: ProxyTransport, server: string, kind: string): Promise<Bridge> {
    const entry = this.servers.get(server);
    const health = this.health.get(server);
    if (entry === undefined || health === undefined) throw new Error(`no server named ${server}`);
    if (this.refusal !== undefined) throw new Error(this.refusal);
    const backoff = this.backoff.get(server)!;
    const restarting = backoff.failures > 0;
    const delay = this.restartDelayMs(server);
    if (delay > 0) {
      this.options.logger.info("upstream keeps failing; waiting before starting it again", { server, delayMs: delay, consecutiveFailures: backoff.failures });
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (this.refusal !== undefined) throw new Error(this.refusal);
    }
    const id = `${server}-${++this.counter}`;
    const info: SessionInfo = { server, kind, id };
    const logger = this.options.logger.child({ server, session: id });
    const upstream = this.options.createUpstream(server, entry.config, logger);
    const bridge = new Bridge({
      host,
      upstream: upstream.transport,
      logger,
      requestTimeoutMs: this.options.requestTimeoutMs,
      normalization: {
        policy: this.policies.get(server)!,
        ...(this.options.maxTrackedTasks === undefined ? {} : { maxTrackedTasks: this.options.maxTrackedTasks }),
        onNormalized: (event) => this.options.onNormalized?.(event, info),
        onEngineError: (error, method) => logger.error("normalization engine failed; message forwarded unchanged", { method, error: String(error) }),
      },
      ...(upstream.describeEnd === undefined ? {} : { describeUpstreamEnd: () => upstream.describeEnd?.() }),
      onSettled: () => {
        // Called each time the session has no request waiting (after nearly every answer): no
        // copy of an empty set (graceful shutdown is the only waiter).
        if (this.settledWaiters.size > 0) for (const waiter of [...this.settledWaiters]) waiter();
      },
      onUpstreamAlive: () => {
        // It answered: whatever killed its predecessors is over.
        backoff.failures = 0;
        health.consecutiveFailures = 0;
        if (!bridge.isClosed) health.status = "up";
      },
    });
    if (this.refusal !== undefined) bridge.refuseNewRequests(this.refusal);
    this.sessions.set(id, { bridge, info });
    health.sessions++;
    health.sessionsOpened++;
    let failedToStart = false;
    bridge.onclose = () => {
      if (this.sessions.delete(id)) health.sessions--;
      // Only an upstream that ended on its own is a failure; the host leaving, or the proxy
      // ending the child (SIGTERM → "killed by SIGTERM"), is not.
      if (bridge.closeReason === "upstream closed" && !failedToStart) {
        const why = upstream.describeEnd?.() ?? "the upstream connection ended";
        this.noteFailure(server, health, why);
        logger.warn("upstream ended on its own", { reason: why });
      } else if (health.sessions === 0 && health.status === "up") {
        health.status = "idle";
      }
      for (const waiter of [...this.settledWaiters]) waiter();
    };
    try {
      await bridge.start();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      failedToStart = true;
      this.noteFailure(server, health, message);
      logger.error("upstream failed to start", { error: message });
      await bridge.close("upstream failed to start");
      throw error;
    }
    if (restarting) {
      health.restarts++;
      this.options.onUpstreamRestart?.(server);
    }
    // The child may already have died while the host side started: then it stays "down".
    if (!bridge.isClosed && backoff.failures === 0) health.status = "up";
    logger.info("session opened", { kind });
    return bridge;
  }

  private noteFailure(server: string, health: ServerHealth, message: string): void {
    const backoff = this.backoff.get(server)!;
    backoff.failures++;
    backoff.lastFailureAt = this.now();
    health.upstreamFailures++;
    health.consecutiveFailures = backoff.failures;
    health.status = "down";
    health.lastError = message;
    health.lastErrorAt = new Date(this.now()).toISOString();
  }

  healthReport(): { status: "ok" | "degraded"; servers: Record<string, ServerHealth> } {
    const servers = Object.fromEntries([...this.health].map(([name, h]) => [name, { ...h }]));
    const degraded = Object.values(servers).some((h) => h.status === "down");
    return { status: degraded ? "degraded" : "ok", servers };
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.sessions.values()].map(({ bridge }) => bridge.close("proxy shutting down")));
  }
}
