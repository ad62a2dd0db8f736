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
  readonly onNormalized?: (event: NormalizationEvent, session: SessionInfo) => void;
}

export interface ServerHealth {
  status: "up" | "down" | "idle";
  transport: "stdio" | "http";
  sessions: number;
  sessionsOpened: number;
  upstreamFailures: number;
  lastError?: string;
  lastErrorAt?: string;
}

export class SessionManager {
  private readonly sessions = new Map<string, { bridge: Bridge; info: SessionInfo }>();
  private readonly policies = new Map<string, Policy>();
  private readonly health = new Map<string, ServerHealth>();
  private counter = 0;

  constructor(private readonly options: SessionManagerOptions) {
    for (const [name, entry] of options.servers) {
      this.policies.set(name, new Policy(entry.policy));
      this.health.set(name, { status: "idle", transport: isStdioServer(entry.config) ? "stdio" : "http", sessions: 0, sessionsOpened: 0, upstreamFailures: 0 });
    }
  }

  get serverNames(): string[] {
    return [...this.options.servers.keys()];
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Joins a host transport to a fresh upstream connection for `server`. Rejects if the upstream cannot start. */
  async open(host: ProxyTransport, server: string, kind: string): Promise<Bridge> {
    const entry = this.options.servers.get(server);
    const health = this.health.get(server);
    if (entry === undefined || health === undefined) throw new Error(`no server named ${server}`);
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
        onNormalized: (event) => this.options.onNormalized?.(event, info),
        onEngineError: (error, method) => logger.error("normalization engine failed; message forwarded unchanged", { method, error: String(error) }),
      },
      ...(upstream.describeEnd === undefined ? {} : { describeUpstreamEnd: () => upstream.describeEnd?.() }),
    });
    this.sessions.set(id, { bridge, info });
    health.sessions++;
    health.sessionsOpened++;
    bridge.onclose = () => {
      if (this.sessions.delete(id)) health.sessions--;
      const why = upstream.describeEnd?.();
      if (why !== undefined && /exit|signal|refused|unreachable|failed/i.test(why)) this.noteFailure(health, why);
      else if (health.sessions === 0 && health.status === "up") health.status = "idle";
    };
    try {
      await bridge.start();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.noteFailure(health, message);
      logger.error("upstream failed to start", { error: message });
      await bridge.close("upstream failed to start");
      throw error;
    }
    health.status = "up";
    logger.info("session opened", { kind });
    return bridge;
  }

  private noteFailure(health: ServerHealth, message: string): void {
    health.upstreamFailures++;
    health.status = "down";
    health.lastError = message;
    health.lastErrorAt = new Date().toISOString();
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
