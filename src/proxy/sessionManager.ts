/**
 * Host sessions and their upstream connections: each host session gets its own upstream
 * connection (for a stdio upstream, its own child process), ended when the session ends.
 * Also the source of `/healthz`.
 */
import { isDeepStrictEqual } from "node:util";
import { DEFAULT_LIMITS } from "../config/defaults.js";
import { isStdioServer } from "../config/serverKind.js";
import type { ServerConfig } from "../config/schema.js";
import type { Logger } from "../observe/logger.js";
import { quietWhen } from "../observe/quietWhen.js";
import { Policy, type PolicyOptions } from "../normalize/policy.js";
import type { FramingProblem, ProxyTransport, UpstreamTransport } from "../transports/types.js";
import type { UpstreamTransportKind } from "../transports/upstream/index.js";
import { transportOfServer, type UpstreamFactory } from "./upstreamFactory.js";
import { Bridge } from "./bridge.js";
import { StatelessPool, type PooledUpstream } from "./statelessPool.js";
import type { NormalizationEvent } from "../normalize/change.js";
import { NormalizingTransport } from "./withNormalization.js";
import type { RequestTable } from "./requestTable.js";
import type { FitPolicy, FitPolicyOptions } from "../fit/fitPolicy.js";
import type { FitRuntime } from "../fit/runtime.js";
import { defaultFitRuntime, fitPolicyOf } from "./defaultFit.js";
import { SpillStore } from "../fit/spill/spillStore.js";
import { UpstreamPages } from "../fit/spill/upstreamPages.js";
import type { FitOptions } from "./fitStage.js";

export interface ServerEntry {
  readonly config: ServerConfig;
  readonly policy: PolicyOptions;
  /** Fitting results to the host (images, embedded resources, long results); off when absent. */
  readonly fit?: FitPolicyOptions;
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
  /** `limits.initializeTimeoutMs` of every session (see Bridge). */
  readonly initializeTimeoutMs?: number;
  /** `limits.hostBufferBytes` and `limits.upstreamBufferBytes` of every session (see Bridge). */
  readonly hostBufferBytes?: number;
  /** `limits.maxUpstreamRequests` of every session (see Bridge). */
  readonly maxUpstreamRequests?: number;
  /** `limits.maxHostRequests` of every session (see Bridge). */
  readonly maxHostRequests?: number;
  readonly upstreamBufferBytes?: number;
  /** `limits.maxTrackedTasks`: task ids remembered per session for `tasks/result`. */
  readonly maxTrackedTasks?: number;
  readonly onNormalized?: (event: NormalizationEvent, session: SessionInfo) => void;
  /**
   * After a stdio upstream died on its own (or failed to start), the next one for that server
   * starts only after this wait, doubled per consecutive failure up to `maxRestartBackoffMs`
   * ("a stdio upstream that keeps dying is restarted with backoff"). Default: `limits.restartBackoffMs`'s.
   */
  readonly restartBackoffMs?: number;
  /** Cap of the doubling backoff. Default: `limits.maxRestartBackoffMs`'s. */
  readonly maxRestartBackoffMs?: number;
  /** Called each time an upstream is started again after a failure (`mcp_normalizer_upstream_restarts_total`). */
  readonly onUpstreamRestart?: (server: string) => void;
  /** Most messages in one host batch (`limits.maxBatch`); default `limits.maxBatch`'s. */
  readonly maxBatch?: number;
  /** Upstreams per server (and bearer token) serving stateless requests (`limits.statelessPoolSize`). */
  readonly statelessPoolSize?: number;
  /** Longest a pooled upstream is held for one slow stateless host (`limits.statelessHoldMs`). */
  readonly statelessHoldMs?: number;
  /** A pooled upstream with nothing in flight for this long is ended (`limits.sessionIdleMs`). */
  readonly statelessIdleMs?: number;
  /** Clock and timer (tests). */
  readonly now?: () => number;
  /** The image queue and page memory shared by every session (needed when a server fits results). */
  readonly fitRuntime?: FitRuntime;
}

/** Per-server restart state: consecutive failures and when the last one happened. */
interface Backoff {
  failures: number;
  lastFailureAt: number;
}

export interface ServerHealth {
  status: "up" | "down" | "idle";
  transport: "stdio" | UpstreamTransportKind;
  sessions: number;
  /** Upstreams of the stateless pools (running or starting). */
  statelessUpstreams: number;
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
  /** Stateless pools by server and owner (bearer token digest): clients never share an upstream. */
  private readonly pools = new Map<string, StatelessPool>();
  private readonly servers: Map<string, ServerEntry>;
  private readonly policies = new Map<string, Policy>();
  private readonly fitPolicies = new Map<string, FitPolicy>();
  private readonly health = new Map<string, ServerHealth>();
  private readonly backoff = new Map<string, Backoff>();
  private readonly settledWaiters = new Set<() => void>();
  /** Per server, how many new entries SIGHUP has brought it (what a start was started from). */
  private readonly entryChanges = new Map<string, number>();
  /** Per server, the starts waiting out its restart delay: a new entry for it ends their wait. */
  private readonly restartWaits = new Map<string, Set<() => void>>();
  /** Sessions whose host waits while their upstream waits out its restart delay: requests in flight too. */
  private waitingToStart = 0;
  /**
   * Sessions whose upstream is still starting (a remote server being reached), and their
   * server: a shutdown refuses them at once, and waits for their hosts to have been told.
   */
  private readonly starting = new Map<Bridge, string>();
  private readonly now: () => number;
  private refusal: string | undefined;
  private counter = 0;

  constructor(private readonly options: SessionManagerOptions) {
    this.now = options.now ?? Date.now;
    this.servers = new Map(options.servers);
    for (const [name, entry] of options.servers) {
      this.policies.set(name, new Policy(entry.policy));
      this.setFitPolicy(name, entry);
      this.health.set(name, {
        status: "idle",
        transport: upstreamKindOf(entry.config),
        sessions: 0,
        statelessUpstreams: 0,
        sessionsOpened: 0,
        upstreamFailures: 0,
        consecutiveFailures: 0,
        restarts: 0,
      });
      this.backoff.set(name, { failures: 0, lastFailureAt: 0 });
    }
  }

  /** Host requests still waiting for an upstream, over every session. */
  get waitingRequests(): number {
    let total = this.waitingToStart + this.starting.size;
    for (const { bridge } of this.sessions.values()) total += bridge.waitingCount;
    for (const pool of this.pools.values()) total += pool.waitingCount;
    return total;
  }

  /**
   * Graceful shutdown, step 1: no new sessions, no new requests on live ones (both
   * answered with an error naming the reason); requests in flight go on.
   */
  refuseNew(why: string): void {
    this.refusal = why;
    for (const { bridge } of this.sessions.values()) bridge.refuseNewRequests(why);
    for (const pool of this.pools.values()) pool.refuseNewRequests(why);
    // Starts waiting out a restart delay stop waiting: they are refused now, with this reason.
    for (const waits of [...this.restartWaits.values()]) for (const wake of [...waits]) wake();
    // Starts still reaching their upstream end now: their hosts get the reason, as above.
    for (const [bridge, server] of this.starting)
      void bridge.close("proxy shutting down", `Could not connect server "${server}": ${why}`);
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

  /** A graceful shutdown waiting in `drain` looks again whether anything is in flight. */
  private wakeDrain(): void {
    // Called after nearly every answer: no copy of an empty set (the shutdown is the only waiter).
    if (this.settledWaiters.size > 0) for (const waiter of [...this.settledWaiters]) waiter();
  }

  /** How long the next upstream of `server` waits (0 unless stdio upstreams keep dying). */
  restartDelayMs(server: string): number {
    const state = this.backoff.get(server);
    const entry = this.servers.get(server);
    if (state === undefined || entry === undefined || state.failures === 0 || !isStdioServer(entry.config)) return 0;
    const base = this.options.restartBackoffMs ?? DEFAULT_LIMITS.restartBackoffMs;
    const cap = this.options.maxRestartBackoffMs ?? DEFAULT_LIMITS.maxRestartBackoffMs;
    const wait = Math.min(cap, base * 2 ** Math.min(state.failures - 1, 30));
    return Math.max(0, state.lastFailureAt + wait - this.now());
  }

  get serverNames(): string[] {
    return [...this.servers.keys()];
  }

  /**
   * SIGHUP: servers re-read from the config apply to sessions opened from now on;
   * live sessions keep the upstream and policy they started with. Names cannot be added or
   * removed without a restart (the listener's routes are fixed): those are returned as ignored.
   *
   * A server whose entry changed starts afresh: its restart backoff and health are reset (the
   * failures were the old config's: the first session after a fix must not wait them out), and
   * the stateless pools' upstreams started from the old entry take no new requests and end once
   * idle — under steady traffic they would otherwise run the old command, env and headers for
   * as long as the traffic lasts.
   */
  reconfigure(servers: ReadonlyMap<string, ServerEntry>): { updated: string[]; changed: string[]; ignored: string[] } {
    const updated: string[] = [];
    const changed: string[] = [];
    const ignored: string[] = [];
    for (const [name, entry] of servers) {
      const before = this.servers.get(name);
      if (before === undefined) {
        ignored.push(name);
        continue;
      }
      this.servers.set(name, entry);
      this.policies.set(name, new Policy(entry.policy));
      this.setFitPolicy(name, entry);
      updated.push(name);
      if (isDeepStrictEqual(before, entry)) continue;
      changed.push(name);
      this.startAfresh(name, entry);
    }
    for (const name of this.servers.keys()) if (!servers.has(name)) ignored.push(name);
    return { updated, changed, ignored };
  }

  private startAfresh(name: string, entry: ServerEntry): void {
    this.backoff.set(name, { failures: 0, lastFailureAt: 0 });
    this.entryChanges.set(name, this.entryOf(name) + 1);
    // Starts waiting out the old entry's delay go now, with the new entry.
    for (const wake of [...(this.restartWaits.get(name) ?? [])]) wake();
    const health = this.health.get(name)!;
    health.transport = upstreamKindOf(entry.config);
    health.consecutiveFailures = 0;
    if (health.status === "down") health.status = health.sessions + health.statelessUpstreams > 0 ? "up" : "idle";
    const prefix = `${name}\u0000`;
    for (const [key, pool] of this.pools)
      if (key.startsWith(prefix)) pool.retireUpstreams("the server's config changed");
  }

  get size(): number {
    return this.sessions.size;
  }

  private setFitPolicy(name: string, entry: ServerEntry): void {
    const policy = entry.fit === undefined ? undefined : fitPolicyOf(entry.fit);
    if (policy?.active) this.fitPolicies.set(name, policy);
    else this.fitPolicies.delete(name);
  }

  /** Joins a host transport to a fresh upstream connection for `server`. Rejects if the upstream cannot start. */
  async open(host: ProxyTransport, server: string, kind: string): Promise<Bridge> {
    const health = this.health.get(server);
    if (!this.servers.has(server) || health === undefined) throw new Error(`no server named ${server}`);
    if (this.refusal !== undefined) throw new Error(this.refusal);
    this.waitingToStart++;
    try {
      await this.waitToRestart(server);
    } finally {
      this.waitingToStart--;
      // After the refusal below has reached its host (a later turn of the loop): then a drain may end.
      if (this.settledWaiters.size > 0) setImmediate(() => this.wakeDrain());
    }
    if (this.refusal !== undefined) throw new Error(this.refusal);
    // Read after the wait: a SIGHUP meanwhile may have brought a new entry (and a fresh start).
    const entry = this.servers.get(server)!;
    const changes = this.entryOf(server);
    const backoff = this.backoff.get(server)!;
    const restarting = backoff.failures > 0;
    const id = `${server}-${++this.counter}`;
    const info: SessionInfo = { server, kind, id };
    const logger = this.sessionLogger({ server, session: id });
    const upstream = this.createUpstream(server, entry.config, health, logger);
    const bridge = new Bridge({
      host,
      upstream,
      logger,
      requestTimeoutMs: this.options.requestTimeoutMs,
      ...(this.options.initializeTimeoutMs === undefined
        ? {}
        : { initializeTimeoutMs: this.options.initializeTimeoutMs }),
      ...(this.options.maxBatch === undefined ? {} : { maxBatch: this.options.maxBatch }),
      ...(this.options.maxUpstreamRequests === undefined
        ? {}
        : { maxUpstreamRequests: this.options.maxUpstreamRequests }),
      ...(this.options.maxHostRequests === undefined ? {} : { maxHostRequests: this.options.maxHostRequests }),
      ...(this.options.hostBufferBytes === undefined ? {} : { hostBufferBytes: this.options.hostBufferBytes }),
      ...(this.options.upstreamBufferBytes === undefined
        ? {}
        : { upstreamBufferBytes: this.options.upstreamBufferBytes }),
      normalization: {
        policy: this.policies.get(server)!,
        ...(this.options.maxTrackedTasks === undefined ? {} : { maxTrackedTasks: this.options.maxTrackedTasks }),
        onNormalized: (event) => this.options.onNormalized?.(event, info),
        onEngineError: (error, method) =>
          logger.error("normalization engine failed; message forwarded unchanged", { method, error: String(error) }),
        ...this.fitOptions(server),
      },
      describeUpstreamEnd: () => upstream.describeEnd(),
      // Called each time the session has no request waiting (after nearly every answer).
      onSettled: () => this.wakeDrain(),
      onInitializeFailed: (why) =>
        void this.startFailed(server, health, logger, why, this.isCurrentEntry(server, changes)),
      onUpstreamAlive: () => {
        if (!this.isCurrentEntry(server, changes)) return;
        this.noteAnswered(server, health);
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
      // Ended by the proxy itself (idle, a dead connection): the operator sees why.
      const reaped = (host as { endReason?: string }).endReason;
      if (reaped !== undefined) logger.info("session reaped", { kind, reason: reaped });
      // Only an upstream that ended on its own is a failure; the host leaving, or the proxy
      // ending the child (SIGTERM → "killed by SIGTERM"), is not.
      if (bridge.closeReason === "upstream closed" && !failedToStart) {
        const why = upstream.describeEnd() ?? "the upstream connection ended";
        // A server that ended its session (restarted, expired it) still answers: shown, not counted as down.
        if (upstream.endedBySession?.() === true) this.noteSessionEnded(health, why);
        else this.noteFailure(server, health, why, this.isCurrentEntry(server, changes));
        logger.warn("upstream ended on its own", { reason: why });
      }
      // (A failure of the running entry has marked it down; one of an entry replaced since has not.)
      if (health.sessions === 0 && health.status === "up") health.status = "idle";
      this.wakeDrain();
    };
    this.starting.set(bridge, server);
    try {
      await bridge.start();
    } catch (error) {
      failedToStart = true;
      // Ended by a shutdown while it started: its host was told why; no start failed.
      if (this.refusal !== undefined && bridge.isClosed) throw new Error(this.refusal);
      // The host left while its upstream was opening (which that ended): the upstream did not fail.
      if (bridge.closeReason === "host closed") {
        logger.debug("host left while its upstream started", { kind });
        throw error;
      }
      const message = this.startFailed(server, health, logger, error, this.isCurrentEntry(server, changes));
      await bridge.close("upstream failed to start", `Could not connect server "${server}": ${message}`);
      throw error;
    } finally {
      this.starting.delete(bridge);
      // After the refusal has reached its host (a later turn of the loop): then a drain may end.
      if (this.settledWaiters.size > 0) setImmediate(() => this.wakeDrain());
    }
    // A shutdown ended it as its upstream answered: refused as above, not opened.
    if (this.refusal !== undefined && bridge.isClosed) throw new Error(this.refusal);
    if (restarting) {
      health.restarts++;
      this.options.onUpstreamRestart?.(server);
    }
    // The child may already have died while the host side started: then it stays "down".
    if (!bridge.isClosed && backoff.failures === 0) health.status = "up";
    logger.info("session opened", { kind });
    return bridge;
  }

  /**
   * The server's upstream transport. One that cannot even be made (a URL Node cannot parse) is a
   * start that failed: logged, and on /healthz, before the host is told.
   */
  private createUpstream(
    server: string,
    config: ServerConfig,
    health: ServerHealth,
    logger: Logger,
  ): UpstreamTransport {
    try {
      return this.options.createUpstream(server, config, logger);
    } catch (error) {
      // Made at once from the entry just read: the entry in force.
      this.startFailed(server, health, logger, error, true);
      throw error;
    }
  }

  /** A start that failed: on /healthz and in the log. Returns why, for the host. */
  private startFailed(server: string, health: ServerHealth, logger: Logger, error: unknown, current: boolean): string {
    const message = error instanceof Error ? error.message : String(error);
    this.noteFailure(server, health, message, current);
    logger.error("upstream failed to start", { error: message });
    return message;
  }

  /**
   * A stateless host's answer over the limit, never read: the pool of `server` for `owner` (if
   * it has one) tells the upstream that asked. Another client's pool has no such question.
   */
  statelessAnswerTooLarge(problem: FramingProblem, server: string, owner: string): void {
    this.pools.get(`${server}\u0000${owner}`)?.hostAnswerTooLarge(problem);
  }

  /**
   * Serves one stateless host POST (no session: protocol 2026-07-28) from the pool of `server`
   * for `owner` (the digest of its bearer token, "" without auth). Rejects when no upstream can
   * be started.
   */
  async openStateless(host: ProxyTransport, server: string, owner: string): Promise<void> {
    const entry = this.servers.get(server);
    if (entry === undefined) throw new Error(`no server named ${server}`);
    if (this.refusal !== undefined) throw new Error(this.refusal);
    const key = `${server}\u0000${owner}`;
    let pool = this.pools.get(key);
    if (pool === undefined) {
      // Pages of cut results belong to the client, not to one upstream: any of the pool's
      // upstreams may serve the POST that reads the next page. They go with the pool.
      const pages = new SpillStore((this.options.fitRuntime ?? defaultFitRuntime()).spill, "client");
      const upstreamPages = new UpstreamPages();
      const created: StatelessPool = new StatelessPool({
        server,
        size: this.options.statelessPoolSize ?? DEFAULT_LIMITS.statelessPoolSize,
        idleMs: this.options.statelessIdleMs ?? DEFAULT_LIMITS.sessionIdleMs,
        requestTimeoutMs: this.options.requestTimeoutMs,
        maxUpstreamRequests: this.options.maxUpstreamRequests ?? DEFAULT_LIMITS.maxUpstreamRequests,
        ...(this.options.hostBufferBytes === undefined ? {} : { hostBufferBytes: this.options.hostBufferBytes }),
        ...(this.options.statelessHoldMs === undefined ? {} : { holdMs: this.options.statelessHoldMs }),
        logger: this.options.logger.child({ server, pool: "stateless" }),
        pages,
        upstreamPages,
        startUpstream: (requests) => this.startPooledUpstream(server, pages, upstreamPages, requests),
        onUpstreamEnded: (upstream, onItsOwn) => {
          const health = this.health.get(server)!;
          health.statelessUpstreams--;
          if (onItsOwn)
            this.noteFailure(
              server,
              health,
              upstream.describeEnd() ?? "the upstream connection ended",
              upstream.fromCurrentEntry?.() !== false,
            );
          // The pool goes with its last upstream: no map entry per client that has gone.
          if (created.upstreams === 0 && this.pools.get(key) === created) {
            this.pools.delete(key);
            pages.close();
          }
          this.wakeDrain();
        },
        onUpstreamAnswer: (upstream, refused) => {
          const health = this.health.get(server)!;
          const current = upstream.fromCurrentEntry?.() !== false;
          if (refused !== undefined) return this.noteFailure(server, health, refused, current);
          if (!current || health.consecutiveFailures === 0) return;
          this.noteAnswered(server, health);
          health.status = "up";
        },
        onSettled: () => this.wakeDrain(),
      });
      pool = created;
      this.pools.set(key, pool);
      if (this.refusal !== undefined) pool.refuseNewRequests(this.refusal);
    }
    await pool.serve(host);
  }

  /**
   * Waits out `server`'s restart delay, if it has one (logged); a new entry for it (SIGHUP) ends
   * the wait at once: the fixed server is started without waiting out the broken one's backoff.
   */
  private waitToRestart(server: string): Promise<void> {
    const delay = this.restartDelayMs(server);
    if (delay <= 0) return Promise.resolve();
    this.options.logger.info("upstream keeps failing; waiting before starting it again", {
      server,
      delayMs: delay,
      consecutiveFailures: this.backoff.get(server)!.failures,
    });
    const own = this.restartWaits.get(server) ?? new Set<() => void>();
    this.restartWaits.set(server, own);
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        own.delete(done);
        if (own.size === 0 && this.restartWaits.get(server) === own) this.restartWaits.delete(server);
        resolve();
      };
      const timer = setTimeout(done, delay);
      own.add(done);
    });
  }

  /** One started, normalizing upstream for a stateless pool (restart backoff and health as for sessions). */
  private async startPooledUpstream(
    server: string,
    pages: SpillStore,
    upstreamPages: UpstreamPages,
    requests: RequestTable,
  ): Promise<PooledUpstream> {
    await this.waitToRestart(server);
    if (this.refusal !== undefined) throw new Error(this.refusal);
    // Read after the wait: a SIGHUP meanwhile may have brought a new entry (and a fresh start).
    const entry = this.servers.get(server)!;
    const health = this.health.get(server)!;
    const backoff = this.backoff.get(server)!;
    const changes = this.entryOf(server);
    const id = `${server}-stateless-${++this.counter}`;
    const info: SessionInfo = { server, kind: "streamable-http (stateless)", id };
    const logger = this.sessionLogger({ server, session: id });
    const upstream = this.createUpstream(server, entry.config, health, logger);
    const transport = new NormalizingTransport(
      upstream,
      {
        policy: this.policies.get(server)!,
        ...(this.options.maxTrackedTasks === undefined ? {} : { maxTrackedTasks: this.options.maxTrackedTasks }),
        ...this.fitOptions(server, pages, upstreamPages),
        onNormalized: (event) => this.options.onNormalized?.(event, info),
        onEngineError: (error, method) =>
          logger.error("normalization engine failed; message forwarded unchanged", { method, error: String(error) }),
      },
      requests,
    );
    health.statelessUpstreams++;
    try {
      await transport.start();
    } catch (error) {
      health.statelessUpstreams--;
      this.startFailed(server, health, logger, error, this.isCurrentEntry(server, changes));
      await transport.close().catch(() => {});
      throw error;
    }
    if (backoff.failures === 0) health.status = "up";
    return {
      id,
      transport,
      describeEnd: () => upstream.describeEnd(),
      fromCurrentEntry: () => this.isCurrentEntry(server, changes),
    };
  }

  /** The fit layer of a new connection to `server`, when its policy asks for anything. */
  private fitOptions(server: string, store?: SpillStore, upstreamPages?: UpstreamPages): { fit?: FitOptions } {
    const policy = this.fitPolicies.get(server);
    if (policy === undefined) return {};
    return {
      fit: {
        policy,
        ...(this.options.fitRuntime === undefined ? {} : { runtime: this.options.fitRuntime }),
        ...(store === undefined ? {} : { store }),
        ...(upstreamPages === undefined ? {} : { upstreamPages }),
      },
    };
  }

  /**
   * The log of one session and its upstream. Once the proxy is shutting down, what upstreams
   * do as they go away (refused connections, streams cut) is expected: debug, not warn.
   */
  private sessionLogger(fields: Record<string, unknown>): Logger {
    return quietWhen(this.options.logger.child(fields), () => this.refusal !== undefined);
  }

  /**
   * An upstream of `server` failed. `current`: it was started from the entry in force; one a
   * SIGHUP has since replaced is the old entry's failure, not the running one's — counted and
   * shown as the last error, but it neither delays the next start nor marks the server down.
   */
  private noteFailure(server: string, health: ServerHealth, message: string, current: boolean): void {
    // An upstream that goes away while the proxy stops is no failure of the server.
    if (this.refusal !== undefined) return;
    health.upstreamFailures++;
    health.lastError = message;
    health.lastErrorAt = new Date(this.now()).toISOString();
    if (!current) return;
    const backoff = this.backoff.get(server)!;
    backoff.failures++;
    backoff.lastFailureAt = this.now();
    health.consecutiveFailures = backoff.failures;
    health.status = "down";
  }

  /** The server ended a session of its own accord: named as the last error on /healthz, no failure. */
  private noteSessionEnded(health: ServerHealth, message: string): void {
    if (this.refusal !== undefined) return;
    health.lastError = message;
    health.lastErrorAt = new Date(this.now()).toISOString();
  }

  /**
   * An upstream of `server` running the entry in force answered: whatever failed before is over,
   * and the next start waits no restart backoff.
   */
  private noteAnswered(server: string, health: ServerHealth): void {
    this.backoff.get(server)!.failures = 0;
    health.consecutiveFailures = 0;
  }

  /** How many new entries SIGHUP has brought `server`: what an upstream was started from. */
  private entryOf(server: string): number {
    return this.entryChanges.get(server) ?? 0;
  }

  /** Whether an upstream started from entry `changes` of `server` runs the entry in force. */
  private isCurrentEntry(server: string, changes: number): boolean {
    return this.entryOf(server) === changes;
  }

  healthReport(): { status: "ok" | "degraded"; servers: Record<string, ServerHealth> } {
    const servers = Object.fromEntries([...this.health].map(([name, h]) => [name, { ...h }]));
    const degraded = Object.values(servers).some((h) => h.status === "down");
    return { status: degraded ? "degraded" : "ok", servers };
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled([
      ...[...this.sessions.values()].map(({ bridge }) => bridge.close("proxy shutting down")),
      ...[...this.pools.values()].map((pool) => pool.closeAll()),
    ]);
  }
}

/** How a server is reached, as `/healthz` shows it: a child's stdio, or the remote transport its entry names. */
function upstreamKindOf(config: ServerConfig): ServerHealth["transport"] {
  if (isStdioServer(config)) return "stdio";
  try {
    return transportOfServer(config) ?? "stdio";
  } catch {
    // A URL Node cannot parse: its start fails, and says so.
    return "streamable-http";
  }
}
