/**
 * Each direction of a bridge kept bounded in memory: when the host has more than
 * `hostBufferBytes` sent to it and not taken, the upstream is no longer read until the host has
 * taken some (the upstream's own writes then block), and the same the other way with
 * `upstreamBufferBytes`. A host that sends without reading its answers is not read either until
 * it has taken them. The check is one comparison per message; waiting is one promise per stall.
 */
import type { ProxyTransport } from "../transports/types.js";

/** The upstream side, which always says what it holds and can stop reading (the normalizing transport). */
export interface HeldUpstream {
  readonly queuedBytes: number;
  whenDrained(): Promise<void>;
  pauseReading(): void;
  resumeReading(): void;
}

export interface FlowLimits {
  readonly hostBufferBytes: number;
  readonly upstreamBufferBytes: number;
}

export class FlowHolds {
  /** The upstream is not read: the host is behind. */
  private upstreamHeld = false;
  /** The host is not read: the upstream is behind. */
  private hostHeld = false;
  /** The host is not read: it is behind on what was sent to it. */
  private hostBehind = false;

  constructor(
    private readonly host: ProxyTransport,
    private readonly upstream: HeldUpstream,
    private readonly limits: FlowLimits,
    /** True once the bridge has closed: nothing is held or released any more. */
    private readonly closed: () => boolean,
  ) {}

  /** After a send to the upstream: its backlog over the limit holds the host. */
  sentUpstream(): void {
    if (!this.hostHeld && this.upstream.queuedBytes > this.limits.upstreamBufferBytes) this.holdHost();
  }

  /** After a send to the host: its backlog over the limit holds the upstream, and the host itself. */
  sentToHost(): void {
    if ((this.host.queuedBytes ?? 0) <= this.limits.hostBufferBytes) return;
    if (!this.upstreamHeld) this.holdUpstream();
    // What the proxy answers itself (refusals, errors) never comes from the upstream: a host
    // that sends without reading is not read either until it has taken its answers.
    if (!this.hostBehind) this.holdBehindHost();
  }

  /** The host is behind: stop reading the upstream until the host has taken some of it. */
  private holdUpstream(): void {
    const drained = this.host.whenDrained?.();
    if (drained === undefined || this.closed()) return;
    this.upstreamHeld = true;
    this.upstream.pauseReading();
    void drained.then(this.releaseUpstream);
  }

  private readonly releaseUpstream = (): void => {
    this.upstreamHeld = false;
    // A message after this one finds the host still behind and holds the upstream again.
    if (!this.closed()) this.upstream.resumeReading();
  };

  /** The upstream is behind: stop reading the host until the upstream has taken some of it. */
  private holdHost(): void {
    if (this.host.pauseReading === undefined || this.closed()) return;
    this.hostHeld = true;
    this.host.pauseReading(false);
    void this.upstream.whenDrained().then(this.releaseHost);
  }

  private readonly releaseHost = (): void => {
    this.hostHeld = false;
    if (!this.closed() && !this.hostBehind) this.host.resumeReading?.();
  };

  /** The host is behind on its own answers: stop reading it until it has taken some of them. */
  private holdBehindHost(): void {
    const drained = this.host.whenDrained?.();
    if (drained === undefined || this.host.pauseReading === undefined || this.closed()) return;
    this.hostBehind = true;
    // Unless the upstream holds it too, a WebSocket host is still judged alive by what it takes.
    this.host.pauseReading(!this.hostHeld);
    void drained.then(this.releaseBehindHost);
  }

  private readonly releaseBehindHost = (): void => {
    this.hostBehind = false;
    if (this.closed()) return;
    // Still held for the upstream: paused for that reason alone now.
    if (this.hostHeld) this.host.pauseReading?.(false);
    else this.host.resumeReading?.();
  };
}
